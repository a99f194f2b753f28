package agent

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// A warm session is a sandbox session started ahead of the next Run or
// Test (Prewarm): its setup phase has run, its runtime version was
// checked and the workspace as it was then has been synced. The next Run
// or Test whose snapshot has the same setup inputs takes it instead of
// starting its own, and syncs it to its own snapshot first (only the
// files that changed are sent), so no test ever runs on the tree the
// session was warmed with. A snapshot whose setup inputs differ (a
// manifest, a lockfile, the runtime requirement, the image) drops the
// warm session and starts cold, with a new setup phase.
//
// Invariants: at most one warm session per Engine; a warm session is
// tracked in Engine.sessions once started, so Close removes it; a
// session taken by a Run is no longer warm.
type warmSession struct {
	key     string
	trusted bool // started for Test only (PrewarmTests): it has the runner cache
	cancel  context.CancelFunc
	ready   chan struct{} // closed when the start ended; sess, done, err are set before
	sess    sandbox.Session
	done    func() // closes sess (from startPrepared)
	err     error
	// Guarded by Engine.mu: the start's last progress line, and the
	// progress of the starts waiting for it (takeWarm), which see its
	// lines as their own: a run that waits for a long first setup (Go's
	// standard library compiled) shows it going on, not a static message.
	last     string
	watchers map[int]func(string)
	nextW    int
}

// warmReport is the progress of w's start: progress, and every start
// waiting for w.
func (e *Engine) warmReport(w *warmSession, progress func(string)) func(string) {
	return func(line string) {
		e.mu.Lock()
		w.last = line
		ws := make([]func(string), 0, len(w.watchers))
		for _, f := range w.watchers {
			ws = append(ws, f)
		}
		e.mu.Unlock()
		if progress != nil {
			progress(line)
		}
		for _, f := range ws {
			f(line)
		}
	}
}

// ErrWarmReplaced is returned by Prewarm when Cool, Close or a newer
// Prewarm with other setup inputs ended it before it was ready, or the
// Engine was already closed.
var ErrWarmReplaced = errors.New("warm session dropped before it was ready")

// Prewarm starts a session for the workspace at root (with overlays, the
// unsaved buffers) and keeps it for the next Run or Test: the setup
// phase, the runtime version check and the first sync happen now rather
// than when the user asks for something. progress receives the setup
// phase's lines (nil discards). It returns when the session is ready or
// the start failed; a failure is returned (the next Run or Test then
// starts cold and reports it in its own words). Cancelling ctx abandons
// the start.
//
// A warm session with the same setup inputs is kept (Prewarm returns
// nil at once); one with other inputs is closed first.
func (e *Engine) Prewarm(ctx context.Context, root string, overlays map[string][]byte, progress func(string)) error {
	return e.prewarm(ctx, root, overlays, progress, false)
}

// PrewarmTests is Prewarm for a session that only Test may take: it is
// started as Test starts its own (the user's code only, so with the test
// runners' caches, Spec.RunnerCache), and a Run drops it instead of
// taking it, since model-written code must not leave entries in those
// caches for a later verdict. `fixpoint test --keep-warm` keeps one ready
// between runs.
func (e *Engine) PrewarmTests(ctx context.Context, root string, progress func(string)) error {
	return e.prewarm(ctx, root, nil, progress, true)
}

func (e *Engine) prewarm(ctx context.Context, root string, overlays map[string][]byte, progress func(string), trusted bool) error {
	if progress == nil {
		progress = func(string) {}
	}
	if e.opts.Backend == nil {
		return fmt.Errorf("prewarm: %w: no backend configured", sandbox.ErrUnavailable)
	}
	snap, err := sandbox.SnapshotDir(root, SnapshotOptions(e.cfg))
	if err != nil {
		return fmt.Errorf("prewarm: %w", err)
	}
	snap, _ = snap.WithOverlays(overlays)
	proj := e.newProject(snap)
	key := warmKey(e.cfg, proj)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w := &warmSession{key: key, trusted: trusted, cancel: cancel, ready: make(chan struct{})}
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return fmt.Errorf("prewarm: %w", ErrWarmReplaced)
	}
	old := e.warm
	if old != nil && old.key == key && old.trusted == trusted && old.err == nil {
		e.mu.Unlock()
		select {
		case <-old.ready:
			return old.err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	e.warm = w
	e.mu.Unlock()
	if old != nil {
		old.drop()
	}
	// A warm session that may serve a fix run has no runner cache.
	sess, done, err := e.startCold(ctx, proj, e.warmReport(w, progress), false, cacheFor(trusted))
	if err == nil {
		if _, err = sess.Sync(ctx, snap); err != nil {
			done()
			err = fmt.Errorf("sync workspace: %w", err)
		}
	}
	e.mu.Lock()
	current := e.warm == w && !e.closed
	if err == nil && !current {
		err = ErrWarmReplaced
	}
	if err == nil {
		w.sess, w.done = sess, done
	} else if current {
		e.warm = nil
	}
	w.err = err
	close(w.ready)
	e.mu.Unlock()
	if err != nil && sess != nil && !current {
		done() // dropped while starting: nobody else will close it
	}
	if err != nil {
		return fmt.Errorf("prewarm: %w", err)
	}
	return nil
}

// Cool closes the warm session, or abandons the one being started. It
// reports whether there was one.
func (e *Engine) Cool() bool {
	e.mu.Lock()
	w := e.warm
	e.warm = nil
	e.mu.Unlock()
	if w == nil {
		return false
	}
	w.drop()
	return true
}

// Warm reports whether a warm session is ready for a Run or Test.
func (e *Engine) Warm() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.warm == nil {
		return false
	}
	select {
	case <-e.warm.ready:
		return e.warm.err == nil
	default:
		return false
	}
}

// drop cancels w's start and waits for it to end, or closes its session.
// The caller has already unlinked w from Engine.warm, so a start that was
// under way closes its own session (Prewarm).
func (w *warmSession) drop() {
	w.cancel()
	<-w.ready
	if w.done != nil {
		w.done()
	}
}

// takeWarm hands the warm session to a Run or Test on snap when its setup
// inputs match, waiting for a start in progress. It reports false when
// there is none, it failed, or snap's inputs differ (then it is closed).
// A session started for tests only (PrewarmTests) is closed, not handed,
// when the start is not trusted (a Run's).
func (e *Engine) takeWarm(ctx context.Context, p *project, trusted bool, progress func(string)) (sandbox.Session, func(), bool) {
	e.mu.Lock()
	w := e.warm
	e.mu.Unlock()
	if w == nil {
		return nil, nil, false
	}
	if w.trusted && !trusted {
		e.log.Debug("warm session dropped: it has the runner caches and this run is the model's")
		e.Cool()
		return nil, nil, false
	}
	if w.key != warmKey(e.cfg, p) {
		e.log.Debug("warm session dropped: the setup inputs changed")
		e.Cool()
		return nil, nil, false
	}
	select {
	case <-w.ready:
	default:
		// The start is under way: its progress is this start's too.
		if progress != nil {
			e.mu.Lock()
			id := w.nextW
			w.nextW++
			if w.watchers == nil {
				w.watchers = map[int]func(string){}
			}
			// A line in flight when this start stops waiting (its ctx
			// ended) is finished before takeWarm returns, never after.
			var mu sync.Mutex
			active := true
			watch := func(line string) {
				mu.Lock()
				defer mu.Unlock()
				if active {
					progress(line)
				}
			}
			w.watchers[id] = watch
			last := w.last
			e.mu.Unlock()
			defer func() {
				e.mu.Lock()
				delete(w.watchers, id)
				e.mu.Unlock()
				mu.Lock()
				active = false
				mu.Unlock()
			}()
			if last != "" {
				watch(last)
			}
		}
	}
	select {
	case <-w.ready:
	case <-ctx.Done():
		return nil, nil, false
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.warm != w || w.err != nil {
		return nil, nil, false
	}
	e.warm = nil
	return w.sess, w.done, true
}

// warmKey hashes what decides whether a session started for one snapshot
// serves another: the session spec (image, limits, caches), the setup
// plan (language, runtime requirement, devcontainer image and recipe,
// install step and its inputs' content) and the project's own image
// recipe. Source files are not in it: Sync sends them.
func warmKey(cfg *config.Config, p *project) string {
	h := sha256.New()
	spec, _ := json.Marshal(p.spec)
	h.Write(spec)
	plan, snap := p.plan, p.snap
	if plan.Lang != nil {
		fmt.Fprintf(h, "\x00lang %s", plan.Lang.Name())
	}
	if plan.Requirement != nil {
		fmt.Fprintf(h, "\x00req %+v", *plan.Requirement)
	}
	fmt.Fprintf(h, "\x00image %s\x00dockerfile %s\x00setup %s", plan.Image, plan.Dockerfile, p.setupKey())
	for _, p := range snap.Paths() {
		if strings.HasPrefix(p, ".devcontainer") || (cfg.Sandbox.Dockerfile != "" && p == path.Clean(cfg.Sandbox.Dockerfile)) {
			f := snap.Files[p]
			fmt.Fprintf(h, "\x00%s %s", p, f.Hash())
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil))[:16]
}

package agent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/backends"
	"github.com/fixpoint-dev/fixpoint/sandbox/setup"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// Options are an Engine's dependencies. Model and Backend are required for
// Run; Backend alone is enough for Test.
type Options struct {
	Model   Model           // the chat model; required for Run
	Backend sandbox.Backend // where tests run; required
	// Memory is the failure memory (a *memory.Store); nil turns it off.
	Memory Memory
	// Logger receives debug logs; nil discards.
	Logger *slog.Logger
	// Warn receives user-facing warnings (memory or run log degraded);
	// nil discards.
	Warn io.Writer
	// Approve is asked before a reply's edit that adds dependencies or
	// changes what the setup phase runs ([Approval]) may run; nil refuses.
	Approve func(ctx context.Context, a Approval) (bool, error)
	// PolicyParser parses Python for the policy checks in one persistent
	// process that the caller owns (and closes), shared by every run;
	// nil starts a parser process per checked file.
	PolicyParser lang.PolicyParser
	// CloseInBackground lets Run and Test return before their session is
	// removed (a container removal takes a good part of a second); Close
	// waits for those removals. The daemon that keeps `fixpoint test`
	// warm sets it, so that its client has the report at once.
	CloseInBackground bool
}

// Engine runs the loop for one workspace configuration. An Engine may run
// several requests, one after another or concurrently; each Run has its own
// sandbox session.
type Engine struct {
	cfg  *config.Config
	opts Options
	log  *slog.Logger
	warn io.Writer

	mu       sync.Mutex // guards sessions, closers and warm
	sessions map[sandbox.Session]bool
	closers  []func() error
	warm     *warmSession   // the session Prewarm started for the next Run or Test (warm.go)
	closed   bool           // Close was called: Prewarm starts nothing
	closing  sync.WaitGroup // sessions being closed in the background (CloseInBackground)

	// detected and derived count language detections and project
	// derivations (project.go), for the test that proves one walk does
	// each once.
	detected, derived atomic.Int64
	// setups counts the setup phases run (Engine.prepare), for the test
	// that proves a run prepares its sessions once.
	setups atomic.Int64
}

// New returns an Engine. cfg must be a loaded configuration (config.Load);
// opts may be nil only for Engines that will not Run or Test.
func New(cfg *config.Config, opts *Options) *Engine {
	e := &Engine{cfg: cfg, sessions: map[sandbox.Session]bool{}}
	if opts != nil {
		e.opts = *opts
	}
	e.log = e.opts.Logger
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	e.warn = e.opts.Warn
	if e.warn == nil {
		e.warn = io.Discard
	}
	return e
}

// Config is the engine's configuration.
func (e *Engine) Config() *config.Config { return e.cfg }

// Walks reports how many times the engine has detected a workspace's
// language (lang/registry.Detect) and derived a project from it (its
// session spec, sandbox/backends.SpecFor, and its setup plan,
// sandbox/setup.NewPlan). Each walk — a Run, a Test, a Prewarm — does
// each once, and hands them down; the tests that prove it, here and for a
// code action as the LSP server starts it, read these counts.
func (e *Engine) Walks() (detections, derivations int64) {
	return e.detected.Load(), e.derived.Load()
}

// SandboxName is the name of the sandbox backend tests run in ("docker",
// "bwrap", "none"), "" without one: with sandbox.backend unset it says
// which one answered.
func (e *Engine) SandboxName() string {
	if e.opts.Backend == nil {
		return ""
	}
	return e.opts.Backend.Name()
}

// Close closes every session still running (a Run interrupted by a signal
// closes its own, but Close is the backstop) and what Open created.
func (e *Engine) Close() error {
	e.Cool()
	e.mu.Lock()
	e.closed = true
	sess := e.sessions
	e.sessions = map[sandbox.Session]bool{}
	closers := e.closers
	e.closers = nil
	e.mu.Unlock()
	var errs []error
	for s := range sess {
		if err := s.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	e.closing.Wait()
	for i := len(closers) - 1; i >= 0; i-- {
		if err := closers[i](); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// WaitClosing waits for the sessions being closed in the background
// (Options.CloseInBackground, and a Run's own: closeLater) to be gone.
func (e *Engine) WaitClosing() { e.closing.Wait() }

// closeLater runs done (a session's close) in the background: a run does
// not wait for a container's removal (a good part of a second, and its
// build cache volume with it) between its phases or before it reports its
// result. Close and WaitClosing wait for it, so a caller that closes the
// Engine leaves nothing behind.
func (e *Engine) closeLater(done func()) {
	if done == nil {
		return
	}
	e.closing.Add(1)
	go func() {
		defer e.closing.Done()
		done()
	}()
}

// startSession starts and tracks a session; the returned func closes it.
// The setup phase runs first (prepare), and a runtime version that does
// not satisfy the project's requirement stops here, before any test.
func (e *Engine) startSession(ctx context.Context, p *project, progress func(string)) (sandbox.Session, func(), error) {
	return e.startPrepared(ctx, p, progress, false, false)
}

// startTrusted is startSession for a session that runs only the user's
// own code (fixpoint test): the test runners' caches persist
// (sandbox.Spec.RunnerCache).
func (e *Engine) startTrusted(ctx context.Context, p *project, progress func(string)) (sandbox.Session, func(), error) {
	return e.startPrepared(ctx, p, progress, false, true)
}

// startBaseline is startTrusted for a run's baseline: a warm session
// started for a run (not for tests) is left for the run's working
// session, which needs it, and the baseline starts cold in the user's
// build cache.
func (e *Engine) startBaseline(ctx context.Context, p *project, progress func(string)) (sandbox.Session, func(), error) {
	e.mu.Lock()
	forRun := e.warm != nil && !e.warm.trusted
	e.mu.Unlock()
	if forRun {
		if e.opts.Backend == nil {
			return nil, nil, fmt.Errorf("start sandbox: %w: no backend configured", sandbox.ErrUnavailable)
		}
		return e.startCold(ctx, p, progress, false, sandbox.BuildCacheUser)
	}
	return e.startTrusted(ctx, p, progress)
}

// startSessionNoScripts is startSession for a snapshot the model edited:
// the install step runs with the installer's scripts off.
func (e *Engine) startSessionNoScripts(ctx context.Context, p *project, progress func(string)) (sandbox.Session, func(), error) {
	return e.startPrepared(ctx, p, progress, true, false)
}

func (e *Engine) startPrepared(ctx context.Context, p *project, progress func(string), noScripts, trusted bool) (sandbox.Session, func(), error) {
	if e.opts.Backend == nil {
		return nil, nil, fmt.Errorf("start sandbox: %w: no backend configured", sandbox.ErrUnavailable)
	}
	if !noScripts {
		if sess, done, ok := e.takeWarm(ctx, p, trusted, progress); ok {
			return sess, done, nil
		}
	}
	return e.startCold(ctx, p, progress, noScripts, cacheFor(trusted))
}

// startFresh starts the session that verifies a run's final state
// (run.confirm): never the warm one, with a build cache that starts from
// nothing a model's code wrote and is discarded with it
// (sandbox.BuildCacheFresh). setup and noScripts are the project and
// flag the run's session was prepared with, so that it has the same
// setup phase.
func (e *Engine) startFresh(ctx context.Context, setup *project, progress func(string), noScripts bool) (sandbox.Session, func(), error) {
	if e.opts.Backend == nil {
		return nil, nil, fmt.Errorf("start sandbox: %w: no backend configured", sandbox.ErrUnavailable)
	}
	return e.startCold(ctx, setup, progress, noScripts, sandbox.BuildCacheFresh)
}

// startFreshDeferred is startFresh for a verifying session started while
// the run's baseline is still filling the user's build cache
// (run.prestartEarly): on a backend that honours it
// (sandbox.SeedDeferrer), the session's cache is seeded when the caller
// asks (sandbox.BuildCacheSeeder), once the baseline has ended.
func (e *Engine) startFreshDeferred(ctx context.Context, setup *project, noScripts bool) (sandbox.Session, func(), error) {
	if e.opts.Backend == nil {
		return nil, nil, fmt.Errorf("start sandbox: %w: no backend configured", sandbox.ErrUnavailable)
	}
	return e.startColdSpec(ctx, setup, nil, noScripts, sandbox.BuildCacheFresh, true)
}

// startWorkDeferred is startSession (the scripts on, never the warm
// session) for a working session started while the run's baseline and
// trace still write the user's build cache (run.prestartWorkEarly): its
// cache is seeded when the caller asks, as startFreshDeferred's.
func (e *Engine) startWorkDeferred(ctx context.Context, setup *project) (sandbox.Session, func(), error) {
	if e.opts.Backend == nil {
		return nil, nil, fmt.Errorf("start sandbox: %w: no backend configured", sandbox.ErrUnavailable)
	}
	return e.startColdSpec(ctx, setup, nil, false, cacheFor(false), true)
}

// cacheFor is the build cache of a session that runs only the user's code
// (trusted) or also the model's. The model's sessions start from a copy of
// the user's cache and discard theirs (sandbox.BuildCacheFresh): a run's
// baseline fills the user's cache (run.setup), so its iterations and its
// verifying run recompile only the packages the model's edits change, and
// nothing a model's code writes outlives its session.
func cacheFor(trusted bool) sandbox.BuildCache {
	if trusted {
		return sandbox.BuildCacheUser
	}
	return sandbox.BuildCacheFresh
}

// startCold is startPrepared without the warm session. The test runners'
// own caches persist only in sessions for the user's code (BuildCacheUser).
func (e *Engine) startCold(ctx context.Context, p *project, progress func(string), noScripts bool, cache sandbox.BuildCache) (sandbox.Session, func(), error) {
	return e.startColdSpec(ctx, p, progress, noScripts, cache, false)
}

// startColdSpec is startCold; deferSeed sets sandbox.Spec.DeferSeed.
func (e *Engine) startColdSpec(ctx context.Context, p *project, progress func(string), noScripts bool, cache sandbox.BuildCache, deferSeed bool) (sandbox.Session, func(), error) {
	t0 := time.Now()
	spec, plan, err := e.prepare(ctx, p, progress, noScripts)
	if err != nil {
		return nil, nil, err
	}
	spec.RunnerCache = cache == sandbox.BuildCacheUser
	spec.BuildCache = cache
	spec.DeferSeed = deferSeed
	t1 := time.Now()
	sess, err := e.opts.Backend.Start(ctx, spec)
	if err != nil {
		return nil, nil, fmt.Errorf("start sandbox: %w", err)
	}
	t2 := time.Now()
	if err := setup.CheckRuntime(ctx, sess, plan, sandboxWhere(e.opts.Backend.Name(), spec.Image), func(line string) { e.warnf("%s", line) }); err != nil {
		sess.Close()
		return nil, nil, err
	}
	// Where a session's start goes (docs/BENCHMARKS.md, "Cost, round 5").
	e.log.Debug("session start", "cache", cache, "setup", t1.Sub(t0), "start", t2.Sub(t1), "runtime check", time.Since(t2))
	e.mu.Lock()
	e.sessions[sess] = true
	e.mu.Unlock()
	return sess, func() {
		e.mu.Lock()
		_, live := e.sessions[sess]
		delete(e.sessions, sess)
		e.mu.Unlock()
		if !live {
			return
		}
		if e.opts.CloseInBackground {
			e.closing.Add(1)
			go func() {
				defer e.closing.Done()
				if err := sess.Close(); err != nil {
					e.log.Warn("close sandbox session", "err", err)
				}
			}()
			return
		}
		if err := sess.Close(); err != nil {
			e.log.Warn("close sandbox session", "err", err)
		}
	}, nil
}

// sandboxWhere names the sandbox in runtime messages.
func sandboxWhere(backend, image string) string {
	if backend == config.BackendDocker {
		return "the sandbox image " + image
	}
	return "the host (the " + backend + " sandbox runs the host's runtimes)"
}

// limits are the per-command limits from the configuration.
func limits(cfg *config.Config) sandbox.Limits { return backends.Limits(cfg) }

// Test snapshots root (with overlays), runs the test command once in a
// fresh sandbox session and returns the report, its texts masked
// (secrets.go).
func (e *Engine) Test(ctx context.Context, root string, overlays map[string][]byte) (*testrun.Report, error) {
	return e.TestProgress(ctx, root, overlays, func(line string) { fmt.Fprintf(e.warn, "fixpoint: %s\n", line) })
}

// TestProgress is Test with the sandbox's preparation reported to
// progress, one line per phase and a tick with the elapsed time while a
// long one lasts (a first run compiling the Go standard library, a first
// dependency install): an editor shows it as the run's progress.
func (e *Engine) TestProgress(ctx context.Context, root string, overlays map[string][]byte, progress func(string)) (*testrun.Report, error) {
	snap, err := e.snapshot(root)
	if err != nil {
		return nil, err
	}
	snap, dropped := snap.WithOverlays(overlays)
	e.warnDropped(dropped)
	// The workspace is the user's own (unsaved buffers included): no
	// model-written code runs, so the runners' caches may persist.
	p := e.newProject(snap)
	sess, done, err := e.startTrusted(ctx, p, progress)
	if err != nil {
		return nil, err
	}
	defer done()
	if _, err := sess.Sync(ctx, snap); err != nil {
		return nil, fmt.Errorf("sync workspace: %w", err)
	}
	rep, err := e.runTests(ctx, sess, p.lang, snap, nil, false)
	if err != nil {
		return nil, err
	}
	// what reaches the terminal, the editor and the daemon's client is
	// masked like what reaches the model
	return maskReport(rep, newSecretMasker(root, snap, envSecrets(e.cfg)).String), nil
}

// newRunID is sortable by time and unique: 20261122-001234-1a2b3c.
func newRunID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(b[:])
}

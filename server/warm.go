package server

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"go.lsp.dev/protocol"

	"github.com/fixpoint-dev/fixpoint/config"
)

// Prewarming (Options.Prewarm): after initialized, the server starts each
// folder's engine and asks it for a warm sandbox session — the setup phase
// (dependency install, runtime version check) and the first sync of the
// workspace — in a goroutine, so the first code action does not wait for
// them. The next run in the folder takes that session and syncs it to its
// own snapshot (the unsaved buffers of that moment) before any test; an
// edit that changed the setup inputs makes the engine drop it and start
// cold (agent/warm.go). After each run the folder is warmed again, and a
// warm session that sees no action for [server] idle_timeout is stopped;
// the next code action request warms the folder again. A failed prewarm
// is logged once (window/logMessage); the run that follows starts the
// session itself and reports the error in its own words.
//
// Nothing here runs on the request loop: handlers only start goroutines,
// each of which ends when its Prewarm returns, which cancelling its
// context (a run's start does not; resetWarm, shutdown and the end of the
// connection do) makes prompt.

// prewarmer is implemented by engines that can start a session ahead of
// the next run (*agent.Engine).
type prewarmer interface {
	// Prewarm starts the session for root with overlays; it returns when
	// the session is ready or the start failed.
	Prewarm(ctx context.Context, root string, overlays map[string][]byte, progress func(string)) error
	// Cool stops the warm session; it reports whether there was one.
	Cool() bool
}

type warmPhase int

const (
	warmCold     warmPhase = iota // no warm session; the next code action starts one
	warmStarting                  // a prewarm goroutine is running
	warmReady                     // the engine holds a warm session; the idle timer runs
	warmOff                       // failed, disabled (idle_timeout 0) or unsupported: wait for a run or a configuration change
)

// warmState is a folder's pre-started session as the server tracks it.
// All fields are guarded by Server.mu.
type warmState struct {
	// gen changes whenever the state is taken over (a run starts, the
	// idle timer fires, the configuration changes): a prewarm goroutine or
	// timer of an older generation leaves the state alone.
	gen      int
	phase    warmPhase
	token    string    // the work-done progress token of the last prewarm (Server.prewarms)
	eng      prewarmer // holds the warm session (warmReady)
	idle     time.Duration
	timer    *time.Timer // stops an idle warm session
	reported string      // the last prewarm failure logged, so it is logged once
}

// warmFolder starts a prewarm of root unless prewarming is off, the
// user does not trust the folder (trust.go), the folder is busy, warm or
// warming, or the server is stopping. It only starts a goroutine.
func (s *Server) warmFolder(ctx context.Context, root string) {
	if !s.opts.Prewarm {
		return
	}
	if !s.folderTrusted(root) {
		s.noteUntrusted(ctx, root)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopping || s.state != stateInitialized || s.runs[root] != nil {
		return
	}
	st := s.warm[root]
	if st == nil {
		st = &warmState{}
		s.warm[root] = st
	}
	if st.phase != warmCold {
		return
	}
	st.gen++
	s.warmSeq++
	st.phase, st.token = warmStarting, fmt.Sprintf("fixpoint/prewarm-%d", s.warmSeq)
	wctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	token, gen := st.token, st.gen
	s.prewarms[token] = cancel
	s.runWG.Add(1)
	go func() {
		defer s.runWG.Done()
		defer func() {
			s.mu.Lock()
			delete(s.prewarms, token)
			s.mu.Unlock()
			cancel()
		}()
		s.prewarm(wctx, root, gen, token)
	}()
}

// warmAll warms every workspace folder.
func (s *Server) warmAll(ctx context.Context) {
	s.mu.Lock()
	folders := append([]string(nil), s.folders...)
	s.mu.Unlock()
	for _, f := range folders {
		s.warmFolder(ctx, f)
	}
}

// prewarm is the body of a prewarm goroutine: it makes the folder's
// engine and has it start a session. It returns when Prewarm does.
func (s *Server) prewarm(ctx context.Context, root string, gen int, token string) {
	s.awaitConfiguration(ctx)
	cfg, err := s.configFor(root)
	if err != nil {
		s.prewarmDone(ctx, root, gen, nil, 0, err)
		return
	}
	idle := cfg.Server.IdleTimeout.D()
	if idle > 0 && s.userTurnedPrewarmOff() {
		idle = 0
	}
	if idle <= 0 {
		s.logger.Info("prewarm off: [server] idle_timeout is 0", "root", root)
		s.prewarmDone(ctx, root, gen, nil, 0, nil)
		return
	}
	eng, err := s.engineFor(ctx, root)
	if err != nil {
		s.prewarmDone(ctx, root, gen, nil, idle, err)
		return
	}
	pw, ok := eng.(prewarmer)
	if !ok {
		s.prewarmDone(ctx, root, gen, nil, idle, nil)
		return
	}
	overlays := map[string][]byte{}
	for rel, d := range s.docs.under(root) {
		overlays[rel] = []byte(d.text())
	}
	t0 := time.Now()
	prog := s.prewarmProgress(ctx, root, token)
	err = pw.Prewarm(ctx, root, overlays, func(line string) { prog.report(ctx, line) })
	s.logger.Info("prewarm", "root", root, "took", time.Since(t0), "err", err)
	s.prewarmDone(ctx, root, gen, pw, idle, err) // its warning goes before the progress ends
	if err != nil {
		prog.end(ctx, "Not prepared: the next action starts the sandbox")
	} else {
		prog.end(ctx, "Sandbox ready")
	}
}

// userTurnedPrewarmOff reports whether the layers other than the
// workspace's own .fixpoint.toml (the user file, the environment, the
// editor's settings, flags) set idle_timeout to 0: a workspace file must
// not turn on what would run its install step when the folder is opened.
func (s *Server) userTurnedPrewarmOff() bool {
	cfg, err := config.Load(config.LoadOptions{Getenv: s.opts.Getenv, UserFile: s.opts.UserConfig, Flags: s.opts.Flags, TrustDir: s.opts.TrustDir})
	return err == nil && cfg.Server.IdleTimeout == 0
}

// prewarmDone records a prewarm's outcome (eng nil: nothing to keep) and
// logs a failure, once per distinct message.
func (s *Server) prewarmDone(ctx context.Context, root string, gen int, eng prewarmer, idle time.Duration, err error) {
	s.mu.Lock()
	st := s.warm[root]
	if st == nil || st.gen != gen {
		s.mu.Unlock()
		return // a run took the session over, or the state was reset
	}
	report := false
	switch {
	case err != nil:
		st.phase = warmOff
		report = err.Error() != st.reported && ctx.Err() == nil
		st.reported = err.Error()
	case eng == nil:
		st.phase = warmOff
	default:
		st.phase, st.eng, st.idle, st.reported = warmReady, eng, idle, ""
		st.timer = time.AfterFunc(idle, func() { s.coolIdle(root, gen) })
	}
	s.mu.Unlock()
	if report {
		s.logMessage(ctx, protocol.MessageTypeWarning, fmt.Sprintf(
			"fixpoint: could not prepare the sandbox of %s in advance: %v\nThe next action starts it again and reports what goes wrong; %s shows the details.",
			filepath.Base(root), err, s.commandName(logWhere)))
	}
}

// coolIdle stops root's warm session when the idle timer of generation
// gen fires and nothing took the session since.
func (s *Server) coolIdle(root string, gen int) {
	s.mu.Lock()
	st := s.warm[root]
	if st == nil || st.gen != gen || st.phase != warmReady {
		s.mu.Unlock()
		return
	}
	st.gen++
	eng, idle := st.eng, st.idle
	st.phase, st.eng, st.timer = warmCold, nil, nil
	s.mu.Unlock()
	if eng.Cool() {
		s.logger.Info("stopped an idle sandbox session", "root", root, "idle", idle)
		s.logMessage(context.Background(), protocol.MessageTypeInfo,
			fmt.Sprintf("fixpoint: stopped the idle sandbox of %s after %v; the next action starts a new one", filepath.Base(root), idle))
	}
}

// touchWarm is called on a code action request in docURI's folder: the
// user is at work there. A warm session's idle timer starts again; a
// cold folder is warmed.
func (s *Server) touchWarm(ctx context.Context, docURI string) {
	if !s.opts.Prewarm {
		return
	}
	root, err := s.folderFor(docURI)
	if err != nil {
		return
	}
	s.mu.Lock()
	st := s.warm[root]
	if st != nil && st.phase == warmReady && st.timer != nil {
		st.timer.Reset(st.idle)
	}
	cold := st == nil || st.phase == warmCold
	s.mu.Unlock()
	if cold {
		s.warmFolder(ctx, root)
	}
}

// handWarmToRun is called, with s.mu held, when a run starts in root: the
// run's engine takes the warm session (or waits for the prewarm under
// way: its goroutine goes on), so the server stops tracking it.
func (s *Server) handWarmToRun(root string) {
	st := s.warm[root]
	if st == nil {
		return
	}
	st.gen++
	if st.timer != nil {
		st.timer.Stop()
	}
	st.phase, st.eng, st.timer = warmCold, nil, nil
}

// resetWarmLocked forgets root's warm state and cancels its prewarm;
// s.mu must be held. The engine's Close stops its session.
func (s *Server) resetWarmLocked(root string) {
	st := s.warm[root]
	if st == nil {
		return
	}
	st.gen++
	if cancel := s.prewarms[st.token]; cancel != nil && st.phase == warmStarting {
		cancel()
	}
	if st.timer != nil {
		st.timer.Stop()
	}
	st.phase, st.eng, st.timer, st.reported = warmCold, nil, nil, ""
}

// stopWarming cancels every prewarm and idle timer and lets no new one
// start (shutdown, end of the connection).
func (s *Server) stopWarming() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stopping = true
	for root := range s.warm {
		s.resetWarmLocked(root)
	}
	for _, cancel := range s.prewarms { // also those handed to a run
		cancel()
	}
}

// workDoneProgressCancelWarm cancels the prewarm whose progress token is
// tok (s.mu held); the folder stays cold until the next run or
// configuration change.
func (s *Server) workDoneProgressCancelWarm(tok string) {
	if cancel := s.prewarms[tok]; cancel != nil {
		s.logger.Info("prewarm cancelled by workDoneProgress/cancel", "token", tok)
		cancel()
	}
}

package server

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.lsp.dev/protocol"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// execute is a run's goroutine. It ends when the engine returns, which it
// must do promptly once ctx is cancelled. Every run sends
// $/fixpoint/status while it works and exactly one final status, through
// endStatus (status.go), which ends the progress with it.
func (s *Server) execute(ctx context.Context, r *run) {
	defer s.finishRun(r)
	defer s.endUnended(ctx, r)
	if r.prev != nil {
		if !s.awaitPrev(ctx, r) {
			s.endStatus(ctx, r, stateCancelled, "Cancelled", "")
			return
		}
		s.snapshot(r)
	}
	r.status = statusParams{State: stateRunning, Message: r.title, Phase: "starting"}
	s.sendStatus(ctx, r)
	if !s.folderTrusted(r.root) && !s.askTrust(ctx, r.root) {
		reason := printable(r.root) + " is not trusted: nothing was installed or run (trust it when asked, or run `fixpoint trust` there)"
		s.settle(r) // the next action queues behind this one, and asks again
		if ctx.Err() != nil {
			s.endStatus(ctx, r, stateCancelled, "Cancelled", "")
			return
		}
		s.endStatus(ctx, r, stateFailed, "Not run: the folder is not trusted", reason)
		return
	}
	eng, err := s.engineFor(ctx, r.root)
	if err != nil {
		s.showMessage(ctx, protocol.MessageTypeError, "fixpoint: cannot start: "+err.Error())
		s.endStatus(ctx, r, stateFailed, "Cannot start: "+err.Error(), err.Error())
		return
	}
	if r.kind.mode() != "" && s.noModel(ctx, r, eng) {
		return
	}
	prog := s.beginProgress(ctx, r.token, "fixpoint: "+r.title, "starting")
	r.end.prog = prog
	if r.kind.mode() == "" {
		s.executeTest(ctx, r, eng)
		return
	}
	res, err := eng.Run(ctx, r.req, func(ev agent.Event) {
		if ev.Delta != "" && ev.Report == nil {
			return // streamed model text: not for the progress UI
		}
		s.runningStatus(ctx, r, ev)
		prog.report(ctx, ev.Message)
		if ev.Phase == agent.PhaseMemory { // which remembered fixes the prompts use: kept in the log
			s.logMessage(ctx, protocol.MessageTypeInfo, "fixpoint: "+ev.Message)
		}
		if ev.Report != nil && ev.Iteration == 0 {
			// Only the baseline describes the files the user has: later
			// reports are of the model's edits in the sandbox.
			s.publishReport(ctx, r.root, ev.Report)
		}
	})
	s.settle(r)
	if err != nil {
		s.endFailed(ctx, r, err)
		return
	}
	s.mu.Lock()
	s.results[r.root] = res
	s.mu.Unlock()
	if n := len(res.Iterations); n > 0 {
		r.status.Iteration = n
	}
	r.reportCounts(res.Final)
	r.status.Diff = res.Diff
	r.status.Files = changedFiles(res.Changes)
	// res.Final is the state of the model's edits: it becomes the
	// diagnostics once they land (land, offerUnverified); until then,
	// and after a decline, the baseline's diagnostics stay.
	if res.Verified {
		s.endProgress(ctx, r, "Verified")
		s.land(ctx, r, res)
		return
	}
	if ctx.Err() != nil {
		// Cancelled while the engine could still hand back a partial
		// result (during planning, between iterations): the user asked
		// it to stop, so this is a cancellation, not a failed run with a
		// best attempt to offer.
		s.endStatus(ctx, r, stateCancelled, "Cancelled", "")
		return
	}
	s.endProgress(ctx, r, "Not verified: "+res.StopReason)
	s.offerUnverified(ctx, r, res)
}

// executeTest is a Run Tests run: the report becomes diagnostics, and the
// final status says how many tests fail ("tests-failing" is not a failed run).
func (s *Server) executeTest(ctx context.Context, r *run, eng Engine) {
	var rep *testrun.Report
	var err error
	if pt, ok := eng.(progressTester); ok {
		// Preparing the sandbox can take minutes the first time (Go's
		// standard library compiled, dependencies installed): its phases
		// and elapsed-time ticks are the run's progress and status.
		rep, err = pt.TestProgress(ctx, r.root, r.req.Overlays, func(line string) {
			s.runningStatus(ctx, r, agent.Event{Phase: agent.PhaseTest, Message: line})
			r.end.prog.report(ctx, line)
		})
	} else {
		rep, err = eng.Test(ctx, r.root, r.req.Overlays)
	}
	s.settle(r)
	if err != nil {
		s.endFailed(ctx, r, err)
		return
	}
	s.publishReport(ctx, r.root, rep)
	sum := summary(rep)
	s.endProgress(ctx, r, sum)
	if r.end.prog.fallback() {
		s.showMessage(ctx, protocol.MessageTypeInfo, "fixpoint: Run tests: "+sum)
	}
	r.reportCounts(rep)
	if !rep.OK() {
		reason := ""
		if rep.Failed == 0 {
			reason = sum // exit code, time-out, out of memory
		}
		s.endStatus(ctx, r, stateTestsFail, "Tests: "+sum, reason)
		return
	}
	s.endStatus(ctx, r, stateApplied, "Tests pass: "+sum, "")
}

// land applies a verified result and reports how that went: a summary
// when it landed, the reason (a plain one when the user declined) when
// it did not.
func (s *Server) land(ctx context.Context, r *run, res *agent.Result) {
	out := s.apply(ctx, r, res, false)
	if !out.applied {
		msg := "Verified, not applied: " + out.reason
		switch {
		case out.reason == reasonDeclined:
			msg = "Verified, not applied: you declined the edit"
			s.outcomeMessage(ctx, protocol.MessageTypeInfo, "fixpoint: "+editLabel(r)+": verified, not applied (declined).")
		default:
			s.outcomeMessage(ctx, protocol.MessageTypeWarning, "fixpoint: "+editLabel(r)+": verified, but not applied: "+out.reason+".")
		}
		s.endStatus(ctx, r, stateNotApplied, msg, out.reason)
		return
	}
	if res.Final != nil {
		s.publishReport(ctx, r.root, res.Final)
	}
	if len(res.Changes) == 0 {
		msg := "Verified; no file changes were needed"
		if res.StopReason == agent.StopAlreadyPassing {
			msg = "Nothing to fix: the tests already pass"
		}
		s.endStatus(ctx, r, stateApplied, msg, "")
		s.outcomeMessage(ctx, protocol.MessageTypeInfo, "fixpoint: "+strings.ToLower(msg[:1])+msg[1:])
		return
	}
	s.endStatus(ctx, r, stateApplied, fmt.Sprintf("Applied: %d %s changed, %s", len(r.status.Files),
		plural(len(r.status.Files), "file", "files"), testsPassing(res)), "")
	if !s.clientShowsOutcomes() {
		s.appliedSummary(ctx, r, res, r.status.Files)
	}
}

// clientShowsOutcomes reports whether the client turns a run's final
// $/fixpoint/status into its one notification (experimental.fixpointOutcomes).
func (s *Server) clientShowsOutcomes() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.caps.outcomes
}

// outcomeMessage shows how a run ended, unless the client shows that
// itself from the final status.
func (s *Server) outcomeMessage(ctx context.Context, typ protocol.MessageType, msg string) {
	if !s.clientShowsOutcomes() {
		s.showMessage(ctx, typ, msg)
	}
}

// endFailed ends a run whose engine returned an error.
func (s *Server) endFailed(ctx context.Context, r *run, err error) {
	msg := s.failure(ctx, err)
	if msg == "Cancelled" {
		s.endStatus(ctx, r, stateCancelled, msg, "")
		return
	}
	s.endStatus(ctx, r, stateFailed, msg, err.Error())
}

// settle marks r as past its engine work: from now on a new run in the
// folder queues behind it instead of being refused.
func (s *Server) settle(r *run) {
	s.mu.Lock()
	r.settling = true
	s.mu.Unlock()
}

// awaitPrev waits until the run r was queued behind is done. It reports
// false when r was cancelled while waiting.
func (s *Server) awaitPrev(ctx context.Context, r *run) bool {
	select {
	case <-r.prev.done:
		return true
	case <-ctx.Done():
		return false
	case <-time.After(2 * time.Second):
	}
	s.logMessage(ctx, protocol.MessageTypeInfo, fmt.Sprintf("fixpoint: %s waits for %s to stop", r.id, r.prev.id))
	select {
	case <-r.prev.done:
		return true
	case <-ctx.Done():
		return false
	}
}

// failure turns a run error into the progress end message, telling the
// user about real failures (a cancellation needs no message box).
func (s *Server) failure(ctx context.Context, err error) string {
	if errors.Is(err, context.Canceled) || ctx.Err() != nil {
		return "Cancelled"
	}
	s.showMessage(ctx, protocol.MessageTypeError, "fixpoint: the run failed: "+err.Error())
	return "Failed: " + err.Error()
}

// offerUnverified tells the user a run ended without a verified result
// and applies its best attempt only when asked to. The safe choice ("Show
// log") comes first: a client that preselects the first action (eglot's
// completing-read, a default button) never applies unverified code.
func (s *Server) offerUnverified(ctx context.Context, r *run, res *agent.Result) {
	n := len(res.Iterations)
	reason := fmt.Sprintf("not verified after %d %s", n, plural(n, "iteration", "iterations"))
	if res.Final != nil && res.Final.Failed > 0 {
		reason += fmt.Sprintf(": %d %s still %s", res.Final.Failed, plural(res.Final.Failed, "test", "tests"), plural(res.Final.Failed, "fails", "fail"))
	} else if res.StopReason != "" {
		reason += " (" + res.StopReason + ")"
	}
	// The final status goes out before the question: a plugin that only
	// shows statuses must not say "running" while the user is asked.
	s.endStatus(ctx, r, stateFailed, "Failed: "+reason, reason)
	actions := []string{"Show log"}
	if len(res.Changes) > 0 {
		actions = []string{"Show log", "Apply best attempt"}
	}
	switch s.ask(ctx, protocol.MessageTypeWarning, "fixpoint: "+reason, actions...) {
	case "Apply best attempt":
		if out := s.apply(ctx, r, res, false); out.applied {
			if res.Final != nil {
				s.publishReport(ctx, r.root, res.Final)
			}
			s.showMessage(ctx, protocol.MessageTypeWarning, "fixpoint: applied the unverified best attempt: "+filesSummary(changedFiles(res.Changes)))
		} else if out.reason != reasonDeclined {
			s.showMessage(ctx, protocol.MessageTypeWarning, "fixpoint: the best attempt was not applied: "+out.reason)
		}
	case "Show log":
		s.showLog(ctx, res)
	}
}

// showLog opens the run log when the client can show documents, and puts
// the diff in the output log either way.
func (s *Server) showLog(ctx context.Context, res *agent.Result) {
	s.logMessage(ctx, protocol.MessageTypeInfo, fmt.Sprintf("fixpoint run %s: %s\nlog: %s\n%s", res.RunID, res.StopReason, res.LogPath, res.Diff))
	s.mu.Lock()
	canShow := s.caps.showDocument
	s.mu.Unlock()
	if canShow && res.LogPath != "" {
		var out struct {
			Success bool `json:"success"`
		}
		_ = protocol.Call(ctx, s.conn, protocol.MethodShowDocument, map[string]any{"uri": fileURI(res.LogPath)}, &out)
	}
}

// finishRun forgets a run and closes its engine if the configuration
// changed while it ran.
func (s *Server) finishRun(r *run) {
	r.cancel()
	s.mu.Lock()
	if s.runs[r.root] == r {
		delete(s.runs, r.root)
	}
	var stale Engine
	if r.staleEngine {
		stale = s.engines[r.root]
		delete(s.engines, r.root)
	}
	s.mu.Unlock()
	if stale != nil {
		if err := stale.Close(); err != nil {
			s.logger.Warn("close engine", "err", err)
		}
	}
	close(r.done)
	// Warm the folder for the next action; a failed prewarm is tried
	// again (and logged if its error changed).
	s.mu.Lock()
	if st := s.warm[r.root]; st != nil && st.phase == warmOff {
		st.phase = warmCold
	}
	s.mu.Unlock()
	s.warmFolder(r.ctx, r.root)
	s.runWG.Done()
}

// engineFor returns the folder's engine, making it on first use.
func (s *Server) engineFor(ctx context.Context, root string) (Engine, error) {
	s.awaitConfiguration(ctx)
	s.mu.Lock()
	e := s.engines[root]
	s.mu.Unlock()
	if e != nil {
		return e, nil
	}
	cfg, err := s.configFor(root)
	if err != nil {
		return nil, err
	}
	if s.opts.NewEngine == nil {
		return nil, errors.New("no agent engine is configured in this server")
	}
	e, err = s.opts.NewEngine(ctx, cfg, root, s.hooks(ctx))
	if err != nil {
		return nil, err
	}
	s.noticeSandbox(ctx, cfg.Sandbox.Backend, e)
	s.mu.Lock()
	if other := s.engines[root]; other != nil {
		// A prewarm and a run made one at the same time: keep the first.
		s.mu.Unlock()
		if err := e.Close(); err != nil {
			s.logger.Warn("close engine", "err", err)
		}
		return other, nil
	}
	s.engines[root] = e
	s.mu.Unlock()
	return e, nil
}

// hooks returns the callbacks for an engine. They outlive the run that
// created the engine, so they use the connection, not the run's context,
// for notifications; Approve uses the context it is given.
func (s *Server) hooks(ctx context.Context) Hooks {
	lifetime := context.WithoutCancel(ctx)
	return Hooks{
		Warn: warnWriter(func(line string) { s.logMessage(lifetime, protocol.MessageTypeWarning, line) }),
		Approve: func(ctx context.Context, a agent.Approval) (bool, error) {
			// The safe choice first: clients preselect the first action.
			if s.ask(ctx, protocol.MessageTypeWarning, "fixpoint: "+a.Question(), "Deny", "Allow") == "Allow" {
				return true, nil
			}
			s.logMessage(lifetime, protocol.MessageTypeWarning, "fixpoint: "+a.Refusal(
				"Only an Allow answer to fixpoint's question allows such an edit (a dismissed question, or an editor that cannot ask, refuses)."))
			return false, nil
		},
	}
}

// warnWriter calls fn once per Write, with trailing newlines trimmed.
type warnWriter func(string)

func (w warnWriter) Write(p []byte) (int, error) {
	if line := strings.TrimRight(string(p), "\n"); line != "" {
		w(line)
	}
	return len(p), nil
}

// progressTester is an Engine whose Run Tests reports the sandbox's
// preparation as it goes (*agent.Engine).
type progressTester interface {
	TestProgress(ctx context.Context, root string, overlays map[string][]byte, progress func(string)) (*testrun.Report, error)
}

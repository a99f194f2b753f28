package server

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/agent/termsafe"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// methodStatus is fixpoint's own notification of a run's state. Every
// client gets it: the shipped plugins render it (eglot 1.9 announces no
// work-done progress, and one status per run is simpler than pairing
// $/progress tokens), and clients that do not know it ignore it.
const methodStatus = "$/fixpoint/status"

// Run states of $/fixpoint/status. A run sends "running" while it works
// and ends with exactly one of the others.
const (
	stateRunning    = "running"
	stateApplied    = "applied"              // verified and applied (Run Tests: every test passes)
	stateNotApplied = "verified-not-applied" // verified; reason says why it did not land
	stateTestsFail  = "tests-failing"        // Run Tests found failing tests
	stateFailed     = "failed"               // the run failed or gave up unverified; reason says why
	stateCancelled  = "cancelled"
)

// Reasons a verified result was not applied (statusParams.Reason).
const (
	reasonDeclined = "declined"
)

// statusParams are the params of $/fixpoint/status.
type statusParams struct {
	RunID         string       `json:"runId"`
	Kind          string       `json:"kind"` // fix | solve | test
	State         string       `json:"state"`
	Message       string       `json:"message"` // one line, at most 80 characters
	Iteration     int          `json:"iteration"`
	MaxIterations int          `json:"maxIterations"`
	Phase         string       `json:"phase,omitempty"`
	Reason        string       `json:"reason,omitempty"`
	Failing       int          `json:"failing"`
	Passing       int          `json:"passing"`
	Files         []statusFile `json:"files,omitempty"`
	Diff          string       `json:"diff,omitempty"` // the run's unified diff; final notification only
}

// statusFile is one file a result changes, with its line counts.
type statusFile struct {
	Path    string `json:"path"`
	Added   int    `json:"added"`
	Removed int    `json:"removed"`
}

// maxStatusMessage bounds statusParams.Message: it must fit an echo area.
const maxStatusMessage = 80

// oneLine returns the first line of s, clipped to n characters (runes)
// with an ellipsis.
func oneLine(s string, n int) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	s = strings.TrimSpace(s)
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	// A long phase's elapsed time (" · 45 s") is what changes: keep it.
	if m := elapsedSuffix.FindString(s); m != "" && len([]rune(m))+10 < n {
		head := []rune(strings.TrimSuffix(s, m))
		return string(head[:n-1-len([]rune(m))]) + "…" + m
	}
	return string(r[:n-1]) + "…"
}

// elapsedSuffix is the setup's tick on a long phase: "… · 45 s".
var elapsedSuffix = regexp.MustCompile(` · \d+ s$`)

// sendStatus sends r's status as $/fixpoint/status. Only r's goroutine
// calls it, so r.status needs no lock.
func (s *Server) sendStatus(ctx context.Context, r *run) {
	p := r.status
	p.RunID, p.Kind = r.id, string(r.kind)
	// Message, reason, diff and paths may quote the model or a test.
	p.Message = oneLine(termsafe.Strip(s.opts.Redact(p.Message)), maxStatusMessage)
	p.Reason = termsafe.Strip(s.opts.Redact(p.Reason))
	p.Diff = termsafe.Strip(s.opts.Redact(p.Diff))
	if len(p.Files) > 0 {
		files := make([]statusFile, len(p.Files))
		for i, f := range p.Files {
			f.Path = termsafe.Strip(f.Path)
			files[i] = f
		}
		p.Files = files
	}
	if err := s.conn.Notify(context.WithoutCancel(ctx), methodStatus, p); err != nil {
		s.logger.Debug(methodStatus, "err", err)
	}
}

// runningStatus updates r's status from an engine event and sends it when
// something a user sees changed.
func (s *Server) runningStatus(ctx context.Context, r *run, ev agent.Event) {
	st := &r.status
	type seen struct {
		state, phase, message     string
		it, max, failing, passing int
	}
	key := func() seen {
		return seen{st.State, st.Phase, st.Message, st.Iteration, st.MaxIterations, st.Failing, st.Passing}
	}
	before := key()
	st.State = stateRunning
	if ev.Iteration > 0 {
		st.Iteration = ev.Iteration
	}
	if ev.MaxIterations > 0 {
		st.MaxIterations = ev.MaxIterations
	}
	if ev.Phase != "" {
		st.Phase = string(ev.Phase)
	}
	if ev.Report != nil {
		st.Failing, st.Passing = ev.Report.Failed, ev.Report.Passed
	}
	if ev.Message != "" {
		st.Message = ev.Message
	}
	if key() != before {
		s.sendStatus(ctx, r)
	}
}

// runEnd is the one reporter of how a run ends: its work-done progress
// (ended once), its final $/fixpoint/status (sent once) and the server
// log's "run end" line, together. execute begins the progress into it,
// every exit path ends through endStatus, and endUnended, deferred by
// execute, ends a run that returned without a final status, so no client
// is left showing "running". Only the run's goroutine touches it.
type runEnd struct {
	prog      *progress // nil until the progress begins (a nil progress is a no-op)
	progEnded bool
	ended     bool
}

// endProgress ends r's progress with message, once; the final status is
// still to come (the outcome may first be applied or asked about).
func (s *Server) endProgress(ctx context.Context, r *run, message string) {
	if r.end.progEnded {
		return
	}
	r.end.progEnded = true
	r.end.prog.end(ctx, message)
}

// endStatus ends r: its progress (with message, unless endProgress ended
// it already), its final status and the log line. Only the first call
// counts: a run has exactly one final status.
func (s *Server) endStatus(ctx context.Context, r *run, state, message, reason string) {
	if r.end.ended {
		s.logger.Warn("run ended twice", "run", r.id, "state", state)
		return
	}
	s.endProgress(ctx, r, message)
	r.end.ended = true
	r.status.State, r.status.Message, r.status.Reason = state, message, reason
	s.mu.Lock()
	s.ended[r.root] = true
	s.mu.Unlock()
	s.sendStatus(ctx, r)
	s.logger.Info("run end", "run", r.id, "state", state)
}

// endUnended ends a run that returned without a final status: cancelled
// when its context ended, else failed.
func (s *Server) endUnended(ctx context.Context, r *run) {
	if r.end.ended {
		return
	}
	if ctx.Err() != nil {
		s.endStatus(ctx, r, stateCancelled, "Cancelled", "")
		return
	}
	s.logger.Error("run returned without a final status", "run", r.id)
	s.endStatus(ctx, r, stateFailed, "Failed: the run ended without a result", "internal error: no final status")
}

// reportCounts copies a test report's counts into r's status.
func (r *run) reportCounts(rep *testrun.Report) {
	if rep != nil {
		r.status.Failing, r.status.Passing = rep.Failed, rep.Passed
	}
}

// changedFiles lists a result's files with their added and removed lines.
func changedFiles(changes []agent.FileChange) []statusFile {
	out := make([]statusFile, 0, len(changes))
	for _, c := range changes {
		f := statusFile{Path: c.Path}
		for _, h := range lineHunks(string(c.Before), string(c.After)) {
			f.Removed += h.end - h.start
			f.Added += len(h.lines)
		}
		out = append(out, f)
	}
	return out
}

// filesSummary is "stats.go (+4 −0), stats_test.go (+6 −0)".
func filesSummary(files []statusFile) string {
	parts := make([]string, len(files))
	for i, f := range files {
		parts[i] = fmt.Sprintf("%s (+%d −%d)", f.Path, f.Added, f.Removed)
	}
	return strings.Join(parts, ", ")
}

// testsPassing is "5 tests passing" for a result's final report.
func testsPassing(res *agent.Result) string {
	if res == nil || res.Final == nil {
		return "tests passing"
	}
	return fmt.Sprintf("%d %s passing", res.Final.Passed, plural(res.Final.Passed, "test", "tests"))
}

// prewarmProgress begins the progress of a prewarm in root. Before the
// first run it is a work-done progress ("preparing the sandbox", with
// the first compile's lines), which the clients show. Once a run in root
// has ended, its final status ("2 tests failing", "cancelled",
// "declined") is what the user needs to read until the next run starts:
// preparing the next sandbox behind it is no state of theirs, so it goes
// to the log only (window/logMessage) and creates no progress a client
// would paint over that status.
func (s *Server) prewarmProgress(ctx context.Context, root, token string) *progress {
	const title = "fixpoint: preparing the sandbox"
	s.mu.Lock()
	quiet := s.ended[root]
	s.mu.Unlock()
	if !quiet {
		return s.beginProgress(ctx, token, title, "starting")
	}
	s.logMessage(ctx, protocol.MessageTypeLog, title+"…")
	return &progress{s: s, title: title}
}

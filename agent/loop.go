package agent

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/agent/policy"
	"github.com/fixpoint-dev/fixpoint/agent/redact"
	"github.com/fixpoint-dev/fixpoint/agent/runlog"
	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// Stop reasons that callers may compare against.
const (
	StopVerified       = "verified"
	StopCancelled      = "cancelled"
	StopAlreadyPassing = "nothing to fix: the tests already pass"
	StopTokenBudget    = "token budget"
	StopWallBudget     = "wall budget"
)

// breakerRepeats is how many times the same failure signature may be seen
// without progress before the circuit breaker stops the run.
const breakerRepeats = 3

// run is the state of one Run.
type run struct {
	e       *Engine
	req     Request
	res     *Result
	onEvent func(Event)
	log     *runlog.Writer
	sess    sandbox.Session
	// pending is the next verifying session and work the next working
	// session, started ahead of their use (prestart.go); nil when none is.
	pending, work *pendingSession
	// spec is the verifying run started beside the failing tests' run
	// (prestart.go, speculate); nil when none is.
	spec *specRun

	base *sandbox.Snapshot // the workspace as snapshotted (overlays applied)
	cur  *sandbox.Snapshot // the working state
	lang string            // language.Name(), "" when none was detected
	// language is the workspace's language, detected once for the run
	// (project.go) and used for every snapshot of it.
	language lang.Language
	include  func(string) bool
	masker   *redact.Masker // the workspace's secret values; see secrets.go

	plan       string
	history    []string
	feedback   string
	reflection string // the reflector's analysis of the last attempt, for the next code prompt
	lastDiff   string // what the last attempt changed, for the reflector
	progress   string
	lastRep    *testrun.Report
	sigs       []string
	attempts   map[string]int // hash of normalised blocks → iteration
	malformed  int
	mem        memoryState
	started    time.Time
	closeFn    func()
	setupKey   string // dependencies the session has installed (agent/setup.go)
	// setupProj and setupNoScripts are what the session was prepared
	// with; the verifying session (confirm) is prepared the same way.
	setupProj      *project
	setupNoScripts bool
	policy         *policy.Checker // nil when the policy could not be loaded
	modelTime      time.Duration
	// targets are the tests that failed at baseline (fix mode): each
	// iteration runs them first (selection.go). iterSel is the narrowed
	// runner of the iteration's run, nil for the whole suite; repTargeted
	// says the report the loop judges came from one, lastTargeted that
	// lastRep did.
	targets      []testrun.Result
	iterSel      *testrun.Runner
	repTargeted  bool
	lastTargeted bool
	baseKey      string // the baseline's cache key, "" when not cached (basecache.go)
	// trace is what the failing tests executed at baseline (trace.go),
	// of the files of traceSnap; nil when untraced.
	trace     lang.Trace
	traceSnap *sandbox.Snapshot
	// spectrum is what the failing tests and their packages executed,
	// with counts, of the files of traceSnap (spectrum.go); nil when none.
	spectrum *spectrum
}

// Run drives one request to DONE or GAVE_UP. It returns an error only when
// the run could not be attempted (no snapshot, no sandbox, no baseline); a
// run that ends unverified is a Result with Verified false and StopReason.
// Cancelling ctx stops at once with StopReason "cancelled" and closes the
// sandbox session. The user's files are never written.
func (e *Engine) Run(ctx context.Context, req Request, onEvent func(Event)) (*Result, error) {
	if e.opts.Model == nil {
		return nil, errors.New("run: no model configured")
	}
	if req.Mode == "" {
		req.Mode = ModeFix
	}
	if req.Mode == ModeSolve && strings.TrimSpace(req.Goal) == "" {
		return nil, errors.New("run: solve mode needs a goal")
	}
	unlock, err := e.lockRun(req.Root) // one run per project across processes
	if err != nil {
		return nil, fmt.Errorf("run: %w", err)
	}
	defer unlock()
	if onEvent == nil {
		onEvent = func(Event) {}
	}
	r := &run{e: e, req: req, onEvent: onEvent, attempts: map[string]int{}, started: time.Now()}
	r.res = &Result{RunID: newRunID(r.started), Mode: req.Mode, Goal: req.Goal, Phases: map[Phase]time.Duration{}}
	if wall := e.cfg.Agent.WallBudget.D(); wall > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, wall, errWallBudget)
		defer cancel()
	}
	if err := r.setup(ctx); err != nil {
		r.dropFresh() // a verifying session started beside the baseline
		r.finishLog()
		return nil, err
	}
	defer r.closeSession()
	defer r.dropFresh()
	r.loop(ctx)
	r.finish(ctx)
	return r.res, nil
}

var errWallBudget = errors.New("wall budget exhausted")

func (r *run) setup(ctx context.Context) error {
	e := r.e
	snap, err := e.snapshot(r.req.Root)
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	var dropped []string
	r.base, dropped = snap.WithOverlays(r.req.Overlays)
	e.warnDropped(dropped)
	r.cur = r.base
	r.masker = newSecretMasker(r.req.Root, r.base, envSecrets(e.cfg))
	ig := newIgnorer(r.base)
	creds := r.base.Credentials()
	r.include = func(p string) bool {
		// a symlink is carried into the sandbox, but has no text to show
		_, cred := creds[p]
		return !isSecretPath(p) && !cred && !r.base.Files[p].IsLink() && (e.cfg.Policy.IncludeIgnored || !ig.Ignored(p))
	}
	if r.req.GoalComment != nil {
		r.cur = removeLine(r.cur, *r.req.GoalComment)
	}
	// A policy that does not load (a misspelt rule name) is an error, not
	// a warning: running on without checks would turn a typo in a rule
	// meant to block something into no checks at all.
	pc, err := policy.New(e.cfg.Policy, &policy.Options{IsTest: IsTestFile, Parser: e.opts.PolicyParser})
	if err != nil {
		return fmt.Errorf("run: %w", err)
	}
	r.policy = pc
	r.openLog()
	r.logSnapshot()
	r.mem = memoryState{store: e.opts.Memory}
	r.emit(PhaseTest, 0, "starting the sandbox", nil)
	t0 := time.Now()
	proj := e.newProject(r.cur) // the one detection of the run
	r.language, r.setupProj, r.setupKey = proj.lang, proj, proj.setupKey()
	if r.language != nil {
		r.lang = r.language.Name()
	}
	progress := func(line string) { r.emit(PhaseTest, 0, line, nil) }
	cached := r.cachedBaseline() // basecache.go
	// Closed when the baseline's run has ended (on every path): a
	// verifying session started beside it is seeded then (prestartEarly).
	baselineDone := make(chan struct{})
	var endBaseline sync.Once
	ended := func() { endBaseline.Do(func() { close(baselineDone) }) }
	defer ended()
	if r.req.Baseline == nil && cached == nil {
		// The baseline runs the user's own code only: in a session of the
		// project's user build cache (sandbox.BuildCacheUser), which the
		// run's working and verifying sessions start as a copy of, so
		// that they recompile only what the model changes. The working
		// session starts after it; its first test's Sync brings the files,
		// as with a given or reused baseline.
		sess, done, err := e.startBaseline(ctx, proj, progress)
		if err != nil {
			return err
		}
		r.sess, r.closeFn = sess, done
		if _, err := sess.Sync(ctx, r.cur); err != nil {
			r.closeSession()
			return fmt.Errorf("run: sync workspace: %w", err)
		}
		// The verifying session starts now, beside the baseline's run
		// (prestart.go), once the baseline's files are in (on a loaded
		// engine a container's creation slows the sync beside it); its
		// build cache is seeded once the run ends.
		r.prestartEarly(ctx, baselineDone)
	}
	rep, err := r.baseline(ctx, cached)
	r.res.Phases[PhaseTest] += time.Since(t0)
	if err != nil {
		ended()
		r.closeSession()
		if ctx.Err() != nil {
			return fmt.Errorf("run: %w", context.Cause(ctx))
		}
		return fmt.Errorf("run: baseline: %w", err)
	}
	r.res.Baseline = rep
	r.lastRep = rep
	if r.req.Mode == ModeFix {
		r.targets = rep.Failures()
	}
	r.logTest(0, rep)
	what := "baseline: "
	if !r.res.BaselineReused.IsZero() {
		what = "baseline (reused from " + r.res.BaselineReused.Local().Format("2006-01-02 15:04:05") + "): "
	}
	r.emit(PhaseTest, 0, what+counts(rep), rep)
	// The first iteration's working session starts beside the trace
	// (prestart.go), seeded once the trace has ended.
	r.prestartWorkEarly(ctx, baselineDone)
	// The failing tests once more, traced, in the baseline's session
	// (trace.go); a reused baseline brings the trace stored with it.
	if cached != nil && cached.trace != nil {
		r.setTrace(keepTrace(r.cur, cached.trace, r.include), r.cur)
	} else {
		r.traceBaseline(ctx, rep)
	}
	if cached == nil && r.req.Baseline == nil && ctx.Err() == nil {
		r.storeBaseline(rep, r.trace)
	}
	ended()
	// The working session starts when an iteration first runs tests in
	// it (testPhase): a run whose failing tests cannot be run alone
	// never needs one, its fresh verifying run being its only one.
	r.closeSession()
	r.memoryObserve(ctx, 0, rep)
	return nil
}

// baseline runs the tests on the unchanged workspace, unless the request
// gives their report (Request.Baseline) or the cache holds it (cached).
// A finished run is cached for the next run of the same state, with its
// trace (setup).
func (r *run) baseline(ctx context.Context, cached *cachedBaseline) (*testrun.Report, error) {
	if r.req.Baseline != nil {
		return r.req.Baseline, nil
	}
	if cached != nil {
		r.res.BaselineReused = cached.when
		msg := "baseline reused from " + cached.when.Local().Format("2006-01-02 15:04:05") + ": the workspace, test command, sandbox and fixpoint are unchanged"
		r.log.Write(runlog.KindWarning, 0, map[string]string{"message": msg})
		r.emit(PhaseTest, 0, msg, nil)
		return cached.rep, nil
	}
	r.emit(PhaseTest, 0, "running the baseline tests", nil)
	// Cached by setup once its trace, if any, is in (storeBaseline).
	return r.test(ctx, r.cur)
}

// logTest writes a test report to the run log, and a warning in words
// when the output cap cut the text of the run.
func (r *run) logTest(iter int, rep *testrun.Report) {
	r.log.Write(runlog.KindTest, iter, rep)
	if note := rep.OutputCut.Note(); note != "" {
		r.log.Write(runlog.KindWarning, iter, map[string]string{"message": note})
	}
}

// closeSession closes the working session, in the background
// (Engine.closeLater); the next test phase starts another (testPhase).
func (r *run) closeSession() {
	if r.closeFn != nil {
		r.e.closeLater(r.closeFn)
		r.closeFn = nil
	}
	r.sess = nil
}

// loop runs CODE → TEST → REFLECT until a stop condition. There is no
// separate plan call: the first code reply starts with its plan (see
// codePrompt), which later prompts show, so the context is sent once per
// iteration rather than twice in the first.
func (r *run) loop(ctx context.Context) {
	e := r.e
	if r.req.Mode == ModeFix && r.lastRep.OK() && r.req.Goal == "" && r.req.GoalComment == nil {
		r.res.Verified = true
		r.res.StopReason = StopAlreadyPassing
		r.res.Final = r.lastRep
		return
	}
	maxIt := e.cfg.Agent.MaxIterations
	for it := 1; it <= maxIt; it++ {
		if r.stopped(ctx) {
			return
		}
		iter := Iteration{N: it}
		t0 := time.Now()
		// The sessions this iteration's tests need start now, while the
		// prompt is built and the model answers (prestart.go).
		r.prestart(ctx)
		changes, ok := r.codePhase(ctx, &iter)
		if !ok {
			r.endIteration(iter, t0)
			return
		}
		next := r.cur.With(changes)
		rep, ok := r.testPhase(ctx, &iter, next)
		if !ok {
			r.endIteration(iter, t0)
			return
		}
		// nil: nothing ran in the working session; the fresh run of the
		// whole suite is the iteration's run (selection.go)
		direct := rep == nil
		if !direct {
			rep = r.retryNewlyFailing(ctx, it, next, rep) // flaky.go
			r.res.Final = rep
		}
		r.lastDiff = UnifiedDiff(changesBetween(r.cur, next))
		r.cur = next
		var why []string
		if !direct {
			why = verdict(r.req.Mode, r.res.Baseline, rep)
		}
		suiteFailed := false // the failing tests passed, the whole suite did not
		r.repTargeted = iter.Targeted
		if iter.Targeted {
			// Only the failing tests ran: they decide whether the whole
			// suite runs, in the fresh session whose run is the verdict.
			why = targetVerdict(r.targets, rep)
		}
		if len(why) > 0 {
			// The failing tests do not pass: the whole suite started
			// beside them is not the verdict of anything (prestart.go).
			r.dropSpec(r.spec)
		}
		if len(why) == 0 {
			// The working session has run the model's earlier code:
			// only a run that starts from none of it counts.
			fresh, adopt, ok := r.confirm(ctx, &iter)
			if !ok {
				r.endIteration(iter, t0)
				return
			}
			r.res.Final = fresh
			if direct {
				// The fresh run is the iteration's only test run (a
				// short suite, or tests that cannot run alone): its
				// time and counts are the iteration's, not overhead.
				iter.TestTime = fresh.Duration
				iter.Passed, iter.Failed = fresh.Passed, fresh.Failed
			}
			if why = verdict(r.req.Mode, r.res.Baseline, fresh); len(why) > 0 {
				adopt()
				// After a run of the failing tests only, the fresh run is
				// the first of the whole suite: a test outside them that
				// fails is a regression, not something left behind.
				switch {
				case direct:
					// the iteration's only run: its failures are plain ones
					iter.Passed, iter.Failed = fresh.Passed, fresh.Failed
				case !iter.Targeted || len(targetsFailing(r.targets, fresh)) > 0:
					why = append([]string{notConfirmed}, why...)
				default:
					suiteFailed = true
				}
				rep = fresh
				r.repTargeted = false
			}
		}
		if len(why) == 0 {
			rep = r.res.Final
			if direct {
				iter.Passed, iter.Failed = rep.Passed, rep.Failed
			}
			r.res.Verified = true
			r.res.StopReason = StopVerified
			r.endIteration(iter, t0)
			r.emit(PhaseDone, it, "verified: "+counts(rep), rep)
			return
		}
		r.feedback = ""
		switch {
		case rep.OK():
			r.feedback = "The tests pass, but the change is not verified: " + strings.Join(why, "; ") + "."
		case len(rep.Mismatch) > 0 || why[0] == notConfirmed:
			r.feedback = "The change is not verified: " + strings.Join(why, "; ") + "."
		case suiteFailed:
			r.feedback = "The tests that failed now pass, but the whole suite does not: " + strings.Join(why, "; ") + "."
		}
		stop := r.reflectPhase(ctx, &iter, rep, why)
		r.endIteration(iter, t0)
		if stop != "" {
			r.res.StopReason = stop
			return
		}
	}
	r.res.StopReason = fmt.Sprintf("max iterations (%d)", maxIt)
}

// stopped checks the budgets and the context; it sets StopReason.
func (r *run) stopped(ctx context.Context) bool {
	switch {
	case ctx.Err() != nil:
		r.res.StopReason = StopCancelled
		if errors.Is(context.Cause(ctx), errWallBudget) {
			r.res.StopReason = StopWallBudget
		}
		return true
	case r.e.cfg.Agent.TokenBudget > 0 && r.res.TokensIn+r.res.TokensOut >= r.e.cfg.Agent.TokenBudget:
		r.res.StopReason = StopTokenBudget
		return true
	}
	return false
}

// input collects what the prompts show, before the context is fitted.
func (r *run) input(it int) *promptInput {
	in := &promptInput{
		Mode: r.req.Mode, Goal: r.req.Goal, Plan: r.plan, History: r.history,
		Feedback: r.feedback, Progress: r.progress, Iteration: it, MaxIterations: r.e.cfg.Agent.MaxIterations,
		Reflection: r.reflection,
		Memories:   r.mem.shownText,
	}
	if r.lastRep != nil && !r.lastRep.OK() {
		in.Failure = renderFailure(r.lastRep, r.budget()/4)
	}
	return in
}

func (r *run) budget() int { return max(r.e.cfg.Agent.ContextTokens, 1000) * charsPerToken }

// fit fills the context into in within the budget and renders the prompt.
func (r *run) fit(in *promptInput, render func(*promptInput) string) string {
	fixed := len(systemPrompt(r.req.Mode, r.lang)) + len(render(in))
	trace := r.currentTrace(r.cur)
	ranked, reached := contextRankTraced(r.cur, &r.req, r.lastRep, r.include, trace)
	hints := hintsFor(r.cur, r.lastRep, r.req.Goal)
	hints.Reach = reached
	hints.Trace = trace
	hints.Spectrum = r.currentSpectrum(r.cur)
	fitContext(in, r.cur, ranked, r.include, r.budget(), fixed, hints)
	return r.mask(render(in))
}

// ask sends one prompt and accounts for it; ok is false when the run must
// stop (the reason is set).
func (r *run) ask(ctx context.Context, role string, it int, phase Phase, prompt string) (string, bool) {
	sys := systemPrompt(r.req.Mode, r.lang)
	r.log.Write(runlog.KindPrompt, it, map[string]any{"role": role, "size": len(sys) + len(prompt), "tokens": estimateTokens(sys + prompt), "system": sys, "content": prompt})
	t0 := time.Now()
	resp, err := r.chat(ctx, role, []llm.Message{{Role: "system", Content: sys}, {Role: "user", Content: prompt}}, func(d string) {
		r.onEvent(Event{RunID: r.res.RunID, Phase: phase, Iteration: it, MaxIterations: r.e.cfg.Agent.MaxIterations, Delta: d, TokensIn: r.res.TokensIn, TokensOut: r.res.TokensOut})
	})
	took := time.Since(t0)
	r.modelTime += took
	if err != nil {
		if ctx.Err() != nil {
			r.stopped(ctx)
		} else {
			r.res.StopReason = "model error: " + r.mask(err.Error())
		}
		r.log.Write(runlog.KindWarning, it, map[string]string{"message": "model: " + err.Error()})
		return "", false
	}
	r.res.TokensIn += resp.Usage.In
	r.res.TokensOut += resp.Usage.Out
	r.res.Cost += llm.Cost(r.e.cfg.Model, resp.Usage)
	r.log.Write(runlog.KindReply, it, map[string]any{"role": role, "content": resp.Content, "tokens_in": resp.Usage.In, "tokens_out": resp.Usage.Out, "tool_rounds": resp.ToolRounds, "model_ms": took.Milliseconds()})
	return resp.Content, true
}

// codePhase asks for edits until a reply applies cleanly and passes the
// test-file rules, or the malformed budget or another stop ends the run.
func (r *run) codePhase(ctx context.Context, iter *Iteration) (map[string][]byte, bool) {
	t0 := time.Now()
	defer func() { r.res.Phases[PhaseCode] += time.Since(t0) }()
	for {
		if r.stopped(ctx) {
			return nil, false
		}
		r.emit(PhaseCode, iter.N, "asking the model for edits", nil)
		r.modelTime = 0
		prompt := r.fit(r.input(iter.N), codePrompt)
		reply, ok := r.ask(ctx, "coder", iter.N, PhaseCode, prompt)
		iter.ModelTime += r.modelTime
		if !ok {
			return nil, false
		}
		tp := time.Now()
		changes, problem := r.applyReply(ctx, reply, iter.N)
		iter.ParseTime += time.Since(tp)
		if problem == "" {
			h := hashChanges(changes)
			hb := hashBlocks(reply)
			if prev, seen := r.attempts[hb]; seen {
				r.res.StopReason = fmt.Sprintf("circuit breaker: the reply repeats the edits of iteration %d", prev)
				return nil, false
			}
			if prev, seen := r.attempts[h]; seen {
				r.res.StopReason = fmt.Sprintf("circuit breaker: the reply repeats the edits of iteration %d", prev)
				return nil, false
			}
			r.attempts[h], r.attempts[hb] = iter.N, iter.N
			r.feedback = ""
			if r.plan == "" {
				r.plan = planOf(reply)
			}
			return changes, true
		}
		r.malformed++
		iter.Malformed++
		r.feedback = problem
		r.emit(PhaseCode, iter.N, "reply not applied: "+firstLine(problem), nil)
		if r.malformed > r.e.cfg.Agent.MaxMalformed {
			r.res.StopReason = fmt.Sprintf("too many replies that could not be applied (%d): %s", r.malformed, firstLine(problem))
			return nil, false
		}
	}
}

// applyReply parses and applies a reply to the working snapshot. problem is
// the feedback for the model when it cannot be used.
func (r *run) applyReply(ctx context.Context, reply string, it int) (map[string][]byte, string) {
	blocks, err := parseEdits(reply)
	if err == nil && len(blocks) == 0 {
		msg := "The reply contains no SEARCH/REPLACE blocks, so nothing was changed. Reply with edits in the format described."
		if l := firstLine(strings.TrimSpace(reply)); l != "" {
			msg = "The reply contains no SEARCH/REPLACE blocks (it began: " + quoteShort(l) + "). Reply with edits in the format described."
		}
		r.log.Write(runlog.KindEdit, it, map[string]any{"blocks": 0, "applied": false, "error": "no blocks"})
		return nil, msg
	}
	var changes map[string][]byte
	if err == nil {
		changes, err = applyEdits(r.e.cfg, r.cur, blocks)
	}
	if err != nil {
		r.log.Write(runlog.KindEdit, it, map[string]any{"blocks": len(blocks), "applied": false, "error": err.Error()})
		return nil, editFeedback(err)
	}
	orig := map[string][]byte{}
	for p := range changes {
		if old, ok := r.base.Text(p); ok {
			orig[p] = []byte(old)
		} else {
			orig[p] = nil
		}
	}
	if probs := checkEdits(r.req.Mode, r.e.cfg.Agent.AllowTestEdits, orig, changes); len(probs) > 0 {
		r.log.Write(runlog.KindEdit, it, map[string]any{"blocks": len(blocks), "applied": false, "refused": probs})
		return nil, "The reply was refused: " + strings.Join(probs, "; ") + "."
	}
	if fb := r.policyProblem(ctx, it, changes); fb != "" {
		r.log.Write(runlog.KindEdit, it, map[string]any{"blocks": len(blocks), "applied": false, "refused": fb})
		return nil, fb
	}
	var paths []string
	for p := range changes {
		if !r.include(p) {
			return nil, fmt.Sprintf("The reply edits %s, which fixpoint does not let the model change (secret or ignored file).", p)
		}
		paths = append(paths, p)
	}
	sort.Strings(paths)
	r.log.Write(runlog.KindEdit, it, map[string]any{"blocks": len(blocks), "applied": true, "paths": paths})
	return changes, ""
}

func (r *run) testPhase(ctx context.Context, iter *Iteration, next *sandbox.Snapshot) (*testrun.Report, bool) {
	t0 := time.Now()
	defer func() { r.res.Phases[PhaseTest] += time.Since(t0) }()
	r.dropSpec(r.spec) // an earlier iteration's, never this one's verdict
	before := r.sess
	if err := r.resetupIfChanged(ctx, iter.N, next); err != nil {
		r.sandboxFailed(ctx, "setup", err)
		return nil, false
	}
	if r.sess != before { // a new setup phase, with the installer's scripts off
		r.setupNoScripts = true // setupProj is next's (resetupIfChanged)
	}
	sel, narrow := r.selection(next)
	if !narrow && r.req.Mode == ModeFix && len(r.targets) > 0 {
		msg := "the failing tests cannot be run alone: running the whole suite in a fresh sandbox"
		switch own := r.targetsCostly(); {
		case r.suiteShort():
			msg = fmt.Sprintf("the whole suite took %s at baseline (under agent.narrow_min, %s): running it in a fresh sandbox, not the failing tests first",
				r.res.Baseline.Duration.Round(100*time.Millisecond), r.e.cfg.Agent.NarrowMin.D())
		case own > 0:
			msg = fmt.Sprintf("the failing tests took %s of the whole suite's %s at baseline: running the whole suite in a fresh sandbox, not the failing tests first",
				own.Round(100*time.Millisecond), r.res.Baseline.Duration.Round(100*time.Millisecond))
		}
		r.emit(PhaseTest, iter.N, msg, nil)
		r.dropPending(r.work)
		r.work = nil
		return nil, true // the loop's fresh run is the iteration's (selection.go)
	}
	if r.sess != nil && r.work != nil {
		// a dependency edit opened a session of its own (resetupIfChanged)
		r.dropPending(r.work)
		r.work = nil
	}
	if r.sess == nil {
		sess, done, ok := r.takeWork() // started with the iteration (prestart.go)
		if !ok {
			var err error
			sess, done, err = r.e.startSession(ctx, r.setupProj, func(line string) { r.emit(PhaseTest, iter.N, line, nil) })
			if err != nil {
				r.sandboxFailed(ctx, "start", err)
				return nil, false
			}
		}
		r.sess, r.closeFn = sess, done
	}
	ts := time.Now()
	if _, err := r.sess.Sync(ctx, next); err != nil {
		r.sandboxFailed(ctx, "sync", err)
		return nil, false
	}
	iter.SyncTime = time.Since(ts)
	tr := time.Now()
	rep, err := r.testIteration(ctx, iter, next, sel, narrow) // selection.go
	iter.SandboxTime = time.Since(tr)
	if err != nil {
		r.sandboxFailed(ctx, "test", err)
		return nil, false
	}
	if rep == nil {
		return nil, true
	}
	iter.TestTime = rep.Duration
	iter.Passed, iter.Failed = rep.Passed, rep.Failed
	r.logTest(iter.N, rep)
	msg := counts(rep)
	if iter.Targeted {
		msg = "failing tests: " + msg
	}
	r.emit(PhaseTest, iter.N, msg, rep)
	return rep, true
}

func (r *run) sandboxFailed(ctx context.Context, what string, err error) {
	if ctx.Err() != nil {
		r.stopped(ctx)
		return
	}
	r.res.StopReason = fmt.Sprintf("sandbox error during %s: %v", what, err)
}

// reflectPhase records the failure, tracks progress, trips the circuit
// breaker, and prepares memory and history for the next prompt.
func (r *run) reflectPhase(ctx context.Context, iter *Iteration, rep *testrun.Report, why []string) string {
	t0 := time.Now()
	defer func() { r.res.Phases[PhaseReflect] += time.Since(t0) }()
	prev, prevTargeted := r.lastRep, r.lastTargeted
	r.lastRep, r.lastTargeted = rep, r.repTargeted
	iter.Signature = failureSignature(rep)
	if iter.Signature == "" {
		iter.Signature = "not verified: " + strings.Join(why, "; ")
	}
	iter.Progress = progressOf(comparable(prev, prevTargeted, rep, r.repTargeted))
	r.progress = iter.Progress
	r.emit(PhaseReflect, iter.N, fmt.Sprintf("%s; %s", counts(rep), iter.Progress), rep)
	tm := time.Now()
	r.memoryObserve(ctx, iter.N, rep)
	iter.MemoryTime = time.Since(tm)
	r.history = append(r.history, r.summaryLine(iter))
	r.sigs = append(r.sigs, iter.Signature+"|"+iter.Progress)
	if n := len(r.sigs); n >= breakerRepeats {
		same := true
		for _, s := range r.sigs[n-breakerRepeats:] {
			sig, prog, _ := strings.Cut(s, "|")
			if sig != iter.Signature || prog == "improving" {
				same = false
			}
		}
		if same {
			return fmt.Sprintf("circuit breaker: the same failure repeated %d times without progress (%s)", breakerRepeats, shortSig(iter.Signature))
		}
	}
	if r.stopped(ctx) {
		return r.res.StopReason
	}
	r.reflection = ""
	if r.e.cfg.Model.Reflector != "" && iter.N < r.e.cfg.Agent.MaxIterations {
		// A separate reflector model analyses the failure; the coder
		// gets its analysis instead of reflecting in its own reply.
		r.emit(PhaseReflect, iter.N, "reflecting on the failure", rep)
		in := r.input(iter.N)
		in.LastDiff = trimOutput(r.lastDiff, r.budget()/8)
		tm := time.Now()
		reply, ok := r.ask(ctx, "reflector", iter.N, PhaseReflect, r.fit(in, reflectPrompt))
		iter.ModelTime += time.Since(tm)
		if !ok {
			return r.res.StopReason
		}
		r.reflection = trimOutput(strings.TrimSpace(reply), 1500)
	}
	return ""
}

// summaryLine is one line per earlier attempt: iteration, signature, counts
// and what was tried.
func (r *run) summaryLine(iter *Iteration) string {
	changed, deleted := r.base.Diff(r.cur)
	tried := strings.Join(append(changed, deleted...), ", ")
	if tried == "" {
		tried = "no file changes"
	}
	return fmt.Sprintf("iteration %d: %d passed, %d failed (%s); changed %s; failure: %s", iter.N, iter.Passed, iter.Failed, iter.Progress, tried, shortSig(iter.Signature))
}

func (r *run) endIteration(iter Iteration, t0 time.Time) {
	iter.Duration = time.Since(t0)
	r.res.Iterations = append(r.res.Iterations, iter)
	r.log.Write(runlog.KindIteration, iter.N, iter)
}

// finish fills the result's changes and diff, resolves memory and writes
// the result entry.
func (r *run) finish(ctx context.Context) {
	r.res.Changes = changesBetween(r.base, r.cur)
	r.res.Diff = UnifiedDiff(r.res.Changes)
	r.res.Wall = time.Since(r.started)
	if r.res.Verified {
		r.memoryResolve(ctx)
	}
	r.emitFinal()
	r.finishLog()
}

func (r *run) emitFinal() {
	ph := PhaseGaveUp
	if r.res.Verified {
		ph = PhaseDone
	}
	r.emit(ph, len(r.res.Iterations), r.res.StopReason, r.res.Final)
}

func (r *run) openLog() {
	dir := filepath.Join(r.e.cfg.DataDir, "runs")
	w, err := runlog.Create(dir, r.res.RunID, &runlog.Options{Redact: r.mask})
	if err != nil {
		r.e.warnf("the run log is off: %v", err)
		return
	}
	r.log = w
	r.res.LogPath = w.Path()
	r.log.Write(runlog.KindStart, 0, runlog.Start{RunID: r.res.RunID, Mode: string(r.req.Mode), Goal: r.req.Goal, Root: r.req.Root, Model: r.e.cfg.Model.RoleModel("coder"), Time: r.started.UTC()})
}

func (r *run) finishLog() {
	if r.log == nil {
		return
	}
	if err := r.log.Write(runlog.KindResult, 0, r.res); err != nil {
		r.e.warnf("the run log is incomplete: %v", err)
	}
	r.log.Close()
}

func (e *Engine) warnf(format string, args ...any) {
	fmt.Fprintf(e.warn, "fixpoint: warning: "+format+"\n", args...)
}

func (r *run) emit(ph Phase, it int, msg string, rep *testrun.Report) {
	maxIt := r.e.cfg.Agent.MaxIterations
	if it > 0 {
		msg = fmt.Sprintf("Iteration %d/%d · %s", it, maxIt, msg)
	}
	r.onEvent(Event{RunID: r.res.RunID, Phase: ph, Iteration: it, MaxIterations: maxIt, Message: msg, Report: rep, TokensIn: r.res.TokensIn, TokensOut: r.res.TokensOut})
}

func counts(rep *testrun.Report) string {
	if rep == nil {
		return ""
	}
	s := fmt.Sprintf("%d passed, %d failed", rep.Passed, rep.Failed)
	switch {
	case rep.TimedOut:
		s += ", timed out"
	case rep.OOM:
		s += ", killed: out of memory"
	}
	if rep.Failed == 0 && rep.ExitCode != 0 && !rep.TimedOut && !rep.OOM {
		s += fmt.Sprintf(", exit code %d", rep.ExitCode)
	}
	if len(rep.Mismatch) > 0 {
		s += ", results disagree with the runner's own output"
	}
	if c := rep.OutputCut; c != nil {
		s += ", output cut at the cap"
		if c.Parsed != testrun.ParsedCut {
			s += " (results parsed in full)"
		}
	}
	return s
}

// outcome is the class of a test run's result, compared before counts:
// an attempt that could not finish (killed, timed out) or could not run
// its tests (build failure) is not comparable by its counts with one whose
// tests ran.
type outcome int

const (
	outcomeKilled  outcome = iota // OOM-killed (137), killed by a signal, crashed
	outcomeTimeout                // wall-clock or CPU limit
	outcomeBuild                  // nothing passed or failed: build, collection or setup error
	outcomeTests                  // tests ran, some failed
	outcomePass                   // verified
)

var outcomeNames = [...]string{"killed", "timed out", "build failure", "test failures", "pass"}

func (o outcome) String() string { return outcomeNames[o] }

// rank orders outcomes for progress. Killed and timed out share the
// lowest rank: neither is ever an improvement, not even over the other.
func (o outcome) rank() int {
	if o == outcomeKilled {
		return int(outcomeTimeout)
	}
	return int(o)
}

// outcomeOf classifies a report.
func outcomeOf(r *testrun.Report) outcome {
	switch {
	case r.OOM || r.ExitCode == 137 || (r.ExitCode > 128 && r.ExitCode != 124 && !r.TimedOut):
		return outcomeKilled
	case r.TimedOut:
		return outcomeTimeout
	case r.OK():
		return outcomePass
	}
	for _, t := range r.Tests {
		if t.Status == testrun.StatusPass || t.Status == testrun.StatusFail {
			return outcomeTests
		}
	}
	return outcomeBuild
}

// progressOf compares two reports: first their outcome classes (a better
// class is improving, a worse one regressing), then, within the class of
// finished runs, the counts: fewer failures, or more passes at equal
// failures, is improving. A killed or timed-out attempt is never improving.
func progressOf(prev, cur *testrun.Report) string {
	if prev == nil {
		return "stable"
	}
	po, co := outcomeOf(prev), outcomeOf(cur)
	switch {
	case co.rank() > po.rank():
		return "improving"
	case co.rank() < po.rank():
		return "regressing"
	case co != po || co.rank() == outcomeTimeout.rank():
		return "stable"
	}
	pf, cf := failScore(prev), failScore(cur)
	switch {
	case cf < pf, cf == pf && cur.Passed > prev.Passed:
		return "improving"
	case cf > pf, cf == pf && cur.Passed < prev.Passed:
		return "regressing"
	}
	return "stable"
}

func failScore(r *testrun.Report) int {
	n := r.Failed
	if n == 0 && !r.OK() {
		n = 1
	}
	return n
}

var (
	sigNumRe  = regexp.MustCompile(`0x[0-9a-fA-F]+|\d+(\.\d+)?`)
	sigPathRe = regexp.MustCompile(`(/[\w.-]+)+/`)
)

// failureSignature normalises a report's failures: the failing ids and
// their messages with numbers, addresses and directories masked.
func failureSignature(rep *testrun.Report) string {
	var parts []string
	for _, t := range rep.Failures() {
		msg := sigPathRe.ReplaceAllString(firstLine(t.Message), "")
		msg = sigNumRe.ReplaceAllString(msg, "N")
		parts = append(parts, t.ID+": "+msg)
	}
	if len(parts) == 0 && !rep.OK() {
		out := sigNumRe.ReplaceAllString(sigPathRe.ReplaceAllString(firstLine(strings.TrimSpace(rep.Output)), ""), "N")
		parts = append(parts, fmt.Sprintf("exit %d: %s", rep.ExitCode, out))
	}
	sort.Strings(parts)
	return strings.Join(parts, "; ")
}

func shortSig(s string) string {
	if len(s) > 160 {
		return s[:160] + "…"
	}
	return s
}

// hashChanges identifies an attempt by the files it produces, so the same
// edits written differently count as a repeat.
func hashChanges(changes map[string][]byte) string {
	h := sha256.New()
	for _, p := range sortedKeys(changes) {
		fmt.Fprintf(h, "%s\x00", p)
		h.Write(bytes.Join(bytes.Fields(changes[p]), []byte(" ")))
		h.Write([]byte{0})
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// hashBlocks identifies a reply by its edit blocks, whitespace-normalised.
func hashBlocks(reply string) string {
	blocks, _ := parseEdits(reply)
	h := sha256.New()
	h.Write([]byte("blocks\x00"))
	for _, b := range blocks {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", b.Path, strings.Join(strings.Fields(b.Search), " "), strings.Join(strings.Fields(b.Replace), " "))
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func changesBetween(base, cur *sandbox.Snapshot) []FileChange {
	changed, deleted := base.Diff(cur)
	var out []FileChange
	for _, p := range changed {
		_, existed := base.Files[p]
		after, _ := cur.Read(p)
		c := FileChange{Path: p, After: after, Created: !existed}
		if existed {
			c.Before, _ = base.Read(p)
		}
		out = append(out, c)
	}
	for _, p := range deleted {
		before, _ := base.Read(p)
		out = append(out, FileChange{Path: p, Before: before, Deleted: true})
	}
	return out
}

// removeLine drops the goal comment's line from its file.
func removeLine(snap *sandbox.Snapshot, loc Location) *sandbox.Snapshot {
	text, ok := snap.Text(loc.Path)
	if !ok {
		return snap
	}
	lines := strings.SplitAfter(text, "\n")
	if loc.Line < 0 || loc.Line >= len(lines) {
		return snap
	}
	lines = append(lines[:loc.Line:loc.Line], lines[loc.Line+1:]...)
	return snap.With(map[string][]byte{loc.Path: []byte(strings.Join(lines, ""))})
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return strings.TrimSpace(l)
}

func quoteShort(s string) string {
	if len(s) > 120 {
		s = s[:120] + "…"
	}
	return fmt.Sprintf("%q", s)
}

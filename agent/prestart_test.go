package agent

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// guard bounds a wait for an event the code under test must cause: it
// fails the test instead of hanging it, and asserts nothing about time.
const guard = 3 * time.Minute

// watchBackend records every session a run starts (its build cache) and
// every command and sync in it, and lets a test wait for events: a number
// of starts of a kind, a whole-suite test run on a given state.
type watchBackend struct {
	sandbox.Backend
	mu       sync.Mutex
	sessions []*watchSession
	starts   map[sandbox.BuildCache]int
	waiters  []func() // re-checked after each event
	// beforeRun, when set, runs before each command (outside mu).
	beforeRun func(s *watchSession, args []string)
	// wholeOn is closed, per state (the hash of stats/stats.go), when a
	// whole-suite test run starts on it in a fresh-cache session.
	wholeOn map[string]chan struct{}
}

type watchSession struct {
	sandbox.Session
	b     *watchBackend
	cache sandbox.BuildCache
	state string     // hash of stats/stats.go as last synced; guarded by b.mu
	tests [][]string // the go test commands run in it; guarded by b.mu
}

func newWatchBackend(t *testing.T) *watchBackend {
	return &watchBackend{Backend: testBackend(t), starts: map[sandbox.BuildCache]int{}, wholeOn: map[string]chan struct{}{}}
}

func (b *watchBackend) Start(ctx context.Context, spec sandbox.Spec) (sandbox.Session, error) {
	s, err := b.Backend.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	ws := &watchSession{Session: s, b: b, cache: spec.BuildCache}
	b.mu.Lock()
	b.sessions = append(b.sessions, ws)
	b.starts[spec.BuildCache]++
	waiters := slices.Clone(b.waiters)
	b.mu.Unlock()
	for _, w := range waiters {
		w()
	}
	return ws, nil
}

// wholeChan is the channel closed when the whole suite starts on state.
// Called with b.mu held.
func (b *watchBackend) wholeChan(state string) chan struct{} {
	c, ok := b.wholeOn[state]
	if !ok {
		c = make(chan struct{})
		b.wholeOn[state] = c
	}
	return c
}

// waitStarts returns a channel closed once n sessions with cache have
// started.
func (b *watchBackend) waitStarts(cache sandbox.BuildCache, n int) <-chan struct{} {
	c := make(chan struct{})
	var once sync.Once
	check := func() {
		b.mu.Lock()
		ok := b.starts[cache] >= n
		b.mu.Unlock()
		if ok {
			once.Do(func() { close(c) })
		}
	}
	b.mu.Lock()
	b.waiters = append(b.waiters, check)
	b.mu.Unlock()
	check()
	return c
}

func stateOf(snap *sandbox.Snapshot) string {
	text, _ := snap.Read("stats/stats.go")
	return fmt.Sprintf("%x", sha256.Sum256(text))
}

func (s *watchSession) Sync(ctx context.Context, snap *sandbox.Snapshot) (sandbox.SyncStats, error) {
	st, err := s.Session.Sync(ctx, snap)
	s.b.mu.Lock()
	s.state = stateOf(snap)
	s.b.mu.Unlock()
	return st, err
}

// isGoTest reports whether args run go test, and whether narrowed (-run).
func isGoTest(args []string) (test, narrowed bool) {
	if len(args) < 2 || !strings.HasSuffix(args[0], "go") || args[1] != "test" {
		return false, false
	}
	return true, slices.Contains(args, "-run")
}

func (s *watchSession) Run(ctx context.Context, c sandbox.Command) (*sandbox.Result, error) {
	if test, narrowed := isGoTest(c.Args); test {
		s.b.mu.Lock()
		s.tests = append(s.tests, c.Args)
		if !narrowed && s.cache == sandbox.BuildCacheFresh {
			ch := s.b.wholeChan(s.state)
			select {
			case <-ch:
			default:
				close(ch)
			}
		}
		s.b.mu.Unlock()
	}
	if f := s.b.beforeRun; f != nil {
		f(s, c.Args)
	}
	return s.Session.Run(ctx, c)
}

func (s *watchSession) WorkDir() string {
	if wd, ok := s.Session.(interface{ WorkDir() string }); ok {
		return wd.WorkDir()
	}
	return ""
}

// gatedModel waits for gate before its first answer.
type gatedModel struct {
	Model
	gate   <-chan struct{}
	once   sync.Once
	missed bool
}

func (m *gatedModel) Chat(ctx context.Context, req llm.Request, onDelta func(string)) (*llm.Response, error) {
	m.once.Do(func() {
		select {
		case <-m.gate:
		case <-time.After(guard):
			m.missed = true
		}
	})
	return m.Model.Chat(ctx, req, onDelta)
}

// TestRunStartsSessionsWhileTheModelAnswers: the working session and the
// verifying one start while the model is still answering (its answer
// waits for both starts), after the baseline's session; the fix then
// runs in them, with no other session started, and the setup phase ran
// once for the three.
func TestRunStartsSessionsWhileTheModelAnswers(t *testing.T) {
	skipShort(t)
	b := newWatchBackend(t)
	m := &gatedModel{Model: goBugModel(demo.GoBugFix), gate: b.waitStarts(sandbox.BuildCacheFresh, 2)}
	e := New(testConfig(t), &Options{Model: m, Backend: b})
	defer e.Close()
	res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: copyTree(t, goBugDir)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.missed {
		t.Fatal("the working and verifying sessions did not start while the model answered")
	}
	if !res.Verified || res.FullRuns != 2 || res.TargetedRuns != 1 {
		t.Fatalf("verified %v (%s), full runs %d, targeted %d; want verified, 2, 1", res.Verified, res.StopReason, res.FullRuns, res.TargetedRuns)
	}
	e.WaitClosing()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.sessions) != 3 || b.starts[sandbox.BuildCacheUser] != 1 || b.starts[sandbox.BuildCacheFresh] != 2 {
		t.Errorf("sessions started %d (%v); want 3: the baseline's (user cache), the working and the verifying (fresh)", len(b.sessions), b.starts)
	}
	// The three sessions are prepared alike: one setup phase for the run.
	if n := e.setups.Load(); n != 1 {
		t.Errorf("setup phases run: %d, want 1 for the run's three sessions", n)
	}
}

// TestWholeSuiteRunsBesideTheFailingTests: in each iteration the run of the
// failing tests waits until the whole suite has started on the same state
// in a fresh session, so it cannot pass unless that run starts beside it.
// A wrong first edit fails them: the whole suite started beside them is
// cancelled and its session never serves again; the second edit's whole
// suite, started beside its run, is the verdict. No session that runs the
// model's code runs the whole suite twice, or it and the failing tests.
func TestWholeSuiteRunsBesideTheFailingTests(t *testing.T) {
	skipShort(t)
	fix := "stats/stats.go\n<<<<<<< SEARCH\n\treturn s[mid-1], nil\n=======\n\tif len(s)%2 == 0 {\n\t\treturn (s[mid-1] + s[mid]) / 2, nil\n\t}\n\treturn s[mid], nil\n>>>>>>> REPLACE\n"
	b := newWatchBackend(t)
	var missed []string
	b.beforeRun = func(s *watchSession, args []string) {
		if _, narrowed := isGoTest(args); !narrowed {
			return
		}
		b.mu.Lock()
		state := s.state
		ch := b.wholeChan(state)
		b.mu.Unlock()
		select {
		case <-ch:
		case <-time.After(guard):
			b.mu.Lock()
			missed = append(missed, state)
			b.mu.Unlock()
		}
	}
	m := goBugModel(wrongMedian("s[mid]", "s[mid-1]"), fix)
	e := New(testConfig(t), &Options{Model: m, Backend: b})
	defer e.Close()
	res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: copyTree(t, goBugDir)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e.WaitClosing()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(missed) > 0 {
		t.Fatalf("the failing tests ran without the whole suite started beside them on %d state(s)", len(missed))
	}
	if !res.Verified || len(res.Iterations) != 2 {
		t.Fatalf("verified %v (%s), %d iterations; want verified in 2", res.Verified, res.StopReason, len(res.Iterations))
	}
	// Iteration 1's whole suite, cancelled, is not a full run; the
	// baseline's and iteration 2's are.
	if res.FullRuns != 2 || res.CancelledRuns != 1 {
		t.Errorf("full runs %d, cancelled %d; want 2 and 1", res.FullRuns, res.CancelledRuns)
	}
	wholeStates := map[string]bool{}
	for i, s := range b.sessions {
		var whole, narrowed int
		for _, c := range s.tests {
			if _, n := isGoTest(c); n {
				narrowed++
			} else {
				whole++
			}
		}
		if s.cache == sandbox.BuildCacheFresh && (whole > 1 || whole > 0 && narrowed > 0) {
			t.Errorf("session %d (model's code) ran the whole suite %d times and the failing tests %d times: a verifying session served twice", i, whole, narrowed)
		}
		if s.cache == sandbox.BuildCacheFresh && whole == 1 {
			wholeStates[s.state] = true
		}
	}
	if len(wholeStates) != 2 {
		t.Errorf("the whole suite ran in fresh sessions on %d states, want 2 (each edit's, beside its failing tests)", len(wholeStates))
	}
}

// oneSlotBackend lends one session at a time, as the benchmark's pool
// does when it has one: Start waits until the last one lent is closed.
type oneSlotBackend struct {
	sandbox.Backend
	slot chan struct{}
	mu   sync.Mutex
	// inFlight counts the Start calls under way; overlapped is set when
	// one began while another was (waiting for the slot, or starting).
	inFlight   int
	overlapped bool
}

func (b *oneSlotBackend) LendsSessions() bool { return true }

func (b *oneSlotBackend) Start(ctx context.Context, spec sandbox.Spec) (sandbox.Session, error) {
	b.mu.Lock()
	b.inFlight++
	b.overlapped = b.overlapped || b.inFlight > 1
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.inFlight--
		b.mu.Unlock()
	}()
	select {
	case b.slot <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s, err := b.Backend.Start(ctx, spec)
	if err != nil {
		<-b.slot
		return nil, err
	}
	return &slotSession{Session: s, slot: b.slot}, nil
}

type slotSession struct {
	sandbox.Session
	slot chan struct{}
	once sync.Once
}

func (s *slotSession) Close() error {
	err := s.Session.Close()
	s.once.Do(func() { <-s.slot })
	return err
}

func (s *slotSession) WorkDir() string {
	if wd, ok := s.Session.(interface{ WorkDir() string }); ok {
		return wd.WorkDir()
	}
	return ""
}

// TestPrestartOnALendingBackend: on a backend that lends one session at a
// time, the sessions started ahead come one after the other, working
// first, and the fix is verified: started side by side, the verifying
// session could take the only one while the run waits for the working one.
func TestPrestartOnALendingBackend(t *testing.T) {
	skipShort(t)
	b := &oneSlotBackend{Backend: testBackend(t), slot: make(chan struct{}, 1)}
	e := New(testConfig(t), &Options{Model: goBugModel(demo.GoBugFix), Backend: b})
	defer e.Close()
	ctx, cancel := context.WithTimeout(t.Context(), guard) // a deadlock fails, not hangs
	defer cancel()
	res, err := e.Run(ctx, Request{Mode: ModeFix, Root: copyTree(t, goBugDir)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verified || res.FullRuns != 2 {
		t.Fatalf("verified %v (%s), full runs %d; want verified with 2", res.Verified, res.StopReason, res.FullRuns)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.overlapped {
		t.Error("two starts were under way at once on a backend that lends one session")
	}
}

// TestShortSuiteGoesStraightToTheVerifyingRun: when the whole suite's
// baseline run took less than agent.narrow_min, an iteration does not
// run the failing tests alone first: no working session starts, no
// narrowed command runs, and the verifying run of the whole suite in a
// fresh session is the iteration's run and the verdict (two runs of the
// whole suite in all, in two sessions).
func TestShortSuiteGoesStraightToTheVerifyingRun(t *testing.T) {
	skipShort(t)
	b := newWatchBackend(t)
	cfg := testConfig(t)
	cfg.Agent.NarrowMin = config.Duration(24 * time.Hour) // every suite is short
	e := New(cfg, &Options{Model: goBugModel(demo.GoBugFix), Backend: b})
	defer e.Close()
	var said bool
	res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: copyTree(t, goBugDir)}, func(ev Event) {
		said = said || strings.Contains(ev.Message, "under agent.narrow_min")
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verified || res.FullRuns != 2 || res.TargetedRuns != 0 {
		t.Fatalf("verified %v (%s), full runs %d, targeted %d; want verified, 2, 0", res.Verified, res.StopReason, res.FullRuns, res.TargetedRuns)
	}
	if len(res.Iterations) != 1 || res.Iterations[0].Targeted {
		t.Errorf("iterations %+v: want one that did not run the failing tests alone", res.Iterations)
	} else if it := res.Iterations[0]; it.TestTime <= 0 || it.Passed != res.Final.Passed || it.Passed == 0 {
		// The fresh run is the iteration's run: its time and counts are
		// the iteration's (the loop bench's overhead is what is left).
		t.Errorf("iteration test time %v, passed %d (final %d): want the fresh run's", it.TestTime, it.Passed, res.Final.Passed)
	}
	if !said {
		t.Error("no progress line says why the failing tests did not run first (agent.narrow_min)")
	}
	e.WaitClosing()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.sessions) != 2 || b.starts[sandbox.BuildCacheUser] != 1 || b.starts[sandbox.BuildCacheFresh] != 1 {
		t.Errorf("sessions started %d (%v); want 2: the baseline's (user cache) and the verifying one (fresh)", len(b.sessions), b.starts)
	}
	for _, s := range b.sessions {
		for _, args := range s.tests {
			if _, narrowed := isGoTest(args); narrowed {
				t.Errorf("a narrowed run %q ran: the suite is short", args)
			}
		}
	}
}

// TestShortSuiteThreshold: only a baseline whose duration is known and
// under agent.narrow_min counts as short; 0 turns the rule off.
func TestShortSuiteThreshold(t *testing.T) {
	cfg := testConfig(t)
	for _, c := range []struct {
		min, took time.Duration
		short     bool
	}{
		{5 * time.Second, 2 * time.Second, true},
		{5 * time.Second, 5 * time.Second, false},
		{5 * time.Second, 40 * time.Second, false},
		{5 * time.Second, 0, false}, // unknown
		{0, 2 * time.Second, false}, // rule off
	} {
		cfg.Agent.NarrowMin = config.Duration(c.min)
		r := &run{e: New(cfg, &Options{}), res: &Result{Baseline: &testrun.Report{Duration: c.took}}}
		if got := r.suiteShort(); got != c.short {
			t.Errorf("narrow_min %s, baseline took %s: short = %v, want %v", c.min, c.took, got, c.short)
		}
	}
	r := &run{e: New(cfg, &Options{}), res: &Result{}}
	if r.suiteShort() {
		t.Error("no baseline: short, want not")
	}
}

// seedBackend is a watchBackend that honours sandbox.Spec.DeferSeed (as
// docker does): it records, for each SeedBuildCache call, whether the
// session was started with DeferSeed and whether the baseline's run (the
// whole suite in the user-cache session) had ended by then.
type seedBackend struct {
	*watchBackend
	smu         sync.Mutex
	baselineRan bool
	traceRan    bool // the traced run of the failing tests has ended
	seeds       []seedCall
	deferred    []*watchSession // the sessions started with DeferSeed
}

type seedCall struct{ deferred, afterBaseline, afterTrace bool }

// isTrace reports whether args are the traced run of the failing tests
// (lang/golang TraceTests: a narrowed go test with a cover profile, which
// testrun wraps in a shell that clears the profile first).
func isTrace(args []string) bool {
	i := slices.Index(args, "go")
	if i < 0 {
		return false
	}
	_, narrowed := isGoTest(args[i:])
	return narrowed && slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "-coverprofile=") })
}

func (b *seedBackend) DefersSeed() bool { return true }

func (b *seedBackend) Start(ctx context.Context, spec sandbox.Spec) (sandbox.Session, error) {
	s, err := b.watchBackend.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	ws := s.(*watchSession)
	if spec.DeferSeed {
		b.smu.Lock()
		b.deferred = append(b.deferred, ws)
		b.smu.Unlock()
	}
	return &seedSession{watchSession: ws, b: b, deferSeed: spec.DeferSeed}, nil
}

type seedSession struct {
	*watchSession
	b         *seedBackend
	deferSeed bool
}

func (s *seedSession) SeedBuildCache(context.Context) {
	s.b.smu.Lock()
	defer s.b.smu.Unlock()
	s.b.seeds = append(s.b.seeds, seedCall{deferred: s.deferSeed, afterBaseline: s.b.baselineRan, afterTrace: s.b.traceRan})
}

func (s *seedSession) Run(ctx context.Context, c sandbox.Command) (*sandbox.Result, error) {
	res, err := s.watchSession.Run(ctx, c)
	if test, narrowed := isGoTest(c.Args); test && !narrowed && s.cache == sandbox.BuildCacheUser {
		s.b.smu.Lock()
		s.b.baselineRan = true
		s.b.smu.Unlock()
	}
	if isTrace(c.Args) && s.cache == sandbox.BuildCacheUser {
		s.b.smu.Lock()
		s.b.traceRan = true
		s.b.smu.Unlock()
	}
	return res, err
}

// TestVerifyingSessionStartsBesideTheBaseline: on a backend whose fresh
// sessions are seeded when asked (sandbox.SeedDeferrer), the verifying
// session starts before the baseline's run does (the baseline's run waits
// for that start), is seeded once, after the baseline's run has ended
// (so its cache is a copy of what the baseline compiled), and runs the
// verdict's whole suite; the run starts no more sessions than before.
func TestVerifyingSessionStartsBesideTheBaseline(t *testing.T) {
	skipShort(t)
	b := &seedBackend{watchBackend: newWatchBackend(t)}
	fresh := b.waitStarts(sandbox.BuildCacheFresh, 1)
	var missed bool
	b.beforeRun = func(s *watchSession, args []string) {
		if test, narrowed := isGoTest(args); test && !narrowed && s.cache == sandbox.BuildCacheUser {
			select {
			case <-fresh:
			case <-time.After(guard):
				missed = true
			}
		}
	}
	e := New(testConfig(t), &Options{Model: goBugModel(demo.GoBugFix), Backend: b})
	defer e.Close()
	res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: copyTree(t, goBugDir)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if missed {
		t.Fatal("no verifying session started before the baseline's run")
	}
	if !res.Verified || res.FullRuns != 2 {
		t.Fatalf("verified %v (%s), full runs %d; want verified, 2", res.Verified, res.StopReason, res.FullRuns)
	}
	e.WaitClosing()
	b.smu.Lock()
	defer b.smu.Unlock()
	// Two sessions start early: the verifying one beside the baseline,
	// the working one beside the trace (TestWorkingSessionStartsBesideTheTrace).
	if len(b.seeds) != 2 || !b.seeds[0].deferred || !b.seeds[0].afterBaseline || !b.seeds[1].deferred || !b.seeds[1].afterBaseline {
		t.Errorf("seeds %+v: want two, of the sessions started with DeferSeed, after the baseline's run", b.seeds)
	}
	if len(b.deferred) != 2 {
		t.Fatalf("%d sessions started with DeferSeed, want 2 (the verifying one, the working one)", len(b.deferred))
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	var whole bool
	for _, args := range b.deferred[0].tests {
		if test, narrowed := isGoTest(args); test && !narrowed {
			whole = true
		}
	}
	if !whole {
		t.Errorf("the first early session ran %q: want the verdict's whole suite", b.deferred[0].tests)
	}
	if len(b.sessions) != 3 || b.starts[sandbox.BuildCacheUser] != 1 || b.starts[sandbox.BuildCacheFresh] != 2 {
		t.Errorf("sessions started %d (%v); want 3: the baseline's, the verifying and the working", len(b.sessions), b.starts)
	}
}

// TestEarlyVerifyingSessionDroppedWhenAlreadyPassing: a verifying session
// started beside a baseline that passes (nothing to fix) is removed, and
// the run ends without waiting for anything else.
func TestEarlyVerifyingSessionDroppedWhenAlreadyPassing(t *testing.T) {
	skipShort(t)
	b := &seedBackend{watchBackend: newWatchBackend(t)}
	root := copyTree(t, goBugDir)
	fixed := filepath.Join(root, "stats", "stats.go")
	src, err := os.ReadFile(fixed)
	if err != nil {
		t.Fatal(err)
	}
	// demo.GoBugFix applied by hand: the tests already pass.
	good := strings.Replace(string(src), "\treturn s[mid], nil", "\tif len(s)%2 == 0 {\n\t\treturn (s[mid-1] + s[mid]) / 2, nil\n\t}\n\treturn s[mid], nil", 1)
	if good == string(src) {
		t.Fatal("fixture changed: cannot fix it by hand")
	}
	if err := os.WriteFile(fixed, []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	e := New(testConfig(t), &Options{Model: goBugModel(demo.GoBugFix), Backend: b})
	res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: root}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.StopReason != StopAlreadyPassing {
		t.Fatalf("stop reason %q, want %q", res.StopReason, StopAlreadyPassing)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.starts[sandbox.BuildCacheFresh] > 1 {
		t.Errorf("fresh sessions started: %d, want at most the one beside the baseline", b.starts[sandbox.BuildCacheFresh])
	}
	e.mu.Lock()
	n := len(e.sessions)
	e.mu.Unlock()
	if n != 0 {
		t.Errorf("%d sessions left open after Close", n)
	}
}

// TestCostlyTargetsGoStraightToTheVerifyingRun: when the tests that failed
// at baseline took most of the whole suite's run by their own reported
// times, an iteration does not run them alone first (it would cost nearly
// a suite more beside the verifying run): no narrowed command runs, no
// working session starts, a progress line says why, and the verifying run
// of the whole suite in a fresh session is the iteration's run and the
// verdict. The same baseline with the failing tests cheap runs them first:
// their share, not anything else, decides.
func TestCostlyTargetsGoStraightToTheVerifyingRun(t *testing.T) {
	skipShort(t)
	cfg := testConfig(t)
	cfg.Agent.NarrowMin = config.Duration(time.Nanosecond) // no suite is short
	base, err := New(cfg, &Options{Backend: testBackend(t)}).Test(t.Context(), copyTree(t, goBugDir), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(base.Failures()) == 0 || base.Duration <= 0 {
		t.Fatalf("baseline of %s: %d failures, took %v; want failures and a duration", goBugDir, len(base.Failures()), base.Duration)
	}
	withShare := func(share float64) *testrun.Report {
		rep := *base
		rep.Tests = slices.Clone(base.Tests)
		for i := range rep.Tests {
			if rep.Tests[i].Status != testrun.StatusPass {
				rep.Tests[i].Duration = time.Duration(share * float64(rep.Duration))
			}
		}
		return &rep
	}
	for _, c := range []struct {
		share    float64
		targeted int
	}{{0.9, 0}, {0.01, 1}} {
		b := newWatchBackend(t)
		e := New(cfg, &Options{Model: goBugModel(demo.GoBugFix), Backend: b})
		var said bool
		res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: copyTree(t, goBugDir), Baseline: withShare(c.share)}, func(ev Event) {
			said = said || strings.Contains(ev.Message, "of the whole suite's")
		})
		if err != nil {
			t.Fatal(err)
		}
		e.WaitClosing()
		e.Close()
		if !res.Verified || res.TargetedRuns != c.targeted {
			t.Errorf("failing tests %.0f%% of the suite: verified %v (%s), targeted runs %d; want verified, %d", 100*c.share, res.Verified, res.StopReason, res.TargetedRuns, c.targeted)
		}
		if said != (c.targeted == 0) {
			t.Errorf("failing tests %.0f%% of the suite: a progress line said they were most of it: %v", 100*c.share, said)
		}
		b.mu.Lock()
		narrowed, user := false, b.starts[sandbox.BuildCacheUser]
		for _, s := range b.sessions {
			for _, args := range s.tests {
				_, n := isGoTest(args)
				narrowed = narrowed || n
			}
		}
		b.mu.Unlock()
		if narrowed != (c.targeted == 1) {
			t.Errorf("failing tests %.0f%% of the suite: a narrowed run ran: %v", 100*c.share, narrowed)
		}
		if c.targeted == 0 && user != 0 {
			t.Errorf("failing tests most of the suite: %d working sessions started; want none", user)
		}
	}
}

// TestTargetsCostlyShare: the failing tests' own times count against the
// whole suite's run once each (a subtest is inside its parent's time, a
// test inside its package's entry); under half, unknown, or with
// agent.narrow_min 0 (always first), they run first.
func TestTargetsCostlyShare(t *testing.T) {
	cfg := testConfig(t)
	res := func(id, pkg string, d time.Duration) testrun.Result {
		return testrun.Result{ID: id, Package: pkg, Status: testrun.StatusFail, Duration: d}
	}
	s := time.Second
	for _, c := range []struct {
		name    string
		min     time.Duration
		suite   time.Duration
		targets []testrun.Result
		want    time.Duration
	}{
		{"most of the suite", s, 10 * s, []testrun.Result{res("p.TestA", "p", 6*s)}, 6 * s},
		{"half", s, 10 * s, []testrun.Result{res("p.TestA", "p", 3*s), res("p.TestB", "p", 2*s)}, 5 * s},
		{"under half", s, 10 * s, []testrun.Result{res("p.TestA", "p", 4*s)}, 0},
		{"subtests inside their parent", s, 10 * s, []testrun.Result{res("p.TestA", "p", 4*s), res("p.TestA/x", "p", 2*s), res("p.TestA/x/y", "p", 2*s)}, 0},
		{"tests inside their package's entry", s, 10 * s, []testrun.Result{res("p", "p", 4*s), res("p.TestA", "p", 4*s)}, 0},
		{"no durations", s, 10 * s, []testrun.Result{res("p.TestA", "p", 0)}, 0},
		{"narrow_min 0: always first", 0, 10 * s, []testrun.Result{res("p.TestA", "p", 9*s)}, 0},
		{"no suite duration", s, 0, []testrun.Result{res("p.TestA", "p", 9*s)}, 0},
	} {
		cfg.Agent.NarrowMin = config.Duration(c.min)
		r := &run{e: New(cfg, &Options{}), targets: c.targets, res: &Result{Baseline: &testrun.Report{Duration: c.suite}}}
		if got := r.targetsCostly(); got != c.want {
			t.Errorf("%s: targetsCostly = %v, want %v", c.name, got, c.want)
		}
	}
	if (&run{e: New(cfg, &Options{}), res: &Result{}}).targetsCostly() != 0 {
		t.Error("no baseline: costly, want not")
	}
}

// TestWorkingSessionStartsBesideTheTrace: on a backend whose fresh
// sessions are seeded when asked (sandbox.SeedDeferrer), the first
// iteration's working session starts once the baseline's report is in,
// before the traced run of the failing tests (which waits for that
// start), is seeded only after the trace has ended (the trace writes the
// user's build cache too), runs the failing tests alone and never the
// verdict's whole suite; the run starts no more sessions than before.
func TestWorkingSessionStartsBesideTheTrace(t *testing.T) {
	skipShort(t)
	b := &seedBackend{watchBackend: newWatchBackend(t)}
	work := b.waitStarts(sandbox.BuildCacheFresh, 2) // the verifying one, then the working one
	var traced, missed bool
	b.beforeRun = func(s *watchSession, args []string) {
		if isTrace(args) && s.cache == sandbox.BuildCacheUser {
			traced = true
			select {
			case <-work:
			case <-time.After(guard):
				missed = true
			}
		}
	}
	e := New(testConfig(t), &Options{Model: goBugModel(demo.GoBugFix), Backend: b})
	defer e.Close()
	res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: copyTree(t, goBugDir)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !traced {
		t.Fatal("no traced run of the failing tests: the test cannot tell when the working session started")
	}
	if missed {
		t.Fatal("the working session did not start before the trace ran")
	}
	if !res.Verified || res.FullRuns != 2 || res.TargetedRuns != 1 {
		t.Fatalf("verified %v (%s), full runs %d, targeted %d; want verified, 2, 1", res.Verified, res.StopReason, res.FullRuns, res.TargetedRuns)
	}
	e.WaitClosing()
	b.smu.Lock()
	defer b.smu.Unlock()
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.deferred) != 2 || len(b.seeds) != 2 {
		t.Fatalf("%d sessions started with DeferSeed, %d seeded; want 2 and 2", len(b.deferred), len(b.seeds))
	}
	// The working session is the one that ran the failing tests alone.
	var worked *watchSession
	for _, s := range b.deferred {
		for _, args := range s.tests {
			if test, narrowed := isGoTest(args); test && narrowed {
				worked = s
			} else if test && s == b.deferred[1] {
				t.Errorf("the working session ran the whole suite %q: only a session nothing else ran in verifies", args)
			}
		}
	}
	if worked != b.deferred[1] {
		t.Errorf("the failing tests ran in %p, want the session started beside the trace (%p)", worked, b.deferred[1])
	}
	if !b.seeds[1].afterTrace {
		t.Errorf("seeds %+v: the working session's cache was seeded before the trace had ended", b.seeds)
	}
	if len(b.sessions) != 3 || b.starts[sandbox.BuildCacheUser] != 1 || b.starts[sandbox.BuildCacheFresh] != 2 {
		t.Errorf("sessions started %d (%v); want 3: the baseline's, the verifying and the working", len(b.sessions), b.starts)
	}
}

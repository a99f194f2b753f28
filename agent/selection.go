package agent

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/runlog"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// maxTargets bounds the tests an iteration runs by name: past it the
// selection is a long command line for little saving, and the whole
// suite runs.
const maxTargets = 200

// testIteration runs an iteration's tests in the working session. In fix
// mode it runs the tests that failed at baseline first, alone, narrowed by
// the language (lang.TestSelector; sel, when narrow): when they pass, the
// loop's next run is the whole suite in a fresh session (confirm), which
// is the verdict; when they fail, the model hears about them without a run
// of the whole suite. When the narrowed run does not report every failing
// test (a selection its runner understood differently), or when the
// language cannot narrow the runner at all (a custom test_cmd, a whole-run
// exit status at baseline; testPhase), the report is nil: nothing
// decides on a run that left a target out, and the fresh run of the whole
// suite is the iteration's only run. Outside fix mode the whole suite runs
// here, as before.
func (r *run) testIteration(ctx context.Context, iter *Iteration, next *sandbox.Snapshot, sel testrun.Runner, narrow bool) (*testrun.Report, error) {
	r.iterSel, iter.Targeted = nil, false
	if !narrow {
		r.emit(PhaseTest, iter.N, "running the tests", nil)
		return r.test(ctx, next)
	}
	// When they pass, the whole suite in a fresh session is the verdict:
	// it starts now, beside this run, and is cancelled if they fail
	// (prestart.go).
	r.prestartFresh(ctx)
	r.speculate(ctx, next)
	r.emit(PhaseTest, iter.N, "running the tests that failed at baseline (and the whole suite beside them, in a fresh sandbox)", nil)
	rep, err := r.runSelected(ctx, sel)
	if err != nil {
		return nil, err
	}
	if covers(rep, r.targets) {
		r.iterSel, iter.Targeted = &sel, true
		return rep, nil
	}
	r.logTest(iter.N, rep)
	note := "the run of the failing tests did not report every one of them: running the whole suite in a fresh sandbox"
	r.log.Write(runlog.KindWarning, iter.N, map[string]string{"message": note})
	r.emit(PhaseTest, iter.N, note, nil)
	return nil, nil
}

// selection is the runner narrowed to the run's targets, when there are
// some, the whole suite is not short (suiteShort) and the language can
// narrow it.
func (r *run) selection(snap *sandbox.Snapshot) (testrun.Runner, bool) {
	if r.req.Mode != ModeFix || len(r.targets) == 0 || len(r.targets) > maxTargets || r.suiteShort() || r.targetsCostly() > 0 {
		return testrun.Runner{}, false
	}
	return r.e.selectedRunner(r.language, snap, r.targets)
}

// suiteShort reports whether the whole suite's baseline run took less
// than agent.narrow_min. Running the failing tests alone first saves the
// rest of the suite's time in an iteration whose fix does not work, and
// costs a working session (its start, its sync) and one more test
// process in every iteration; for a suite that runs in a second or two
// that costs more than it can save, and the iteration goes straight to
// the verifying run of the whole suite in a fresh session (confirm), as
// for a runner that cannot be narrowed. The verdict is the same fresh
// run either way. A baseline with no duration (unknown) is not short.
func (r *run) suiteShort() bool {
	b := r.res.Baseline
	min := r.e.cfg.Agent.NarrowMin.D()
	return b != nil && min > 0 && b.Duration > 0 && b.Duration < min
}

// targetsCostlyShare: the failing tests are run alone first only while
// their own time at baseline is under this share of the whole suite's run.
const targetsCostlyShare = 0.5

// targetsCostly returns the failing tests' own time at baseline (the
// durations the runner reported for them) when it is at least
// targetsCostlyShare of the whole suite's baseline run, and 0 otherwise.
// Running them alone first then saves little of the suite's time in an
// iteration whose fix does not work, while in one whose fix works their
// run costs nearly a suite more, on the same cores as the whole suite
// running beside it in the verifying session (speculate): the iteration
// goes straight to the verifying run of the whole suite in a fresh
// session (confirm), as for a short suite. The verdict is that same fresh
// run either way. A test counts once: a failing subtest is inside its
// failing parent's time, a failing test inside its failing package's or
// file's entry. Off with agent.narrow_min = 0 (always first), and when
// the runner reported no durations.
func (r *run) targetsCostly() time.Duration {
	b := r.res.Baseline
	if b == nil || b.Duration <= 0 || r.e.cfg.Agent.NarrowMin.D() <= 0 {
		return 0
	}
	var own time.Duration
	for _, t := range r.targets {
		inside := false
		for _, u := range r.targets {
			if u.ID != t.ID && (u.ID == t.Package || strings.HasPrefix(t.ID, u.ID+"/")) {
				inside = true
				break
			}
		}
		if !inside && t.Duration > 0 {
			own += t.Duration
		}
	}
	if float64(own) < targetsCostlyShare*float64(b.Duration) {
		return 0
	}
	return own
}

// runSelected runs a narrowed runner in the working session, its report
// masked like every other.
func (r *run) runSelected(ctx context.Context, sel testrun.Runner) (*testrun.Report, error) {
	r.res.TargetedRuns++
	rep, err := r.e.runRunner(ctx, r.sess, sel, nil)
	if err != nil {
		return nil, err
	}
	return maskReport(rep, r.mask), nil
}

// rerun runs the iteration's tests again (flaky.go): the same selection,
// or the whole suite.
func (r *run) rerun(ctx context.Context, snap *sandbox.Snapshot) (*testrun.Report, error) {
	if r.iterSel != nil {
		return r.runSelected(ctx, *r.iterSel)
	}
	return r.test(ctx, snap)
}

// covers reports whether rep reports every target: a test by its id, an
// entry that stands for a package or a file (notATest) by that entry or
// any test of its package.
func covers(rep *testrun.Report, targets []testrun.Result) bool {
	ids, pkgs := map[string]bool{}, map[string]bool{}
	for _, t := range rep.Tests {
		ids[t.ID] = true
		if t.Package != "" {
			pkgs[t.Package] = true
		}
	}
	for _, t := range targets {
		if !ids[t.ID] && !(notATest(t) && t.Package != "" && pkgs[t.Package]) {
			return false
		}
	}
	return true
}

// targetVerdict judges a run of the failing tests only: the reasons it
// does not let the whole suite run (none: every target passes, by name,
// and nothing in the run failed). The verdict itself is always on a run
// of the whole suite.
func targetVerdict(targets []testrun.Result, rep *testrun.Report) []string {
	var why []string
	if !rep.OK() {
		switch {
		case len(rep.Mismatch) > 0:
			for _, m := range rep.Mismatch {
				why = append(why, "the results disagree with the test runner's own output: "+m)
			}
		case rep.TimedOut:
			why = append(why, timedOutWhy(rep))
		case rep.Failed > 0:
			why = append(why, fmt.Sprintf("%d test(s) fail", rep.Failed))
		default:
			why = append(why, fmt.Sprintf("the test command exited with code %d", rep.ExitCode))
		}
	}
	return append(why, targetsFailing(targets, rep)...)
}

// targetsFailing lists the targets that do not pass in rep, by name.
func targetsFailing(targets []testrun.Result, rep *testrun.Report) []string {
	var why []string
	now := map[string]testrun.Status{}
	for _, t := range rep.Tests {
		now[t.ID] = t.Status
	}
	for _, t := range targets {
		st, ok := now[t.ID]
		switch {
		case !ok && notATest(t):
			// a package or file entry gives way to its tests
		case !ok:
			why = append(why, fmt.Sprintf("test %s failed before the run and has vanished: in fix mode the failing tests are the goal", t.ID))
		case st != testrun.StatusPass:
			why = append(why, fmt.Sprintf("test %s failed before the run and now is %s", t.ID, st))
		}
	}
	return why
}

// comparable returns two reports whose counts progressOf may compare: when
// one came from a run of the failing tests only, the other is cut down to
// the tests it reports, so that the tests that did not run do not count
// as lost passes (or new ones).
func comparable(prev *testrun.Report, prevTargeted bool, cur *testrun.Report, curTargeted bool) (*testrun.Report, *testrun.Report) {
	switch {
	case prev == nil || prevTargeted == curTargeted:
		return prev, cur
	case curTargeted:
		return restrict(prev, cur), cur
	default:
		return prev, restrict(cur, prev)
	}
}

// restrict is rep with only the tests whose ids to reports, recounted.
func restrict(rep, to *testrun.Report) *testrun.Report {
	keep := map[string]bool{}
	for _, t := range to.Tests {
		keep[t.ID] = true
	}
	out := *rep
	out.Tests = nil
	for _, t := range rep.Tests {
		if keep[t.ID] {
			out.Tests = append(out.Tests, t)
		}
	}
	out.Count()
	return &out
}

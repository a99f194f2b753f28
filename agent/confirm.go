package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/runlog"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// notConfirmed leads the reasons of a run whose tests passed in the working
// session and not in the verifying one.
const notConfirmed = "the tests passed in the working sandbox but not in a fresh one started from the workspace and your final edits only: something your earlier code left behind (a file, a cache entry) made them pass"

// confirm runs the tests once more, for the verdict, in a session that
// holds nothing the model's earlier code produced: a new session (never
// the warm one) whose workspace is the snapshot plus the final edits
// (r.cur) and whose build cache starts from nothing a model's code wrote
// and is discarded with it (Engine.startFresh). The working session may
// hold files that earlier iterations' code wrote into its workspace, a
// rewritten build or test cache, or a process left running; none of that
// reaches this run. It costs one more session start per verified run,
// which a run starts ahead, while the model answers and the failing tests
// run (prestart.go), and closes in the background (Engine.closeLater).
//
// The working session is closed first. When the verdict on the fresh
// report fails, the fresh session becomes the run's working session
// (adopt), so that the next attempt does not run in the state that misled
// this one. ok is false when the run must stop (the
// reason is set).
func (r *run) confirm(ctx context.Context, iter *Iteration) (rep *testrun.Report, adopt func(), ok bool) {
	t0 := time.Now()
	defer func() {
		iter.ConfirmTime = time.Since(t0)
		r.res.Phases[PhaseTest] += iter.ConfirmTime
	}()
	r.emit(PhaseTest, iter.N, "verifying in a fresh sandbox", nil)
	// The working session is not needed any more: the run ends verified,
	// or the fresh session replaces it. Closing it first holds one session
	// at a time, which a backend lending a fixed number of sessions (the
	// benchmark's pool) needs to not wait for itself.
	r.closeSession()
	sess, done, rep, ok := r.freshRun(ctx, iter)
	if !ok {
		return nil, nil, false
	}
	// A test that passed at baseline and fails here may have timed out
	// under load: the suite runs once more, in another fresh session (a
	// complete passing run of the same state, never one that follows the
	// first in its session), before it counts as broken (flaky.go).
	if ids := newlyFailing(r.res.Baseline, rep); len(ids) > 0 && len(ids) <= maxFlakyRetry && ctx.Err() == nil {
		r.emit(PhaseTest, iter.N, fmt.Sprintf("re-running the tests once in another fresh sandbox: %d test(s) passed at baseline and fail now", len(ids)), nil)
		r.e.closeLater(done)
		sess2, done2, again, ok := r.freshRun(ctx, iter)
		if !ok {
			return nil, nil, false
		}
		sess, done = sess2, done2
		final, notes := judgeRetry(rep, again, ids)
		for _, n := range notes {
			r.log.Write(runlog.KindWarning, iter.N, map[string]string{"message": n})
			r.emit(PhaseTest, iter.N, n, nil)
		}
		rep = final
	}
	adopted := false
	defer func() {
		if !adopted {
			r.e.closeLater(done)
		}
	}()
	if len(verdict(r.req.Mode, r.res.Baseline, rep)) > 0 {
		adopted = true
		adopt = func() { r.sess, r.closeFn = sess, done }
	}
	return rep, adopt, true
}

// freshRun starts a fresh session prepared like the run's, syncs the
// final state and runs the whole suite; ok is false when the run must
// stop (the session is then closed and the reason set).
func (r *run) freshRun(ctx context.Context, iter *Iteration) (sandbox.Session, func(), *testrun.Report, bool) {
	if sess, done, rep, ok := r.takeSpec(r.cur); ok { // run beside the failing tests (prestart.go)
		return sess, done, r.freshReport(iter, rep), true
	}
	sess, done, ok := r.takeFresh() // started ahead (prestart.go)
	var err error
	if !ok {
		sess, done, err = r.e.startFresh(ctx, r.setupProj, func(line string) { r.emit(PhaseTest, iter.N, line, nil) }, r.setupNoScripts)
	}
	if err != nil {
		r.sandboxFailed(ctx, "verification", err)
		return nil, nil, nil, false
	}
	if _, err := sess.Sync(ctx, r.cur); err != nil {
		r.e.closeLater(done)
		r.sandboxFailed(ctx, "verification sync", err)
		return nil, nil, nil, false
	}
	rep, err := r.e.runTests(ctx, sess, r.language, r.cur, nil, true)
	if err != nil {
		r.res.FullRuns++
		r.e.closeLater(done)
		r.sandboxFailed(ctx, "verification", err)
		return nil, nil, nil, false
	}
	return sess, done, r.freshReport(iter, rep), true
}

// freshReport accounts for a verifying run's report: counted, masked,
// logged and reported.
func (r *run) freshReport(iter *Iteration, rep *testrun.Report) *testrun.Report {
	r.res.FullRuns++
	rep = maskReport(rep, r.mask)
	r.logTest(iter.N, rep)
	r.emit(PhaseTest, iter.N, "fresh sandbox: "+counts(rep), rep)
	return rep
}

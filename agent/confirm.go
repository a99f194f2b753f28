package agent

import (
	"context"
	"time"

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
// reaches this run. It costs one more session start per verified run.
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
	sess, done, err := r.e.startFresh(ctx, r.setupProj, func(line string) { r.emit(PhaseTest, iter.N, line, nil) }, r.setupNoScripts)
	if err != nil {
		r.sandboxFailed(ctx, "verification", err)
		return nil, nil, false
	}
	adopted := false
	defer func() {
		if !adopted {
			done()
		}
	}()
	if _, err := sess.Sync(ctx, r.cur); err != nil {
		r.sandboxFailed(ctx, "verification sync", err)
		return nil, nil, false
	}
	rep, err = r.e.runTests(ctx, sess, r.language, r.cur, nil, true)
	if err != nil {
		r.sandboxFailed(ctx, "verification", err)
		return nil, nil, false
	}
	rep = maskReport(rep, r.mask)
	r.logTest(iter.N, rep)
	r.emit(PhaseTest, iter.N, "fresh sandbox: "+counts(rep), rep)
	if len(verdict(r.req.Mode, r.res.Baseline, rep)) > 0 {
		adopted = true
		adopt = func() { r.sess, r.closeFn = sess, done }
	}
	return rep, adopt, true
}

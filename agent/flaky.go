package agent

import (
	"context"
	"fmt"
	"sort"

	"github.com/fixpoint-dev/fixpoint/agent/runlog"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// maxFlakyRetry bounds the newly failing tests that earn a re-run: a
// timeout under load fails one or two tests, a real breakage usually many,
// and re-running the whole suite for it would only double its cost.
const maxFlakyRetry = 5

// retryNewlyFailing re-runs the tests once on the same snapshot when rep
// has tests that passed at baseline and fail now (newlyFailing), and says
// what happened to each in the run log and the progress events. The
// returned report is what the verdict judges (see judgeRetry). The
// session is the same one, already synced to snap; the re-run reads its
// results through the same channel as the first run.
func (r *run) retryNewlyFailing(ctx context.Context, iter int, snap *sandbox.Snapshot, rep *testrun.Report) *testrun.Report {
	ids := newlyFailing(r.res.Baseline, rep)
	if len(ids) == 0 || len(ids) > maxFlakyRetry || ctx.Err() != nil {
		return rep
	}
	r.emit(PhaseTest, iter, fmt.Sprintf("re-running the tests once: %d test(s) passed at baseline and fail now", len(ids)), nil)
	again, err := r.rerun(ctx, snap) // the same selection as rep's run
	if err != nil {
		r.log.Write(runlog.KindWarning, iter, map[string]string{"message": fmt.Sprintf("re-run of newly failing tests failed: %v", err)})
		return rep
	}
	r.logTest(iter, again)
	final, notes := judgeRetry(rep, again, ids)
	for _, n := range notes {
		r.log.Write(runlog.KindWarning, iter, map[string]string{"message": n})
		r.emit(PhaseTest, iter, n, nil)
	}
	return final
}

// newlyFailing lists the tests that passed in baseline and fail or error
// in rep, sorted.
func newlyFailing(baseline, rep *testrun.Report) []string {
	if baseline == nil || rep == nil {
		return nil
	}
	passed := map[string]bool{}
	for _, t := range baseline.Tests {
		if t.Status == testrun.StatusPass {
			passed[t.ID] = true
		}
	}
	var ids []string
	for _, t := range rep.Failures() {
		if passed[t.ID] {
			ids = append(ids, t.ID)
		}
	}
	sort.Strings(ids)
	return ids
}

// judgeRetry combines a run with its re-run. It returns one note per id
// ("passed on retry — counted as flaky, not broken" or "failed again") and
// the report to judge: the re-run when it passed as a whole (a complete
// passing run of the same state), else the first run with the tests that
// passed on retry counted as passing, so that only tests that failed twice
// count as broken. The first run's exit code stays, so such a report is
// never OK on its own.
func judgeRetry(first, again *testrun.Report, ids []string) (*testrun.Report, []string) {
	status := map[string]testrun.Status{}
	for _, t := range again.Tests {
		status[t.ID] = t.Status
	}
	flaky := map[string]bool{}
	var notes []string
	for _, id := range ids {
		switch st, ok := status[id]; {
		case ok && st == testrun.StatusPass:
			flaky[id] = true
			notes = append(notes, fmt.Sprintf("re-ran %s: passed on retry — counted as flaky, not broken", id))
		case !ok:
			notes = append(notes, fmt.Sprintf("re-ran %s: did not run again — counted as broken", id))
		default:
			notes = append(notes, fmt.Sprintf("re-ran %s: failed again — counted as broken", id))
		}
	}
	if again.OK() {
		return again, notes
	}
	if len(flaky) == 0 {
		return first, notes
	}
	out := *first
	out.Tests = append([]testrun.Result(nil), first.Tests...)
	for i, t := range out.Tests {
		if flaky[t.ID] {
			t.Status = testrun.StatusPass
			t.Message = "flaky: failed, then passed on retry: " + t.Message
			out.Tests[i] = t
			out.Passed++
			out.Failed--
		}
	}
	return &out, notes
}

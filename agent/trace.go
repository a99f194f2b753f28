package agent

import (
	"context"
	"fmt"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/runlog"
	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// The trace: in fix mode, when the baseline has failures and the
// language can trace its runner (lang.Tracer), the failing tests run once
// more, traced, in the baseline's session, before it closes: the user's
// own code, before any model edit. The declarations they executed rank
// the context (prompt.go contextRank, declfill.go): fault localisation by
// the failing tests' spectrum, which finds the method a test reaches
// through an interface or a table that no name in the test points at.
//
// The trace never decides anything but what the model is shown: its
// report is not judged, not logged as a test run, and in neither
// Result.FullRuns nor TargetedRuns. A trace that fails, times out, writes
// nothing or does not parse is a warning, and the run goes on untraced.
//
// A reused baseline (basecache.go) reuses the trace recorded with it,
// under the same key and signature as its report; a baseline the request
// gives (Request.Baseline) has no session of the user's code to trace in,
// and the run goes untraced.

// traceFilesMax bounds the files a trace keeps (after ParseTrace's own
// bounds): a trace is what ran, and a run of thousands of files says
// little about any one.
const traceFilesMax = 2000

// traceBaseline runs the failing tests of rep traced in r.sess (the
// baseline's session) and keeps the trace in r.trace. Every failure is a
// warning.
func (r *run) traceBaseline(ctx context.Context, rep *testrun.Report) {
	if r.req.Mode != ModeFix || !r.e.cfg.TraceEnabled() || r.sess == nil || rep == nil || r.language == nil {
		return
	}
	fails := traceSample(rep.Failures())
	if len(fails) == 0 {
		return
	}
	tracer, ok := r.language.(lang.Tracer)
	if !ok {
		return
	}
	if rep.TimedOut || rep.Timeout != nil {
		// A failing test that hangs hangs traced too: the trace would
		// cost one more time limit and end with nothing.
		msg := "no trace of the failing tests (the baseline run reached " + testrun.TimeoutSetting + "; a traced run of the same tests would too): the context is ranked without it"
		r.log.Write(runlog.KindWarning, 0, map[string]string{"message": msg})
		r.emit(PhaseTest, 0, msg, nil)
		return
	}
	runner, ok := tracer.TraceTests(r.cur, r.e.testRunner(r.language, r.cur, true), fails)
	if !ok || runner.TracePath == "" {
		return
	}
	n := "test"
	if len(fails) > 1 {
		n = "tests"
	}
	what := fmt.Sprintf("the %d failing %s", len(fails), n)
	if all := len(rep.Failures()); all > len(fails) {
		what = fmt.Sprintf("%d of the %d failing tests (one per distinct failure)", len(fails), all)
	}
	r.emit(PhaseTest, 0, fmt.Sprintf("tracing %s (the code they run ranks the context)", what), nil)
	t0 := time.Now()
	trep, err := testrun.Run(ctx, r.sess, runner, limits(r.e.cfg), nil)
	took := time.Since(t0)
	r.res.TraceTime += took
	r.res.Phases[PhaseTrace] += took
	warn := func(why string) {
		msg := "no trace of the failing tests (" + why + "): the context is ranked without it"
		r.log.Write(runlog.KindWarning, 0, map[string]string{"message": msg})
		r.emit(PhaseTest, 0, msg, nil)
	}
	switch {
	case err != nil:
		warn(r.mask(err.Error()))
		return
	case trep.TimedOut:
		warn("it timed out")
		return
	case trep.OOM:
		warn("it ran out of memory")
		return
	case trep.Trace == nil:
		warn("the traced run wrote no trace")
		return
	}
	tr, err := tracer.ParseTrace(r.cur, trep.Trace.Root, trep.Trace.Data)
	if err != nil {
		warn(r.mask(err.Error()))
		return
	}
	r.setTrace(keepTrace(r.cur, tr, r.include), r.cur)
	r.emit(PhaseTest, 0, fmt.Sprintf("traced in %s: %d files ran", took.Round(100*time.Millisecond), len(r.trace)), nil)
	r.spectrumBaseline(ctx, tracer, fails)
}

// setTrace keeps tr as the run's trace of the files of snap.
func (r *run) setTrace(tr lang.Trace, snap *sandbox.Snapshot) {
	r.trace, r.traceSnap = tr, snap
	r.res.TracedFiles = len(tr)
}

// keepTrace is tr less the files the context may not show (secrets,
// ignored files) and those not in snap, at most traceFilesMax files; nil
// when none is left.
func keepTrace(snap *sandbox.Snapshot, tr lang.Trace, include func(string) bool) lang.Trace {
	out := lang.Trace{}
	for _, p := range sortedKeys(tr) {
		if len(out) >= traceFilesMax {
			break
		}
		if _, ok := snap.Files[p]; !ok || len(tr[p]) == 0 || (include != nil && !include(p)) {
			continue
		}
		out[p] = tr[p]
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// currentTrace is the run's trace of the files snap holds as they were
// traced: a file the model has since changed has other lines.
func (r *run) currentTrace(snap *sandbox.Snapshot) lang.Trace {
	if len(r.trace) == 0 || r.traceSnap == nil {
		return nil
	}
	return r.unchangedSince(snap, r.trace)
}

// unchangedSince is tr (of the files of r.traceSnap) less the files snap
// does not hold as they were traced.
func (r *run) unchangedSince(snap *sandbox.Snapshot, tr lang.Trace) lang.Trace {
	out := lang.Trace{}
	for p, spans := range tr {
		f, ok := snap.Files[p]
		if !ok {
			continue
		}
		if g, ok := r.traceSnap.Files[p]; !ok || g.Sum() != f.Sum() {
			continue
		}
		out[p] = spans
	}
	return out
}

package agent

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/runlog"
	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// The spectrum of the failing tests (round 10). A failing test that runs
// most of a package (a parser's test feeding it every construct, a
// table-driven test of five hundred cases) gives each of eighty
// functions that ran the same small trace weight (tracerank.go), and the
// one to fix does not stand out. When the language can trace the failing
// tests' packages whole, with counts ([lang.Spectra]: Go), the agent runs
// the failing tests and then their packages, both in the same mode (Go:
// -short), after the trace, in the same session, each within
// spectrumTimeout, and compares: the share of a block's executions that
// the failing tests account for (their count over the whole package's)
// is near 1 for code only they reach (the fence parser the failing
// fenced-code test drives) and near 0 for the plumbing every test runs.
// This is spectrum-based fault localisation with counts standing in for
// per-test coverage (Ochiai's numerator and denominator, summed over
// executions rather than tests): two extra runs, no per-test contexts.
//
// A declaration's spectrum share is the mean of its spans' shares: a
// function wholly specific to the failing tests scores near 1; a long
// one that every test enters, with one branch only the failing tests
// take, scores low (one specific block of thirty says little: the
// maximum would raise every long dispatcher a failing input passes
// through).
// One of at least spectrumMin weighs at least spectrumScale × its share
// in the fill (a declaration only the failing tests run outranks what the
// static call walk reached one call below the test: the walk follows
// names, the spectrum what ran); one below, known, is weighed down by
// spectrumDemote. A file where every
// known declaration is specific (the package's only tests are the
// failing ones) is left as the trace weighed it: nothing tells its
// declarations apart. A span the spectrum run did not report (a test
// -short skips, a count the tracer does not know) is not known.
//
// Everything the spectrum run writes is read as the trace is (bounded,
// through the language's ParseTrace and keepTrace); a run that fails,
// times out or writes nothing leaves the context ranked by the trace
// alone. It is never a test run: not judged, not counted, not logged as
// one. A reused baseline brings its trace but no spectrum.

// spectrumTimeout bounds the spectrum run (the sandbox's own limit when
// lower): it costs what the packages' tests cost, and a package whose
// tests take longer is ranked by the trace alone.
const spectrumTimeout = 30 * time.Second

// spectrumWide: the spectrum runs only when the traced code is at least
// 1/spectrumWide of the room the prompt has for files (contextFilesMax,
// or less with a small budget). A smaller trace is shown whole or
// nearly so whatever its order, and the two runs would only cost time
// (most fixes: round 9's median trace was a few functions of one file).
const spectrumWide = 2

// tracedBytes is the size of the lines tr says ran, in the files of snap
// (overlapping spans counted once).
func tracedBytes(snap *sandbox.Snapshot, tr lang.Trace) int {
	n := 0
	for p, spans := range tr {
		data, ok := lang.FileBytes(snap, p)
		if !ok {
			continue
		}
		lines := bytes.SplitAfter(data, []byte("\n"))
		seen := make(map[int]bool)
		for _, s := range spans {
			for l := max(s.From, 1); l <= s.To && l <= len(lines); l++ {
				if !seen[l] {
					seen[l] = true
					n += len(lines[l-1])
				}
			}
		}
	}
	return n
}

// spectrumMin is the least share of a declaration that raises its weight.
const spectrumMin = 0.25

// spectrumScale is the trace weight of a declaration of share 1: twice
// that of the only declaration that ran in its file.
const spectrumScale = 2

// spectrumDemote weighs down a traced declaration of known share below
// spectrumMin: code every test runs.
const spectrumDemote = 0.75

// spectrum is the two runs of the spectrum (see above), both in the
// spectrum's mode: what the failing tests ran (Fail) and what their
// packages ran (All), with counts, by file.
type spectrum struct{ Fail, All lang.Trace }

// spectrumBaseline runs the failing tests and then their packages whole,
// traced with counts, after traceBaseline (see above), and keeps the
// result in r.spectrum. Every failure is a warning.
func (r *run) spectrumBaseline(ctx context.Context, tracer lang.Tracer, fails []testrun.Result) {
	sp, ok := r.language.(lang.Spectra)
	if !ok || len(r.trace) == 0 {
		return
	}
	if n, room := tracedBytes(r.cur, r.trace), min(r.budget(), contextFilesMax); n*spectrumWide < room {
		r.e.log.Debug("no spectrum: the traced code fits the prompt's budget", "bytes", n, "room", room)
		return
	}
	failRun, allRun, ok := sp.SpectrumTests(r.cur, r.e.testRunner(r.language, r.cur, true), fails)
	if !ok || failRun.TracePath == "" || allRun.TracePath == "" {
		return
	}
	lim := limits(r.e.cfg)
	if lim.Timeout <= 0 || lim.Timeout > spectrumTimeout {
		lim.Timeout = spectrumTimeout
	}
	lim.CPUTime = 0
	warn := func(why string) {
		msg := "no spectrum of the failing tests (" + why + "): the context is ranked by their trace alone"
		r.log.Write(runlog.KindWarning, 0, map[string]string{"message": msg})
		r.emit(PhaseTest, 0, msg, nil)
	}
	r.emit(PhaseTest, 0, "tracing the failing tests' packages (what only the failing tests run ranks first)", nil)
	t0 := time.Now()
	traced := func(runner testrun.Runner) (lang.Trace, bool) {
		rep, err := testrun.Run(ctx, r.sess, runner, lim, nil)
		switch {
		case err != nil:
			warn(r.mask(err.Error()))
		case rep.TimedOut:
			warn(fmt.Sprintf("the tests took over %s", lim.Timeout))
		case rep.OOM:
			warn("it ran out of memory")
		case rep.Trace == nil:
			warn("the run wrote no trace")
		default:
			tr, err := tracer.ParseTrace(r.cur, rep.Trace.Root, rep.Trace.Data)
			if err != nil {
				warn(r.mask(err.Error()))
				return nil, false
			}
			return keepTrace(r.cur, tr, r.include), true
		}
		return nil, false
	}
	defer func() {
		took := time.Since(t0)
		r.res.TraceTime += took
		r.res.Phases[PhaseTrace] += took
	}()
	fail, ok := traced(failRun)
	if !ok {
		return
	}
	if len(fail) == 0 {
		warn("the failing tests ran nothing in its mode")
		return
	}
	all, ok := traced(allRun)
	if !ok {
		return
	}
	r.spectrum = &spectrum{Fail: fail, All: all}
	r.emit(PhaseTest, 0, fmt.Sprintf("spectrum in %s: %d files ran", time.Since(t0).Round(100*time.Millisecond), len(all)), nil)
}

// currentSpectrum is r.spectrum of the files snap holds as they were
// traced (as [run.currentTrace]); nil when none.
func (r *run) currentSpectrum(snap *sandbox.Snapshot) *spectrum {
	if r.spectrum == nil || r.traceSnap == nil {
		return nil
	}
	return &spectrum{Fail: r.unchangedSince(snap, r.spectrum.Fail), All: r.unchangedSince(snap, r.spectrum.All)}
}

// of is the spans of file p in each run; nil ones for a nil spectrum.
func (s *spectrum) of(p string) (fail, all []lang.Span) {
	if s == nil {
		return nil, nil
	}
	return s.Fail[p], s.All[p]
}

// spectrumWeights is traced (a file's trace weights, by unit index; see
// [traceWeights]) reweighed by the spectrum (see above): fail are the
// spans the failing tests ran in the file in the spectrum's mode, all
// those their packages ran. traced is returned unchanged when the spectrum tells nothing.
func spectrumWeights(nlines int, units []declUnit, traced map[int]float64, fail, all []lang.Span) map[int]float64 {
	if len(traced) == 0 || len(all) == 0 || len(fail) == 0 {
		return traced
	}
	type key struct{ from, to int }
	allCount := make(map[key]int, len(all))
	for _, s := range all {
		if s.Count > 0 {
			k := key{s.From, s.To}
			allCount[k] = min(allCount[k]+min(s.Count, math.MaxInt32), math.MaxInt32)
		}
	}
	owners := newSpanOwners(nlines, units)
	sum, n := map[int]float64{}, map[int]int{}
	for _, s := range fail {
		a := allCount[key{s.From, s.To}]
		if s.Count <= 0 || a <= 0 {
			continue
		}
		u := owners.of(s)
		if u < 0 {
			continue
		}
		c := min(s.Count, math.MaxInt32)
		share := float64(c) / float64(max(a, c))
		sum[u] += share
		n[u]++
	}
	shares := map[int]float64{}
	specific := 0
	for u, c := range n {
		if _, ok := traced[u]; !ok {
			continue
		}
		shares[u] = sum[u] / float64(c)
		if shares[u] >= spectrumMin {
			specific++
		}
	}
	if len(shares) == 0 || specific == len(shares) {
		return traced
	}
	out := make(map[int]float64, len(traced))
	for u, w := range traced {
		sh, known := shares[u]
		switch {
		case !known:
			out[u] = w
		case sh >= spectrumMin:
			out[u] = max(w, spectrumScale*sh)
		default:
			out[u] = w * spectrumDemote
		}
	}
	return out
}

// spanOwners finds the declaration a traced span belongs to: the
// innermost holding its first line and, when that one ends before the
// span does, the innermost enclosing one that holds it all — a Go
// function's first block that starts at a local `var x T` belongs to the
// function, not to the one-line declaration of x.
type spanOwners struct {
	units  []declUnit
	owner  []int // innermost unit of each line, -1 none
	parent []int // the innermost unit holding each unit, -1 none
}

func newSpanOwners(nlines int, units []declUnit) spanOwners {
	o := spanOwners{units: units, owner: make([]int, nlines), parent: make([]int, len(units))}
	for i := range o.owner {
		o.owner[i] = -1
	}
	for ui, u := range units {
		o.parent[ui] = -1
		if u.at >= 0 && u.at < nlines {
			if p := o.owner[u.at]; p >= 0 && p != ui && units[p].from <= u.from && units[p].to >= u.to {
				o.parent[ui] = p
			}
		}
		for j := max0(u.from); j <= u.to && j < nlines; j++ {
			o.owner[j] = ui
		}
	}
	return o
}

// of is the unit span s (1-based lines) belongs to, -1 none.
func (o spanOwners) of(s lang.Span) int {
	if s.From < 1 || s.From > len(o.owner) {
		return -1
	}
	u := o.owner[s.From-1]
	for steps := 0; u >= 0 && s.To-1 > o.units[u].to && o.parent[u] >= 0 && steps < len(o.units); steps++ {
		u = o.parent[u]
	}
	return u
}

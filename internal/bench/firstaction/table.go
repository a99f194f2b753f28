package firstaction

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Markdown renders the table for docs/BENCHMARKS.md: per case and mode,
// the median and range of the overhead (first test result minus the
// test's own time), the median first result and test time, and for warm
// rows how long the prewarm took after initialized.
func (t *Table) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Medians of %d samples per row; each sample is a new `fixpoint serve` process, docker sandbox, scripted model.\n\n", t.Samples)
	b.WriteString("| project | mode | overhead: first result − test time (median, min–max) | first result | test's own time | prewarm after initialized |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	for _, r := range t.Rows {
		over := durations(r.Samples, Sample.Overhead)
		prewarm := "—"
		if r.Warm {
			prewarm = ms(median(durations(r.Samples, func(s Sample) time.Duration { return s.Prewarm })))
		}
		fmt.Fprintf(&b, "| %s | %s | **%s** (%s–%s) | %s | %s | %s |\n", r.Case, mode(r.Warm),
			ms(median(over)), ms(slices.Min(over)), ms(slices.Max(over)),
			ms(median(durations(r.Samples, func(s Sample) time.Duration { return s.First }))),
			ms(median(durations(r.Samples, func(s Sample) time.Duration { return s.TestTime }))), prewarm)
	}
	b.WriteString("\n")
	if t.Load != "" {
		fmt.Fprintf(&b, "Load average (1, 5, 15 min) when the run ended: %s on this machine's CPUs; other work shares them, so single samples vary.\n\n", t.Load)
	}
	b.WriteString("Cold: prewarming off (`[server] idle_timeout = \"0s\"`); the action pays for opening the engine, the setup phase (its caches already filled), the container start, the runtime version check and the first copy of the workspace. " +
		"Warm: the server did those after `initialized`; the action takes the session, syncs what changed since (nothing here) and runs the tests. " +
		"Both: time from sending `textDocument/codeAction` until the `$/fixpoint/status` with the baseline's counts, minus the test command's own time from the run log.\n\n")
	for _, r := range t.Rows {
		if !r.Warm {
			continue
		}
		m := median(durations(r.Samples, Sample.Overhead))
		verdict := "meets"
		if m > Target {
			verdict = "misses"
		}
		fmt.Fprintf(&b, "%s, warm: %s overhead %s the target of %s.\n", r.Case, ms(m), verdict, ms(Target))
	}
	return b.String()
}

func durations(ss []Sample, f func(Sample) time.Duration) []time.Duration {
	out := make([]time.Duration, len(ss))
	for i, s := range ss {
		out[i] = f(s)
	}
	return out
}

// median of ds (the lower middle for an even count); 0 for none.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[(len(s)-1)/2]
}

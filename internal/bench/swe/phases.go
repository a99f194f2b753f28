package swe

import (
	"fmt"
	"strings"
)

// Phases is where an instance's wall time went, in seconds, read from its
// timeline (the run's progress lines): each line starts a span that lasts
// until the next one, and the span counts for the phase the line opens
// (a line that opens none counts for the phase before it). Summed over
// the iterations.
type Phases struct {
	// Start: from the run's start to the baseline's run (the snapshot,
	// the baseline session's start and the setup phase).
	Start float64 `json:"start"`
	// Baseline: the baseline run of the whole suite.
	Baseline float64 `json:"baseline"`
	// Trace: the traced run of the failing tests before the first prompt
	// (agent.trace), 0 when none ran.
	Trace float64 `json:"trace,omitempty"`
	// Model: from the request to the model to the next test run (the
	// prompt, the reply, applying it, and waiting for the working
	// session when it has not started yet).
	Model float64 `json:"model"`
	// Targeted: the run of the failing tests alone (the whole suite runs
	// beside it in the verifying session).
	Targeted float64 `json:"targeted"`
	// Verify: from the failing tests' result, or from the decision to run
	// the whole suite directly, to the verifying run's result.
	Verify float64 `json:"verify"`
	// End: from the verifying run's result to the run's result (the
	// verdict, the reflector when it failed).
	End float64 `json:"end"`
}

// phaseOf returns the phase a progress line opens; "" when it opens none.
func phaseOf(msg string) string {
	switch {
	case strings.Contains(msg, "starting the sandbox"):
		return "start"
	case strings.Contains(msg, "running the baseline tests"):
		return "baseline"
	case strings.Contains(msg, "tracing the "):
		return "trace"
	case strings.Contains(msg, "asking the model"):
		return "model"
	case strings.Contains(msg, "running the tests that failed at baseline"):
		return "targeted"
	case strings.Contains(msg, "failing tests:"),
		strings.Contains(msg, "verifying in a fresh sandbox"),
		strings.Contains(msg, "running the whole suite"),
		strings.Contains(msg, "running the tests"):
		return "verify"
	case strings.Contains(msg, "fresh sandbox:"), strings.Contains(msg, "baseline: "),
		strings.Contains(msg, "baseline (reused"):
		return "end"
	}
	return ""
}

// phasesOf splits wall (seconds) over the timeline's phases.
func phasesOf(timeline []Step, wall float64) Phases {
	var p Phases
	slot := map[string]*float64{
		"start": &p.Start, "baseline": &p.Baseline, "trace": &p.Trace, "model": &p.Model,
		"targeted": &p.Targeted, "verify": &p.Verify, "end": &p.End,
	}
	cur, from := "start", 0.0
	add := func(to float64) {
		if to > from {
			*slot[cur] += to - from
		}
		from = to
	}
	for _, st := range timeline {
		ph := phaseOf(st.Message)
		if ph == "" {
			continue
		}
		if ph == "end" && (cur == "baseline" || cur == "start") {
			// the baseline's result: the time up to the next line is the
			// gap before the first request, counted with the model's
			add(st.At)
			cur = "model"
			continue
		}
		add(st.At)
		cur = ph
	}
	add(wall)
	return p
}

// String is the phases as the Markdown table shows them.
func (p Phases) String() string {
	dash := func(v float64) string {
		if v < 0.05 {
			return "–"
		}
		return fmt.Sprintf("%.1f", v)
	}
	return strings.Join([]string{dash(p.Start), dash(p.Baseline), dash(p.Model), dash(p.Targeted), dash(p.Verify), dash(p.End)}, " / ")
}

// Package demo holds the bundled scripted model that `fixpoint fix` uses when
// no model is configured.
//
// The script knows exactly one project, examples/go-bug: [GoBugFix] is its
// reply there. On any other project it answers [CannotHelp], and the run ends
// unverified with that explanation. [Banner] is printed before such a run.
package demo

// Banner is printed (to stderr) whenever the scripted demo model runs.
const Banner = "No model configured: running the bundled scripted demo model. This shows fixpoint's machinery, not a model's skill. Set FIXPOINT_BASE_URL / FIXPOINT_API_KEY / FIXPOINT_MODEL to use your model."

// GoBugMarker identifies examples/go-bug in a prompt: its buggy line.
const GoBugMarker = "func Median(xs []float64) (float64, error)"

// GoBugPlan is the demo's plan for examples/go-bug.
const GoBugPlan = `1. TestMedian/even fails: Median returns the upper middle value for even-length samples.
2. In stats/stats.go, return the mean of the two middle values when len(s) is even.
3. Leave the tests unchanged; rerun them.`

// GoBugFix is the demo's reply for examples/go-bug: its plan (the agent
// makes no separate plan call; the first code reply starts with the plan),
// then the edit.
const GoBugFix = "Plan:\n" + GoBugPlan + "\n\n" + goBugEdit

const goBugEdit = `Reflection: for an even number of values Median returned s[mid], the upper of the two middle values.
Lesson: the median of an even-length sample is the mean of the two middle values.

stats/stats.go
<<<<<<< SEARCH
	mid := len(s) / 2
	return s[mid], nil
=======
	mid := len(s) / 2
	if len(s)%2 == 0 {
		return (s[mid-1] + s[mid]) / 2, nil
	}
	return s[mid], nil
>>>>>>> REPLACE
`

// CannotHelp is the demo's answer on every other project.
const CannotHelp = "I am fixpoint's bundled scripted demo model and only know how to fix examples/go-bug. I cannot help with this project: configure a real model (FIXPOINT_BASE_URL, FIXPOINT_API_KEY, FIXPOINT_MODEL)."

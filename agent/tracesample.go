package agent

import (
	"fmt"

	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// traceSampleMax bounds the failing tests a trace runs when the baseline
// has more than maxTargets of them. A suite where hundreds of tests fail
// usually fails them for a few causes (one helper every test calls
// raises), so a trace of one test per distinct failure ranks the context
// as a trace of all of them would, at a fraction of the run; before, such
// a baseline was not traced at all and the context fell back to static
// signals (round 9: 242 failures from one None global).
const traceSampleMax = 20

// traceSample is the failing tests to trace: all of them up to
// maxTargets, else at most traceSampleMax, the first test of each
// distinct failure (where it failed: file, line and first stack frame;
// else its message), in report order; when fewer than five distinct
// failures are found, more of the rest in report order up to five. nil
// when there are none.
func traceSample(fails []testrun.Result) []testrun.Result {
	if len(fails) <= maxTargets {
		return fails
	}
	seen := map[string]bool{}
	var out []testrun.Result
	taken := make([]bool, len(fails))
	for i, t := range fails {
		if len(out) >= traceSampleMax {
			break
		}
		k := failureKey(t)
		if seen[k] {
			continue
		}
		seen[k] = true
		taken[i] = true
		out = append(out, t)
	}
	for i, t := range fails {
		if len(out) >= min(traceSampleMax, 5) {
			break
		}
		if !taken[i] {
			out = append(out, t)
		}
	}
	return out
}

// failureKey is where a failing test failed, for telling distinct
// failures apart: its location and first frame, or its message's first
// 200 bytes when it has no location.
func failureKey(t testrun.Result) string {
	if t.File != "" {
		k := fmt.Sprintf("%s:%d", t.File, t.Line)
		if len(t.Frames) > 0 {
			k += fmt.Sprintf(" %s:%d", t.Frames[0].File, t.Frames[0].Line)
		}
		return k
	}
	m := t.Message
	if len(m) > 200 {
		m = m[:200]
	}
	return "msg " + m
}

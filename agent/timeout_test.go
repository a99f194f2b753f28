package agent

import (
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// TestTimedOutRunNamesTheHungTest: the model is told which test was
// running when the limit hit; the user's reason names the setting.
func TestTimedOutRunNamesTheHungTest(t *testing.T) {
	rep := &testrun.Report{Runner: "pytest", Command: []string{"pytest"}, ExitCode: 124, TimedOut: true,
		Tests:   []testrun.Result{{ID: "t.py::test_a", Status: testrun.StatusPass}, {ID: "t.py::test_hangs", Status: testrun.StatusError, Message: "timed out"}},
		Timeout: &testrun.Timeout{Limit: 2 * time.Minute, Setting: testrun.TimeoutSetting, Running: []string{"t.py::test_hangs"}}}
	rep.Count()
	rep.Timeout.Note = rep.Timeout.Sentence(rep)
	if got := renderFailure(rep, 4000); !strings.Contains(got, "The test command timed out while running t.py::test_hangs.") {
		t.Errorf("renderFailure:\n%s", got)
	}
	why := timedOutWhy(rep)
	for _, w := range []string{"the test command hit its time limit of 2m0s", "still running: t.py::test_hangs", `sandbox.timeout (now "2m0s")`} {
		if !strings.Contains(why, w) {
			t.Errorf("timedOutWhy = %q, want %q in it", why, w)
		}
	}
	if got := timedOutWhy(&testrun.Report{TimedOut: true}); got != "the test command timed out" {
		t.Errorf("without Timeout: %q", got)
	}
}

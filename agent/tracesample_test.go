package agent

import (
	"fmt"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

func TestTraceSampleManyFailures(t *testing.T) {
	few := []testrun.Result{{ID: "a"}, {ID: "b"}}
	if got := traceSample(few); len(got) != 2 {
		t.Fatalf("under maxTargets every failure is traced, got %d", len(got))
	}
	// 242 failures of two causes (one helper raising): one test of each
	// cause, then more up to five.
	var many []testrun.Result
	for i := range 242 {
		line := 2397
		if i%7 == 3 {
			line = 120
		}
		many = append(many, testrun.Result{ID: fmt.Sprintf("t%d", i), File: "pkg/mod.py", Line: line,
			Frames: []testrun.Frame{{File: "tests/test_x.py", Line: 10}}})
	}
	got := traceSample(many)
	if len(got) != 5 {
		t.Fatalf("traced %d tests, want 5", len(got))
	}
	if got[0].ID != "t0" || got[1].ID != "t3" {
		t.Errorf("want the first of each distinct failure first, got %s, %s", got[0].ID, got[1].ID)
	}
	// Many distinct failures: at most traceSampleMax.
	for i := range many {
		many[i].Line = i + 1
	}
	if got := traceSample(many); len(got) != traceSampleMax {
		t.Errorf("traced %d tests, want %d", len(got), traceSampleMax)
	}
}

package node

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// TestAvaInComposedScript: ava before the last command of a test script
// ("ava && node -e …", as "xo && ava && tsd") gets no --tap; its default
// reporter is read per test, with the ids its TAP gives (avaAll), the
// failures' file, line and message, and its totals cross-checked.
func TestAvaInComposedScript(t *testing.T) {
	pkg := []byte(`{"scripts":{"test":"ava && node -e \"console.log('lint ok')\""},"devDependencies":{"ava":"6.4.1"}}`)
	r := nodeRunner(pkg)
	if r.Name != testrun.RunnerNPM || len(r.Args) != 3 {
		t.Fatalf("runner %s %q, want npm test without flags appended to the last command", r.Name, r.Args)
	}
	out, err := os.ReadFile(filepath.Join("testdata", "ava", "ava6-default-composed.out"))
	if err != nil {
		t.Fatal(err)
	}
	rep := testrun.Parse(r, &sandbox.Result{Stdout: out, ExitCode: 1}, nil)
	if rep.Runner != RunnerAva {
		t.Fatalf("runner %q, want %q (per test, not by exit code)", rep.Runner, RunnerAva)
	}
	if len(rep.Mismatch) > 0 {
		t.Errorf("cross-check: %v", rep.Mismatch)
	}
	got := statuses(rep)
	for id, want := range avaAll {
		if got[id] != want {
			t.Errorf("%s: %q, want %q", id, got[id], want)
		}
	}
	if len(got) != len(avaAll) {
		t.Errorf("%d results %v, want %d", len(got), got, len(avaAll))
	}
	for _, res := range rep.Tests {
		switch res.ID {
		case "math › adds":
			if res.File != "test/math.js" || res.Line != 3 || res.Message == "" {
				t.Errorf("adds: %s:%d %q, want test/math.js:3 and a message", res.File, res.Line, res.Message)
			}
		case "sub › strings › throws":
			if res.Message != "Error thrown in test" {
				t.Errorf("throws: message %q, want the line's own", res.Message)
			}
		}
	}

	// All pass, and the next command runs: per test, exit 0.
	out, err = os.ReadFile(filepath.Join("testdata", "ava", "ava6-default-pass.out"))
	if err != nil {
		t.Fatal(err)
	}
	rep = testrun.Parse(r, &sandbox.Result{Stdout: out}, nil)
	if rep.Runner != RunnerAva || rep.Passed != 1 || rep.Failed != 0 || !rep.OK() {
		t.Errorf("passing run: runner %q, %d passed %d failed, ok %v; want ava 1/0", rep.Runner, rep.Passed, rep.Failed, rep.OK())
	}
	// A later command failing after ava passed is still a failure.
	rep = testrun.Parse(r, &sandbox.Result{Stdout: out, ExitCode: 1}, nil)
	if rep.OK() {
		t.Errorf("the script failed after ava passed, and the report is ok")
	}
	// Without ava's totals it is the exit code, as before.
	rep = testrun.Parse(r, &sandbox.Result{Stdout: []byte("  ✔ looks like a test\n"), ExitCode: 1}, nil)
	if rep.Runner != testrun.RunnerExitCode {
		t.Errorf("output without ava's totals read as %q", rep.Runner)
	}
}

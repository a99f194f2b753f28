package parity

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// TestNPMHooksBwrap runs the node-npm-hooks fixture (a pretest linter, a
// test script that is `npm run --silent unit` with a preunit that
// generates the tests' data, a posttest) for real under bwrap, with
// the host's node and npm: the tests' own results are read as natively
// (3 passed, 1 skipped) and every hook is a step with its exit status;
// a failing pretest is one failure naming the script, its command, its
// exit status and its output, with no test run (npm stops there); a
// failing posttest after passing tests is a failure of its own next to
// them.
func TestNPMHooksBwrap(t *testing.T) {
	sandboxtest.RequireCommand(t, "bwrap")
	sandboxtest.RequireCommand(t, "npm")
	sandboxtest.RequireCommand(t, "git")
	run := func(t *testing.T, edit func(dir string)) *testrun.Report {
		dir, err := Unpack(t.Context(), Project{Name: "node-npm-hooks", Dir: filepath.Join("testdata", "node-npm-hooks")}, t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		if edit != nil {
			edit(dir)
		}
		rep, err := testOn(t, dir, config.BackendBwrap)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	appendTo := func(rel, text string) func(string) {
		return func(dir string) {
			f, err := os.OpenFile(filepath.Join(dir, rel), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if _, err := f.WriteString(text); err != nil {
				t.Fatal(err)
			}
		}
	}
	steps := func(rep *testrun.Report) string {
		var s []string
		for _, st := range rep.Steps {
			s = append(s, st.Name+"="+strconv.Itoa(st.Exit))
		}
		return strings.Join(s, " ")
	}

	t.Run("passing", func(t *testing.T) {
		rep := run(t, nil)
		if rep.Passed != 3 || rep.Failed != 0 || rep.Skipped != 1 || rep.ExitCode != 0 {
			t.Errorf("%d/%d/%d exit %d, want the native 3/0/1 and exit 0\n%s", rep.Passed, rep.Failed, rep.Skipped, rep.ExitCode, rep.Output)
		}
		if got, want := steps(rep), "npm:pretest=0 npm:preunit=0 npm:posttest=0"; got != want {
			t.Errorf("steps %q, want %q", got, want)
		}
	})
	t.Run("failing pretest", func(t *testing.T) {
		rep := run(t, appendTo("lib/sum.js", "\tmodule.exports.x = 1;\n"))
		f := rep.Failures()
		if len(f) != 1 || f[0].ID != "npm:pretest" || rep.Passed != 0 || rep.ExitCode != 2 {
			t.Fatalf("failures %+v, passed %d, exit %d; want only npm:pretest, exit 2\n%s", f, rep.Passed, rep.ExitCode, rep.Output)
		}
		for _, want := range []string{"exit status 2", "node scripts/lint.js", "lib/sum.js: tab character"} {
			if !strings.Contains(f[0].Message, want) {
				t.Errorf("message %q lacks %q", f[0].Message, want)
			}
		}
	})
	t.Run("failing posttest", func(t *testing.T) {
		rep := run(t, appendTo("scripts/done.js", "console.error('posttest: coverage below 90%');\nprocess.exit(4);\n"))
		f := rep.Failures()
		if rep.Passed != 3 || rep.Skipped != 1 || len(f) != 1 || f[0].ID != "npm:posttest" || !strings.Contains(f[0].Message, "coverage below 90%") {
			t.Errorf("%d passed, %d skipped, failures %+v; want 3, 1 and npm:posttest with its output\n%s", rep.Passed, rep.Skipped, f, rep.Output)
		}
	})
}

// testOn runs `fixpoint test` on dir with the given sandbox backend and
// no model, as a user would.
func testOn(t *testing.T, dir, backend string) (*testrun.Report, error) {
	t.Helper()
	cfg, err := config.Load(config.LoadOptions{Root: dir, Getenv: os.Getenv, Flags: func(c *config.Config) { c.Sandbox.Backend = backend }})
	if err != nil {
		t.Fatal(err)
	}
	eng, err := agent.Open(t.Context(), cfg, dir, &agent.OpenOptions{NoModel: true})
	if err != nil {
		t.Fatal(err)
	}
	defer eng.Close()
	return eng.Test(t.Context(), dir, nil)
}

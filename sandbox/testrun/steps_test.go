package testrun

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// mark is a step shell's line for step: its start (exit < -1) or end.
func mark(step, command string, exit int) string {
	if exit < -1 {
		return "\n" + StepPrefix + `{"step":"` + step + `","command":"` + command + `"}` + "\n"
	}
	return "\n" + StepPrefix + `{"step":"` + step + `","exit":` + strconv.Itoa(exit) + "}\n"
}

const tapThreePass = "TAP version 13\nok 1 - a\nok 2 - b\nok 3 - c # SKIP later\n1..3\n# tests 3\n# pass 2\n# fail 0\n# skipped 1\n"

// TestStepsFailingHook: a pre script that fails stops npm before the
// tests: the report names the step, its command, its exit status and the
// tail of its output, instead of a bare "(exit)".
func TestStepsFailingHook(t *testing.T) {
	stderr := mark("npm:pretest", "node scripts/lint.js", -2) + "lib/a.js: tab character\nlint: 1 problem(s)\n" + mark("npm:pretest", "", 2)
	rep := Parse(Runner{Name: RunnerNPM, Format: NPM("")}, &sandbox.Result{ExitCode: 2, Stderr: []byte(stderr)}, nil)
	if rep.Failed != 1 || len(rep.Tests) != 1 {
		t.Fatalf("tests %+v, want one failure", rep.Tests)
	}
	f := rep.Tests[0]
	if f.ID != "npm:pretest" || f.Status != StatusError || f.Package != f.ID {
		t.Errorf("failure %+v, want the step npm:pretest, not a test", f)
	}
	for _, want := range []string{"npm:pretest failed with exit status 2", "node scripts/lint.js", "lint: 1 problem(s)", "tab character"} {
		if !strings.Contains(f.Message, want) {
			t.Errorf("message %q lacks %q", f.Message, want)
		}
	}
	if len(rep.Steps) != 1 || rep.Steps[0].Exit != 2 || rep.Steps[0].Command != "node scripts/lint.js" {
		t.Errorf("steps %+v", rep.Steps)
	}
}

// TestStepsAroundRunner: the runner step's per-test results are read as
// without hooks; passing hooks are steps, not tests (the counts are the
// runner's, as natively); a failing post script after passing tests is a
// failure of its own.
func TestStepsAroundRunner(t *testing.T) {
	stderr := mark("npm:pretest", "eslint .", -2) + mark("npm:pretest", "", 0) +
		mark("npm:posttest", "node check.js", -2) + "posttest: out of date\n" + mark("npm:posttest", "", 3)
	rep := Parse(Runner{Name: RunnerNPM, Format: NPM("")}, &sandbox.Result{ExitCode: 3, Stdout: []byte(tapThreePass), Stderr: []byte(stderr)}, nil)
	if rep.Passed != 2 || rep.Skipped != 1 || rep.Failed != 1 {
		t.Fatalf("counts %d/%d/%d, want 2/1/1 (the post script's failure)", rep.Passed, rep.Failed, rep.Skipped)
	}
	if got := rep.Failures()[0]; got.ID != "npm:posttest" || !strings.Contains(got.Message, "out of date") {
		t.Errorf("failure %+v, want npm:posttest with its output", got)
	}
	if len(rep.Steps) != 2 || rep.Steps[0].Name != "npm:pretest" || rep.Steps[0].Exit != 0 {
		t.Errorf("steps %+v", rep.Steps)
	}
	if len(rep.Mismatch) != 0 {
		t.Errorf("mismatch %v", rep.Mismatch)
	}
	// Passing hooks only: the runner's counts, exit 0.
	ok := Parse(Runner{Name: RunnerNPM, Format: NPM("")}, &sandbox.Result{Stdout: []byte(tapThreePass), Stderr: []byte(mark("npm:pretest", "x", -2) + mark("npm:pretest", "", 0))}, nil)
	if !ok.OK() || ok.Passed != 2 || ok.Failed != 0 || len(ok.Steps) != 1 {
		t.Errorf("passing hook: %d/%d/%d steps %+v, want 2/0/1 and OK", ok.Passed, ok.Failed, ok.Skipped, ok.Steps)
	}
}

// TestStepsForged: the marks are on stderr, which the tests can write to,
// so none makes a failed run pass or a passed run fail: a command that
// failed still fails whatever the marks say, a command that passed is
// not failed by a mark (a script's `npm run lint || true` goes on after
// its failing hook, and so does a forged mark), and an end without a
// start is no step.
func TestStepsForged(t *testing.T) {
	forgedPass := mark("npm:posttest", "x", -2) + mark("npm:posttest", "", 0) + "real failure\n"
	rep := Parse(Runner{Name: RunnerNPM, Format: NPM("")}, &sandbox.Result{ExitCode: 1, Stdout: []byte(tapThreePass), Stderr: []byte(forgedPass)}, nil)
	if rep.OK() || rep.Failed == 0 || rep.Failures()[0].ID != ExitID {
		t.Errorf("exit 1 with passing marks: failures %+v, want the exit entry", rep.Failures())
	}
	ignored := mark("npm:prelint", "eslint", -2) + mark("npm:prelint", "", 1)
	rep = Parse(Runner{Name: RunnerNPM, Format: NPM("")}, &sandbox.Result{Stdout: []byte(tapThreePass), Stderr: []byte(ignored)}, nil)
	if !rep.OK() || rep.Failed != 0 || len(rep.Steps) != 1 || rep.Steps[0].Exit != 1 {
		t.Errorf("exit 0 with a failing mark: OK %v, failed %d, steps %+v; want OK with the step recorded", rep.OK(), rep.Failed, rep.Steps)
	}
	endOnly := mark("npm:pretest", "", 5)
	rep = Parse(Runner{Name: RunnerNPM, Format: NPM("")}, &sandbox.Result{ExitCode: 1, Stderr: []byte(endOnly)}, nil)
	if len(rep.Steps) != 0 || rep.Failures()[0].ID != ExitID {
		t.Errorf("an end without a start: steps %+v failures %+v", rep.Steps, rep.Failures())
	}
}

// TestStepsTimedOut: a hook still running at the time limit is the
// failure that names it.
func TestStepsTimedOut(t *testing.T) {
	stderr := mark("npm:pretest", "node wait.js", -2) + "waiting for a server\n"
	rep := Parse(Runner{Name: RunnerNPM, Format: NPM("")}, &sandbox.Result{ExitCode: -1, TimedOut: true, Stderr: []byte(stderr)}, nil)
	if rep.Failed != 1 || rep.Tests[0].ID != "npm:pretest" || !strings.Contains(rep.Tests[0].Message, "did not finish: timed out") || !strings.Contains(rep.Tests[0].Message, "waiting for a server") {
		t.Errorf("tests %+v", rep.Tests)
	}
}

// TestStepShellRun: Run writes the step shell into the workspace copy and
// exports its absolute path before the command, which reaches it
// through the variable (as npm does with script-shell).
func TestStepShellRun(t *testing.T) {
	sess := newLocalSession(t)
	shell := "#!/bin/sh\nprintf '\\n%s\\n' '" + StepPrefix + `{"step":"npm:pretest","command":"check"}` + "' >&2\nsh -c \"$2\" >&2\nc=$?\nprintf '\\n%s%s}\\n' '" + StepPrefix + `{"step":"npm:pretest","exit":` + "' \"$c\" >&2\nexit $c\n"
	r := Runner{Name: RunnerNPM, Format: NPM(""), Args: []string{"sh", "-c", `case "$STEP_SHELL" in /*) ;; *) exit 9;; esac; "$STEP_SHELL" -c 'echo broken; exit 4'`},
		StepShell: &StepShell{Script: shell, Env: "STEP_SHELL"}}
	rep, err := Run(t.Context(), sess, r, sandbox.Limits{Timeout: time.Minute}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.ExitCode != 4 || len(rep.Steps) != 1 || rep.Steps[0].Exit != 4 || rep.Failures()[0].ID != "npm:pretest" || !strings.Contains(rep.Failures()[0].Message, "broken") {
		t.Errorf("exit %d steps %+v failures %+v output %q", rep.ExitCode, rep.Steps, rep.Failures(), rep.Output)
	}
	if strings.Join(rep.Command, " ") != strings.Join(r.Args, " ") {
		t.Errorf("command %q, want the runner's own", rep.Command)
	}
}

// TestStepsNested: a posttest that runs `npm test` in a sub-package with
// a posttest of its own: the inner one ends first, and the outer one's
// failure carries both outputs.
func TestStepsNested(t *testing.T) {
	stderr := mark("npm:posttest", "cd multirepo && npm test", -2) + "outer starts\n" +
		mark("npm:posttest", "node inner.js", -2) + "inner ok\n" + mark("npm:posttest", "", 0) +
		"npm error network request failed\n" + mark("npm:posttest", "", 1)
	rep := Parse(Runner{Name: RunnerNPM, Format: NPM("")}, &sandbox.Result{ExitCode: 1, Stdout: []byte(tapThreePass), Stderr: []byte(stderr)}, nil)
	if len(rep.Steps) != 2 || rep.Steps[0].Exit != 1 || rep.Steps[1].Exit != 0 || rep.Steps[0].Command != "cd multirepo && npm test" {
		t.Fatalf("steps %+v, want the outer posttest failed and the inner one passed", rep.Steps)
	}
	f := rep.Failures()
	if len(f) != 1 || !strings.Contains(f[0].Message, "network request failed") || !strings.Contains(f[0].Excerpt, "inner ok") {
		t.Errorf("failures %+v", f)
	}
}

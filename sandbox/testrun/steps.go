package testrun

import (
	"encoding/json"
	"fmt"
	"strings"
)

// Steps of a test command that are not tests: the pre and post scripts
// npm runs around `npm test` and around an `npm run X` the test script
// calls (pretest: "npm run lint"). Their exit status is a result of its
// own, named after the script ("npm:pretest"), next to the per-test
// results the runner step reports.
//
// A language marks such steps through a step shell (Runner.StepShell):
// an executable Run writes to StepShellPath before the command starts and
// whose absolute path it exports in a variable the tool reads (npm's
// npm_config_script_shell, which npm also hands to the npm commands a
// script runs). The shell runs each script as sh does; around each step
// it writes a StepPrefix line to stderr when the step starts and one with
// its exit status when it ends, and it sends the step's own output to
// stderr, so that what a step printed is neither read as test results
// nor lost: the lines between its two marks are its output.
//
// The marks travel on the command's stderr, which the code under test can
// write to, so nothing they say can make a run pass: the command's own
// exit status decides (a command that exited non-zero with no failure
// read still gets the ExitID entry), and a failed step counts as a
// failure only when the command failed too (a script's `npm run lint ||
// true` goes on after a failing hook, and npm's exit status says so).

// StepPrefix starts the lines a step shell writes to stderr: the prefix,
// then a JSON object {"step","command"} when a step starts and
// {"step","exit"} when it ends.
const StepPrefix = "fixpoint-step "

// StepShellPath is where Run writes Runner.StepShell's script,
// workspace-relative; .fixpoint never enters a snapshot.
const StepShellPath = ".fixpoint/step-shell"

// StepShell is a step-marking shell a Runner's command uses.
type StepShell struct {
	// Script is the executable's text (a #! script).
	Script string
	// Env is the variable Run sets to the script's absolute path for the
	// command ("npm_config_script_shell").
	Env string
}

// wrap returns args run after StepShellPath is written and s.Env exported.
func (s *StepShell) wrap(args []string) []string {
	// rm first: an earlier run in the session may have left a link there.
	const script = `mkdir -p -- "$(dirname -- "$3")" && rm -f -- "$3" && printf '%s' "$1" > "$3" && chmod 755 -- "$3" && ` +
		`export "$2=$(pwd)/$3" && shift 3 && exec "$@"`
	return append([]string{"sh", "-c", script, "sh", s.Script, s.Env, StepShellPath}, args...)
}

// Step is one step of a test command that is not a test (a pre or post
// script): its name ("npm:pretest"), its command, its exit status (-1 when
// it never ended) and, for a failed one, the tail of its output.
type Step struct {
	Name    string `json:"name"`
	Command string `json:"command,omitempty"`
	Exit    int    `json:"exit"`
	Output  string `json:"output,omitempty"`
}

// maxSteps bounds the steps read from one run.
const maxSteps = 64

// stepMark is one StepPrefix line.
type stepMark struct {
	Step    string `json:"step"`
	Command string `json:"command"`
	Exit    *int   `json:"exit"`
}

// parseSteps reads the step marks in stderr, in the order the steps
// started. A step's output is the stderr lines between its marks; a step
// started twice (a hook run by two npm commands) is two steps, and one
// started inside another of the same name (a posttest that runs `npm
// test` in a sub-package with its own posttest) ends before it.
func parseSteps(stderr []byte) []Step {
	if !strings.Contains(string(stderr), StepPrefix) {
		return nil
	}
	var steps []Step
	open := map[string][]int{} // step name -> indexes of its unfinished runs, innermost last
	out := map[int][]string{}  // index -> output lines
	for _, l := range splitLines(stderr) {
		i := strings.Index(l, StepPrefix)
		if i < 0 {
			for _, js := range open {
				for _, j := range js {
					if len(out[j]) < 400 {
						out[j] = append(out[j], l)
					}
				}
			}
			continue
		}
		var m stepMark
		if json.Unmarshal([]byte(strings.TrimSpace(l[i+len(StepPrefix):])), &m) != nil || m.Step == "" {
			continue
		}
		name := clip(m.Step, 200)
		if m.Exit == nil {
			if len(steps) >= maxSteps {
				continue
			}
			open[name] = append(open[name], len(steps))
			steps = append(steps, Step{Name: name, Command: clip(m.Command, maxMessage), Exit: -1})
			continue
		}
		js := open[name]
		if len(js) == 0 {
			continue // an end without a start: not a step shell's
		}
		j := js[len(js)-1]
		if open[name] = js[:len(js)-1]; len(open[name]) == 0 {
			delete(open, name)
		}
		steps[j].Exit = *m.Exit
		if *m.Exit != 0 {
			steps[j].Output = trimExcerpt(strings.Join(out[j], "\n"))
		}
	}
	for _, js := range open { // killed or timed out: the output so far
		for _, j := range js {
			steps[j].Output = trimExcerpt(strings.Join(out[j], "\n"))
		}
	}
	return steps
}

// stepResult is the failure entry of a step that failed or never ended
// in a command that failed: not a test (its id is its package, as a
// build failure's), named after the step, with its command, exit status
// and the tail of its output.
func stepResult(s Step, rep *Report) Result {
	msg := fmt.Sprintf("%s failed with exit status %d", s.Name, s.Exit)
	switch {
	case s.Exit < 0 && rep.TimedOut:
		msg = s.Name + " did not finish: timed out"
	case s.Exit < 0 && rep.OOM:
		msg = s.Name + " did not finish: out of memory: killed"
	case s.Exit < 0:
		msg = s.Name + " did not finish"
	}
	if s.Command != "" {
		msg += fmt.Sprintf(" (its command: %s)", s.Command)
	}
	if tail := lastLines(s.Output, 3); tail != "" {
		msg += ":\n" + tail
	}
	return Result{ID: s.Name, Name: s.Name, Package: s.Name, Status: StatusError, Message: clip(msg, maxMessage), Excerpt: s.Output}
}

// addSteps records steps in rep and adds the failure entry of each step
// that failed, when the command failed: a pre script that fails stops
// npm before the tests, a post script that fails fails the command after
// them.
func addSteps(rep *Report, steps []Step) {
	rep.Steps = steps
	if rep.ExitCode == 0 && !rep.TimedOut && !rep.OOM {
		return
	}
	for _, s := range steps {
		if s.Exit != 0 && len(rep.Tests) < maxTests {
			rep.Tests = append(rep.Tests, stepResult(s, rep))
		}
	}
}

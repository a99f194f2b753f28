package testrun

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
)

// Cross-checking a report against the runner's own summary.
//
// The code under test runs in the runner's process (or writes to its
// output), so every channel fixpoint reads can be written by it: the report
// file can be rewritten at exit, lines can be added to stdout. What it
// cannot do is take back a line the runner already wrote to a pipe: the
// terminal summary pytest, jest, vitest, mocha and node's TAP reporter print
// before the process exits ("1 failed, 2 passed in 0.1s", "Tests: 1 failed",
// "# fail 1", "FAILED tests/x.py::t") is in the stream whatever happens
// after. So every summary line of the run must agree with the parsed report:
// a failure any of them counts, or a test any of them names as failed, makes
// the report disagree; so does a report with more passes than the runner's
// smallest summary count, and a pytest or jest run whose summary is
// missing altogether (output that was cut excepted). A forger may add a
// fake summary, but not remove the real one; one that prevents the runner
// from printing it (killing it, exiting before) loses its line, which the
// presence rule catches for the runners that always print it.

var (
	pytestSummaryLineRe = regexp.MustCompile(`(?m)^=*\s*((?:\d+ (?:failed|passed|errors?|skipped|xfailed|xpassed|warnings?|deselected|rerun)(?:, )?)+) in [\d.]+s\b`)
	pytestCountRe       = regexp.MustCompile(`(\d+) (failed|passed|errors?)\b`)
	pytestFailedRe      = regexp.MustCompile(`(?m)^(?:FAILED|ERROR) (\S+)`)
	pytestShortRe       = regexp.MustCompile(`(?m)^(?:=+ short test summary info =+|(?:PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) \S)`)
	jestSummaryRe       = regexp.MustCompile(`(?m)^Tests:\s+(.*)$`)
	vitestSummaryRe     = regexp.MustCompile(`(?m)^\s*Tests\s+(\d.*)$`)
	failedCountRe       = regexp.MustCompile(`(\d+) failed`)
	passedCountRe       = regexp.MustCompile(`(\d+) passed`)
	mochaFailingRe      = regexp.MustCompile(`(?m)^\s*(\d+) failing\b`)
	tapFailRe           = regexp.MustCompile(`(?m)^# fail (\d+)\s*$`)
	tapPassRe           = regexp.MustCompile(`(?m)^# pass (\d+)\s*$`)
)

// crossCheck returns the ways rep disagrees with the summary lines its
// runner wrote to stdout and stderr (none: it agrees, or f has no summary
// fixpoint knows). cut says the text was cut, so a missing summary proves
// nothing.
func crossCheck(f *Format, rep *Report, stdout, stderr []byte, cut bool) []string {
	if f == nil || f.Check == nil {
		return nil
	}
	out := append(append([]byte(nil), stdout...), '\n')
	out = append(out, stderr...)
	// A runner the sandbox stopped (time limit, memory) never printed its
	// summary: its absence proves nothing, as with cut output.
	return f.Check(rep, out, cut || rep.TimedOut || rep.OOM)
}

// SummaryCounts compares the counts of one summary line a runner printed
// with rep: a failure the line counts where rep has none, or more passes
// in rep than the line counts, is a disagreement, named after where
// ("pytest's summary line"). A negative count was not printed.
func SummaryCounts(rep *Report, where string, failed, passed int) []string {
	var why []string
	if failed > 0 && rep.Failed == 0 {
		why = append(why, fmt.Sprintf("%s reports %d failure(s) and the parsed results none", where, failed))
	}
	if passed >= 0 && rep.Passed > passed {
		why = append(why, fmt.Sprintf("%s reports %d passed test(s) and the parsed results %d", where, passed, rep.Passed))
	}
	return why
}

// pytestCheck: every counts line, every test the short summary names as
// failed, and the presence of a summary.
func pytestCheck(rep *Report, out []byte, cut bool) []string {
	var why []string
	found := false
	for _, m := range pytestSummaryLineRe.FindAllSubmatch(out, -1) {
		found = true
		failed, passed := 0, 0
		for _, c := range pytestCountRe.FindAllSubmatch(m[1], -1) {
			n, _ := strconv.Atoi(string(c[1]))
			if string(c[2]) == "passed" {
				passed += n
			} else {
				failed += n
			}
		}
		why = append(why, SummaryCounts(rep, "pytest's summary line", failed, passed)...)
	}
	status := map[string]Status{}
	for _, t := range rep.Tests {
		status[t.ID] = t.Status
	}
	for _, m := range pytestFailedRe.FindAllSubmatch(out, -1) {
		if id := string(m[1]); status[id] == StatusPass {
			why = append(why, fmt.Sprintf("pytest's summary names %s as failed and the parsed results as passed", id))
		}
	}
	// -qq (addopts -q and the command's -q) drops the counts line;
	// -rA's short summary is there still.
	found = found || pytestShortRe.Match(out)
	if !found && !cut && len(rep.Tests) > 0 {
		why = append(why, "pytest's own summary is missing from its output")
	}
	return why
}

func jestCheck(rep *Report, out []byte, cut bool) []string {
	var why []string
	found := false
	for _, m := range jestSummaryRe.FindAllSubmatch(out, -1) {
		found = true
		why = append(why, SummaryCounts(rep, "jest's summary line", atoiFirst(failedCountRe, m[1]), atoiFirst(passedCountRe, m[1]))...)
	}
	if !found && !cut && len(rep.Tests) > 0 {
		why = append(why, "jest's own summary line (Tests: …) is missing from its output")
	}
	return why
}

func vitestCheck(rep *Report, out []byte, _ bool) []string {
	var why []string
	for _, m := range vitestSummaryRe.FindAllSubmatch(out, -1) {
		why = append(why, SummaryCounts(rep, "vitest's summary line", atoiFirst(failedCountRe, m[1]), atoiFirst(passedCountRe, m[1]))...)
	}
	return why
}

func mochaCheck(rep *Report, out []byte, _ bool) []string {
	var why []string
	for _, m := range mochaFailingRe.FindAllSubmatch(out, -1) {
		n, _ := strconv.Atoi(string(m[1]))
		why = append(why, SummaryCounts(rep, "mocha's summary line", n, -1)...)
	}
	return why
}

func tapCheck(rep *Report, out []byte, _ bool) []string {
	var why []string
	for _, m := range tapFailRe.FindAllSubmatch(out, -1) {
		n, _ := strconv.Atoi(string(m[1]))
		why = append(why, SummaryCounts(rep, "the TAP summary (# fail)", n, -1)...)
	}
	for _, m := range tapPassRe.FindAllSubmatch(out, -1) {
		n, _ := strconv.Atoi(string(m[1]))
		why = append(why, SummaryCounts(rep, "the TAP summary (# pass)", 0, n)...)
	}
	return why
}

// atoiFirst is the number in re's first group at its first match in b, or 0.
func atoiFirst(re *regexp.Regexp, b []byte) int {
	m := re.FindSubmatch(b)
	if m == nil {
		return 0
	}
	n, _ := strconv.Atoi(string(bytes.TrimSpace(m[1])))
	return n
}

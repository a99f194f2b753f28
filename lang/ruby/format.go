package ruby

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// Format is the result format of minitest's verbose reporter (-v),
// declared here whole since only Ruby reports in it:
//
//	CalcTest#test_add = 0.00 s = F      (written as "CalcTest#test_add = "
//	                                     before the test runs; ".", "F",
//	                                     "E" or "S" after it)
//	  1) Failure:
//	CalcTest#test_add [/workspace/test/calc_test.rb:5]:
//	Expected: 3
//	  Actual: -1
//
//	4 runs, 2 assertions, 1 failures, 1 errors, 1 skips
//
// A test whose line never got its verdict is unfinished: the sandbox's
// timeout or memory kill is given to it. Without -v (a configured
// command) only the failure sections name tests; the summary counts the
// passes. The summary cross-checks the results.
var Format = &testrun.Format{
	Name:       "minitest",
	Parse:      parse,
	Sniff:      func(stdout, stderr, _ []byte) bool { return summaryRe.Match(stdout) || summaryRe.Match(stderr) },
	ResultLine: resultLine,
	Unfinished: "test did not finish (the ruby process exited)",
	Check:      check,
}

var (
	startRe   = regexp.MustCompile(`^([A-Z][\w:]*)#(\S+) = `)
	verdictRe = regexp.MustCompile(`(\d+\.\d+) s = ([.FES])\s*$`)
	sectionRe = regexp.MustCompile(`^\s*\d+\) (Failure|Error|Skipped):\s*$`)
	headRe    = regexp.MustCompile(`^([A-Z][\w:]*)#(\S+?)(?: \[(.+):(\d+)\])?:\s*$`)
	frameRe   = regexp.MustCompile(`^\s*(\S+?\.rb):(\d+):in [` + "`" + `'](.*)'`)
	summaryRe = regexp.MustCompile(`(?m)^(\d+) runs, \d+ assertions, (\d+) failures, (\d+) errors, (\d+) skips`)
	expectRe  = regexp.MustCompile(`(?m)^Expected:? (.*)\n\s*Actual:? (.*)$`)
)

// maxMessage bounds a failure message; maxTests the results of a run.
const (
	maxMessage = 1 << 10
	maxTests   = 200000
)

func parse(in testrun.Input) testrun.Parsed {
	var p testrun.Parsed
	index := map[string]int{}
	result := func(class, name string) *testrun.Result {
		id := class + "#" + name
		if i, ok := index[id]; ok {
			return &p.Tests[i]
		}
		if len(p.Tests) >= maxTests {
			return nil
		}
		index[id] = len(p.Tests)
		p.Tests = append(p.Tests, testrun.Result{ID: id, Name: name, Package: class})
		return &p.Tests[len(p.Tests)-1]
	}
	lines := strings.Split(string(bytes.ReplaceAll(in.Stdout, []byte("\r\n"), []byte("\n"))), "\n")
	open := -1 // index of the test whose verdict is awaited
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if m := startRe.FindStringSubmatch(l); m != nil {
			if r := result(m[1], m[2]); r != nil {
				open = index[r.ID]
			}
		}
		if open >= 0 {
			if m := verdictRe.FindStringSubmatch(l); m != nil {
				p.Tests[open].Status = status(m[2])
				open = -1
			}
		}
		if sectionRe.MatchString(l) && i+1 < len(lines) {
			i = section(in, lines, i+1, result)
		}
	}
	for i, t := range p.Tests {
		if t.Status == "" {
			p.Running = append(p.Running, i)
		}
	}
	if m := summaryRe.FindSubmatch(in.Stdout); m != nil {
		runs, failures, errors, skips := atoi(m[1]), atoi(m[2]), atoi(m[3]), atoi(m[4])
		p.Counted = &testrun.Counts{Passed: max(runs-failures-errors-skips, 0), Failed: failures + errors, Skipped: skips}
	}
	return p
}

// section reads one failure section from its head line at i: the test,
// where it failed, its message and backtrace. It returns the last line
// read.
func section(in testrun.Input, lines []string, i int, result func(class, name string) *testrun.Result) int {
	m := headRe.FindStringSubmatch(lines[i])
	if m == nil {
		return i - 1
	}
	r := result(m[1], m[2])
	var body []string
	j := i + 1
	for ; j < len(lines) && strings.TrimSpace(lines[j]) != "" && len(body) < 200; j++ {
		body = append(body, lines[j])
	}
	if r == nil {
		return j - 1
	}
	kind := sectionRe.FindStringSubmatch(lines[i-1])[1]
	switch kind {
	case "Skipped":
		r.Status = testrun.StatusSkip
	case "Error":
		r.Status = testrun.StatusError
	default:
		r.Status = testrun.StatusFail
	}
	text := strings.Join(body, "\n")
	r.Excerpt = clip(text, 4<<10)
	if m[3] != "" {
		if f, ok := in.Rel(m[3]); ok {
			r.File, r.Line = f, atoi([]byte(m[4]))
		}
	}
	var msg []string
	for _, b := range body {
		if fm := frameRe.FindStringSubmatch(b); fm != nil {
			if f, ok := in.Rel(fm[1]); ok && len(r.Frames) < 16 {
				r.Frames = append(r.Frames, testrun.Frame{Func: fm[3], File: f, Line: atoi([]byte(fm[2]))})
			}
			continue
		}
		msg = append(msg, b)
	}
	r.Message = clip(strings.Join(msg, "\n"), maxMessage)
	if r.File == "" && len(r.Frames) > 0 {
		r.File, r.Line = r.Frames[0].File, r.Frames[0].Line
	}
	if e := expectRe.FindStringSubmatch(text); e != nil {
		r.Expected, r.Actual = clip(e[1], maxMessage), clip(e[2], maxMessage)
	}
	return j - 1
}

func status(code string) testrun.Status {
	switch code {
	case ".":
		return testrun.StatusPass
	case "F":
		return testrun.StatusFail
	case "S":
		return testrun.StatusSkip
	}
	return testrun.StatusError
}

// resultLine keeps what parse needs of a run too long to keep whole: the
// per-test lines, the section headers and the summary.
func resultLine(l []byte) bool {
	if len(l) == 0 {
		return false
	}
	switch c := l[0]; {
	case c >= 'A' && c <= 'Z':
		return startRe.Match(l) || headRe.Match(l)
	case c >= '0' && c <= '9':
		return verdictRe.Match(l) || summaryRe.Match(l)
	case c == ' ':
		return sectionRe.Match(l)
	}
	return false
}

// check compares the results with every summary line minitest printed: a
// failure it counts that the results lack, or more passes than it counts.
// A run with tests and no summary at all (the process exited first, or
// the summary was removed) is no pass either.
func check(rep *testrun.Report, out []byte, cut bool) []string {
	var why []string
	found := false
	for _, m := range summaryRe.FindAllSubmatch(out, -1) {
		found = true
		runs, failures, errors, skips := atoi(m[1]), atoi(m[2]), atoi(m[3]), atoi(m[4])
		why = append(why, testrun.SummaryCounts(rep, "minitest's summary line", failures+errors, runs-failures-errors-skips)...)
	}
	if !found && !cut && rep.Failed == 0 && len(rep.Tests) > 0 {
		why = append(why, "minitest's own summary line (N runs, …) is missing from its output")
	}
	return why
}

func atoi(b []byte) int {
	n, err := strconv.Atoi(string(b))
	if err != nil || n < 0 {
		return 0
	}
	return n
}

func clip(s string, n int) string {
	s = strings.TrimSpace(s)
	if len(s) <= n {
		return s
	}
	for n > 0 && s[n]&0xC0 == 0x80 {
		n--
	}
	return s[:n] + " ..."
}

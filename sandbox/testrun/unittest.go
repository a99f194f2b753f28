package testrun

import (
	"bytes"
	"regexp"
	"strings"
)

// Unittest is the format of `python -m unittest -v`: a verbose line per
// test on stderr, failure sections and the summary.
var Unittest = &Format{
	Name: RunnerUnittest,
	Parse: func(in Input) Parsed {
		tests, running := parseUnittest(joinOutput(in.Stderr, in.Stdout), in.paths())
		return Parsed{Tests: tests, Running: running}
	},
	Sniff: func(stdout, stderr, _ []byte) bool {
		return unittestSummaryRe.Match(stderr) || unittestSummaryRe.Match(stdout)
	},
	ResultLine: unittestResultLine,
}

var unittestSummaryRe = regexp.MustCompile(`(?m)^Ran \d+ tests? in `)

// unittest's verdicts after " ... ", and the starts of its summary lines.
var (
	unittestVerdicts = [][]byte{[]byte("ok"), []byte("FAIL"), []byte("ERROR"), []byte("skipped"), []byte("expected failure"), []byte("unexpected success")}
	unittestSummary  = [][]byte{[]byte("FAIL: "), []byte("ERROR: "), []byte("UNEXPECTED SUCCESS: "), []byte("Ran "), []byte("OK"), []byte("FAILED")}
)

// unittestResultLine keeps verbose results and the unindented summary
// and failure-section headers.
func unittestResultLine(l []byte) bool {
	for _, p := range unittestSummary {
		if bytes.HasPrefix(l, p) {
			return true
		}
	}
	i := bytes.Index(l, []byte(" ... "))
	if i < 0 {
		return false
	}
	rest := l[i+5:]
	for _, v := range unittestVerdicts {
		if bytes.HasPrefix(rest, v) {
			return true
		}
	}
	return false
}

var (
	// "test_add (test_calc.TestCalc.test_add) ... ok"; the subtest form adds
	// " (i=2)" and an indent. Python before 3.11 prints only the class.
	unittestLineRe = regexp.MustCompile(`^\s*(\w+) \(([\w.]+)\)(?: \((.*?)\))?(?: \.\.\. (.*))?$`)
	unittestHeadRe = regexp.MustCompile(`^(FAIL|ERROR|UNEXPECTED SUCCESS): (\w+) \(([\w.]+)\)(?: \((.*)\))?$`)
)

const unittestFailedImport = "unittest.loader._FailedTest"

// unittestID is the dotted id unittest uses, plus " (params)" for a subtest.
func unittestID(name, where, params string) (id, pkg string) {
	if where == unittestFailedImport+"."+name || where == unittestFailedImport {
		return name, name // a module that failed to import
	}
	id = where
	if !strings.HasSuffix(where, "."+name) {
		id = where + "." + name
	}
	pkg = id
	if i := strings.LastIndexByte(pkg, '.'); i > 0 {
		pkg = pkg[:i] // module.Class
		if j := strings.LastIndexByte(pkg, '.'); j > 0 {
			pkg = pkg[:j]
		}
	}
	if params != "" {
		id += " (" + params + ")"
	}
	return id, pkg
}

func unittestStatus(s string) (Status, string, bool) {
	s = strings.TrimSpace(s)
	switch {
	case s == "ok":
		return StatusPass, "", true
	case s == "unexpected success":
		// A test marked expectedFailure that passed: unittest counts it
		// against the run (wasSuccessful() is false), and so does fixpoint.
		return StatusFail, "unexpected success", true
	case s == "FAIL":
		return StatusFail, "", true
	case s == "ERROR":
		return StatusError, "", true
	case s == "expected failure":
		return StatusSkip, "expected failure", true
	case strings.HasPrefix(s, "skipped"):
		return StatusSkip, strings.Trim(strings.TrimSpace(strings.TrimPrefix(s, "skipped")), `'"`), true
	}
	return "", "", false
}

// parseUnittest reads `python -m unittest -v` output: one result line per
// test, then a section per failure with its traceback. It also returns the
// index of a test that started and never printed its status (-1 if none).
func parseUnittest(text string, n *normalizer) ([]Result, []int) {
	lines := splitLines([]byte(text))
	var out []Result
	index := map[string]int{}
	pending := -1 // a test whose status has not been printed yet
	add := func(id, name, pkg string) int {
		if i, ok := index[id]; ok {
			return i
		}
		if len(out) >= maxTests {
			return -1
		}
		index[id] = len(out)
		out = append(out, Result{ID: id, Name: name, Package: pkg})
		return len(out) - 1
	}
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "=====") {
			i = unittestSection(lines, i, &out, index, n) - 1
			continue
		}
		if m := unittestLineRe.FindStringSubmatch(l); m != nil {
			id, pkg := unittestID(m[1], m[2], m[3])
			j := add(id, m[1], pkg)
			if j < 0 {
				continue
			}
			if st, why, ok := unittestStatus(m[4]); ok {
				out[j].Status, out[j].Message = st, why
				pending = -1
			} else {
				pending = j
			}
			if m[3] != "" { // a subtest decides its parent
				id, _ := unittestID(m[1], m[2], "")
				if p, ok := index[id]; ok && worse(out[j].Status, out[p].Status) && out[j].Status != StatusSkip {
					out[p].Status = out[j].Status
				}
			}
			continue
		}
		if pending >= 0 { // a docstring line, or output, before the status
			s := strings.TrimSpace(l)
			if k := strings.LastIndex(s, " ... "); k >= 0 {
				s = s[k+5:]
			}
			if st, why, ok := unittestStatus(s); ok {
				out[pending].Status, out[pending].Message = st, why
				pending = -1
			}
		}
	}
	var running []int
	for i := range out {
		if out[i].Status == "" {
			running = append(running, i)
		}
	}
	return out, running
}

// unittestSection reads one "=====\nFAIL: test (id)\n-----\ntraceback"
// section starting at lines[i] and returns the index after it.
func unittestSection(lines []string, i int, out *[]Result, index map[string]int, n *normalizer) int {
	if i+1 >= len(lines) {
		return i + 1
	}
	m := unittestHeadRe.FindStringSubmatch(lines[i+1])
	if m == nil {
		return i + 1
	}
	if m[1] == "UNEXPECTED SUCCESS" {
		return unittestUnexpected(lines, i+1, out, index)
	}
	end := i + 3
	for end < len(lines) && !strings.HasPrefix(lines[end], "=====") && !strings.HasPrefix(lines[end], "-----") {
		end++
	}
	id, pkg := unittestID(m[2], m[3], m[4])
	j, ok := index[id]
	if !ok {
		if len(*out) >= maxTests {
			return end
		}
		j = len(*out)
		index[id] = j
		*out = append(*out, Result{ID: id, Name: m[2], Package: pkg})
	}
	r := &(*out)[j]
	if r.Status == "" || r.Status == StatusPass {
		r.Status = map[string]Status{"FAIL": StatusFail, "ERROR": StatusError}[m[1]]
	}
	body := lines[min(i+3, end):end]
	text := strings.Join(body, "\n")
	learnPythonRoot(text, pkg, n)
	frames := pythonFrames(text, n)
	if len(frames) > 0 {
		r.File, r.Line, r.Frames = frames[0].File, frames[0].Line, frames[1:]
	}
	r.Message = clip(pythonException(body), maxMessage)
	r.Excerpt = trimExcerpt(text)
	if r.Status == StatusFail {
		r.Expected, r.Actual = pyExpectation(r.Message)
	}
	return end
}

// unittestUnexpected reads the "UNEXPECTED SUCCESS: test (id)" lines
// Python 3.11+ prints, one per test under a single separator, from
// lines[i]: each such test failed. It returns the index after them.
func unittestUnexpected(lines []string, i int, out *[]Result, index map[string]int) int {
	for ; i < len(lines); i++ {
		m := unittestHeadRe.FindStringSubmatch(lines[i])
		if m == nil || m[1] != "UNEXPECTED SUCCESS" {
			break
		}
		id, pkg := unittestID(m[2], m[3], m[4])
		j, ok := index[id]
		if !ok {
			if len(*out) >= maxTests {
				continue
			}
			j = len(*out)
			index[id] = j
			*out = append(*out, Result{ID: id, Name: m[2], Package: pkg})
		}
		(*out)[j].Status, (*out)[j].Message = StatusFail, "unexpected success"
	}
	return i
}

// learnPythonRoot teaches n the workspace root from absolute traceback
// paths that end in the module's file.
func learnPythonRoot(text, module string, n *normalizer) {
	parts := strings.Split(module, ".")
	for _, m := range pyFileLineRe.FindAllStringSubmatch(text, 32) {
		for k := len(parts); k >= 1; k-- {
			n.learn(m[1], strings.Join(parts[:k], "/")+".py")
		}
	}
}

// pythonException returns the exception that ends a traceback: the first
// unindented line after the last frame, with what follows it.
func pythonException(body []string) string {
	start := -1
	for i, l := range body {
		if strings.HasPrefix(l, "  File \"") {
			start = -1
			continue
		}
		if start < 0 && l != "" && l[0] != ' ' && !strings.HasPrefix(l, "Traceback") {
			start = i
		}
	}
	if start < 0 {
		return lastLines(strings.Join(body, "\n"), 1)
	}
	return strings.TrimSpace(strings.Join(body[start:], "\n"))
}

package testrun

import (
	"bytes"
	"encoding/xml"
	"io"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// Pytest is the format of pytest run with --junitxml=[JUnitPath]: the
// JUnit report gives the tests, the terminal's summary lines (-rA) cross-
// check it. A killed pytest, or one that stopped on an internal (3) or
// usage (4) error, wrote no report of this run.
var Pytest = &Format{
	Name: RunnerPytest,
	Parse: func(in Input) Parsed {
		tests := parsePytest(in.Report, in.Stdout, in.paths())
		if len(tests) == 0 {
			// Killed before its report and summary: the verbose progress
			// lines (-v) say what had finished and what was running.
			tests, running := pytestProgress(in.Stdout)
			return Parsed{Tests: tests, Running: running}
		}
		return Parsed{Tests: tests}
	},
	Sniff: func(_, _, report []byte) bool {
		return len(report) > 0 && bytes.Contains(report, []byte("<testsuite"))
	},
	ResultLine: pytestResultLine,
	Report:     JUnitPath,
	NoReport:   func(code int) bool { return code == 3 || code == 4 },
	Check:      pytestCheck,
}

// pytestResultLine keeps the lines the cross-check reads: the counts
// line and the short test summary.
func pytestResultLine(l []byte) bool {
	switch {
	case len(l) == 0:
		return false
	case l[0] == '=':
		return pytestSummaryLineRe.Match(l) || pytestShortRe.Match(l)
	case l[0] >= '0' && l[0] <= '9':
		return pytestSummaryLineRe.Match(l)
	}
	if bytes.Contains(l, []byte("::")) && pytestProgressRe.Match(l) {
		return true
	}
	return (l[0] == 'F' || l[0] == 'E' || l[0] == 'P' || l[0] == 'S' || l[0] == 'X') && pytestShortRe.Match(l)
}

var (
	// pytestProgressRe is a verbose (-v) progress line: the node id, then
	// the outcome once the test finished ("t.py::test_a PASSED  [ 25%]");
	// pytest prints (and flushes) the id before it runs the test, so an
	// id alone on the last line is the test that was running. xdist's
	// workers print "[gw0] [ 25%] PASSED t.py::test_a".
	pytestProgressRe     = regexp.MustCompile(`^(?:\[gw\d+\] \[\s*\d+%\] (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+::\S+)|(\S+::\S+)(?: (PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS)\b.*)?)\s*$`)
	pytestProgressStatus = map[string]Status{"PASSED": StatusPass, "FAILED": StatusFail, "ERROR": StatusError, "SKIPPED": StatusSkip, "XFAIL": StatusSkip, "XPASS": StatusPass}
)

// pytestProgress reads pytest's verbose progress lines: what finished
// before the run was stopped, and the test that had started and not
// finished (its id printed without an outcome after it).
func pytestProgress(stdout []byte) ([]Result, []int) {
	var out []Result
	index := map[string]int{}
	started := ""
	for _, l := range splitLines(stdout) {
		m := pytestProgressRe.FindStringSubmatch(strings.TrimRight(l, "\r"))
		if m == nil {
			continue
		}
		id, word := m[2], m[1]
		if id == "" {
			id, word = m[3], m[4]
		}
		if word == "" {
			started = id
			continue
		}
		if id == started {
			started = ""
		}
		r := Result{ID: clip(id, maxID), Status: pytestProgressStatus[word]}
		r.Package, r.Name, _ = strings.Cut(r.ID, "::")
		if i, ok := index[r.ID]; ok { // a teardown error repeats the test
			if worse(r.Status, out[i].Status) {
				out[i].Status = r.Status
			}
			continue
		}
		if len(out) < maxTests {
			index[r.ID] = len(out)
			out = append(out, r)
		}
	}
	var running []int
	if _, done := index[started]; started != "" && !done && len(out) < maxTests {
		r := Result{ID: clip(started, maxID)}
		r.Package, r.Name, _ = strings.Cut(r.ID, "::")
		running = append(running, len(out))
		out = append(out, r)
	}
	return out, running
}

// junitCase is one <testcase> with its outcome element.
type junitCase struct {
	classname, name, file string
	line                  int
	time                  float64
	status                Status
	message, kind         string
	text                  boundedBuf
	systemOut             boundedBuf
}

// parseJUnit reads JUnit XML as pytest (and most other runners) write it.
// Malformed XML yields the cases read before the error. It never reads
// more than maxTests cases.
func parseJUnit(data []byte) []*junitCase {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.Strict = false
	d.CharsetReader = func(_ string, r io.Reader) (io.Reader, error) { return r, nil }
	var (
		cases []*junitCase
		cur   *junitCase
		into  *boundedBuf // where character data goes
	)
	for len(cases) < maxTests {
		tok, err := d.Token()
		if err != nil {
			break
		}
		switch t := tok.(type) {
		case xml.StartElement:
			switch t.Name.Local {
			case "testcase":
				cur = &junitCase{status: StatusPass}
				cur.text.limit, cur.systemOut.limit = 16<<10, 4<<10
				for _, a := range t.Attr {
					switch a.Name.Local {
					case "classname": // clipped: ids are built from its parts
						cur.classname = clip(a.Value, maxID)
					case "name":
						cur.name = clip(a.Value, maxID)
					case "file":
						cur.file = clip(a.Value, maxID)
					case "line":
						cur.line, _ = strconv.Atoi(a.Value)
					case "time":
						cur.time, _ = strconv.ParseFloat(a.Value, 64)
					}
				}
				into = nil
			case "failure", "error", "skipped":
				if cur == nil {
					continue
				}
				st := map[string]Status{"failure": StatusFail, "error": StatusError, "skipped": StatusSkip}[t.Name.Local]
				if worse(st, cur.status) {
					cur.status = st
					cur.message, cur.kind = attr(t, "message"), attr(t, "type")
				}
				into = &cur.text
			case "system-out", "system-err":
				if cur != nil {
					into = &cur.systemOut
				}
			}
		case xml.EndElement:
			switch t.Name.Local {
			case "testcase":
				if cur != nil {
					cases = append(cases, cur)
				}
				cur, into = nil, nil
			case "failure", "error", "skipped", "system-out", "system-err":
				if into != nil {
					into.WriteString("\n")
				}
				into = nil
			}
		case xml.CharData:
			if into != nil {
				into.WriteString(string(t))
			}
		}
	}
	return cases
}

func attr(e xml.StartElement, name string) string {
	for _, a := range e.Attr {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// worse orders statuses: error > fail > skip > pass.
func worse(a, b Status) bool {
	rank := map[Status]int{StatusPass: 0, StatusSkip: 1, StatusFail: 2, StatusError: 3}
	return rank[a] > rank[b]
}

var (
	pytestSummaryRe = regexp.MustCompile(`^(PASSED|FAILED|ERROR|XFAIL|XPASS) (\S+)(?: - (.*))?$`)
	pyTBLocRe       = regexp.MustCompile(`^([^\s:"][^:"]*\.py):(\d+):(?: in (\S+)| (\w[\w.]*))?\s*$`)
	pyFileLineRe    = regexp.MustCompile(`File "([^"]+)", line (\d+)(?:, in (\S+))?`)
	pyErrLineRe     = regexp.MustCompile(`^E\s+((?:\w+\.)*\w*(?:Error|Exception|Exit|Interrupt|Failed)\b:?.*)$`)
)

// parsePytest builds results from pytest's JUnit report, with node ids
// taken from the -rA summary on stdout where it names them. Without a
// report it falls back to the summary lines alone.
func parsePytest(report, stdout []byte, n *normalizer) []Result {
	ids := map[string]string{} // node id → summary status
	var order []string
	for _, l := range splitLines(stdout) {
		if m := pytestSummaryRe.FindStringSubmatch(l); m != nil && len(ids) < maxTests {
			if _, ok := ids[m[2]]; !ok {
				order = append(order, m[2])
			}
			ids[m[2]] = m[1]
		}
	}
	cases := parseJUnit(report)
	if len(cases) == 0 {
		return pytestSummary(order, ids, stdout)
	}
	var out []Result
	index := map[string]int{}
	for _, c := range cases {
		r := pytestResult(c, ids, n)
		if i, ok := index[r.ID]; ok { // a teardown error repeats the test
			if worse(r.Status, out[i].Status) {
				out[i] = r
			}
			continue
		}
		index[r.ID] = len(out)
		out = append(out, r)
	}
	return out
}

func pytestSummary(order []string, ids map[string]string, stdout []byte) []Result {
	var out []Result
	for _, id := range order {
		st := map[string]Status{"PASSED": StatusPass, "FAILED": StatusFail, "ERROR": StatusError, "XFAIL": StatusSkip, "XPASS": StatusPass}[ids[id]]
		file, name, _ := strings.Cut(id, "::")
		out = append(out, Result{ID: id, Name: name, Package: file, Status: st})
	}
	// the reasons are on the same lines
	for _, l := range splitLines(stdout) {
		if m := pytestSummaryRe.FindStringSubmatch(l); m != nil && m[3] != "" {
			for i := range out {
				if out[i].ID == m[2] && out[i].Message == "" {
					out[i].Message = clip(m[3], maxMessage)
				}
			}
		}
	}
	return out
}

// pytestID turns a JUnit classname and name back into pytest's node id,
// "tests/test_x.py::TestC::test_y[1-2]".
func pytestID(c *junitCase, ids map[string]string) (id, file string) {
	if c.classname == "" { // collection error: name is the dotted module
		file = strings.ReplaceAll(c.name, ".", "/") + ".py"
		if _, ok := ids[c.name]; ok {
			return c.name, c.name
		}
		return file, file
	}
	parts := strings.Split(c.classname, ".")
	for k := len(parts); k >= 1; k-- {
		f := strings.Join(parts[:k], "/") + ".py"
		id := strings.Join(append(append([]string{f}, parts[k:]...), c.name), "::")
		if _, ok := ids[id]; ok || (c.file != "" && c.file == f) {
			return id, f
		}
	}
	k := len(parts) // classes start with an upper-case letter, modules rarely do
	for k > 1 && startsUpper(parts[k-1]) {
		k--
	}
	f := strings.Join(parts[:k], "/") + ".py"
	return strings.Join(append(append([]string{f}, parts[k:]...), c.name), "::"), f
}

func startsUpper(s string) bool {
	for _, r := range s {
		return unicode.IsUpper(r)
	}
	return false
}

func pytestResult(c *junitCase, ids map[string]string, n *normalizer) Result {
	id, file := pytestID(c, ids)
	name := c.name
	if i := strings.LastIndex(id, ".py::"); i >= 0 {
		name = id[i+len(".py::"):]
	}
	r := Result{ID: id, Name: name, Package: file, Status: c.status}
	if c.time > 0 && c.time < 1e9 {
		r.Duration = time.Duration(c.time * float64(time.Second)).Round(time.Millisecond)
	}
	if c.status == StatusPass {
		return r
	}
	text := c.text.String()
	r.Message = clip(c.message, maxMessage)
	if c.status == StatusSkip {
		r.Message = clip(strings.TrimPrefix(c.message, "Skipped: "), maxMessage)
		return r
	}
	r.Excerpt = trimExcerpt(text)
	frames := pythonFrames(text, n)
	if len(frames) > 0 {
		r.File, r.Line = frames[0].File, frames[0].Line
		r.Frames = frames[1:]
	}
	if r.Message == "" || r.Message == "collection failure" {
		if e := lastErrorLine(text); e != "" {
			r.Message = clip(e, maxMessage)
		}
	}
	if c.status == StatusFail {
		r.Expected, r.Actual = pyExpectation(c.message + "\n" + text)
	}
	return r
}

func lastErrorLine(text string) string {
	last := ""
	for _, l := range splitLines([]byte(text)) {
		if m := pyErrLineRe.FindStringSubmatch(l); m != nil {
			last = m[1]
		}
	}
	return last
}

// pythonFrames reads the locations of a traceback, in pytest's formats
// ("path.py:12: AssertionError", "path.py:3: in func") and Python's own
// (`File "path.py", line 3, in func`), and returns those inside the
// workspace, innermost first.
func pythonFrames(text string, n *normalizer) []Frame {
	var all []Frame
	for _, l := range splitLines([]byte(text)) {
		var f Frame
		if m := pyTBLocRe.FindStringSubmatch(l); m != nil {
			f.File, f.Func = m[1], m[3]
			f.Line, _ = strconv.Atoi(m[2])
		} else if m := pyFileLineRe.FindStringSubmatch(l); m != nil {
			f.File, f.Func = m[1], m[3]
			f.Line, _ = strconv.Atoi(m[2])
		} else {
			continue
		}
		rel, ok := n.rel(f.File, "")
		if !ok {
			continue
		}
		f.File = rel
		if len(all) > 0 && all[len(all)-1] == f {
			continue
		}
		all = append(all, f)
		if len(all) > 4*maxFrames {
			all = all[len(all)-maxFrames:]
		}
	}
	out := make([]Frame, 0, len(all))
	for i := len(all) - 1; i >= 0 && len(out) < maxFrames; i-- {
		out = append(out, all[i])
	}
	return out
}

// pyExpectation reads "assert ACTUAL == EXPECTED" (pytest's rewritten
// assertion), unittest's "FIRST != SECOND" (assertEqual(actual, expected)).
func pyExpectation(text string) (expected, actual string) {
	for _, l := range splitLines([]byte(text)) {
		l = strings.TrimSpace(l)
		if m := pyAssertRe.FindStringSubmatch(l); m != nil {
			return clip(m[2], maxMessage), clip(m[1], maxMessage)
		}
	}
	for _, l := range splitLines([]byte(text)) {
		l = strings.TrimSpace(l)
		if m := pyNotEqRe.FindStringSubmatch(l); m != nil && strings.HasPrefix(l, "AssertionError: ") {
			return clip(m[2], maxMessage), clip(m[1], maxMessage)
		}
	}
	return expectation(text)
}

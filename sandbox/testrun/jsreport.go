package testrun

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// Jest is the format of jest --json --outputFile=[JestReportPath].
var Jest = &Format{
	Name:   RunnerJest,
	Parse:  func(in Input) Parsed { return jsReport(parseJestJSON, in) },
	Sniff:  sniffJest,
	Report: JestReportPath,
	Check:  jestCheck,
}

// Vitest is the format of vitest's json reporter, the shape of jest's
// (a sniffed vitest report is reported as jest).
var Vitest = &Format{
	Name:   RunnerVitest,
	Parse:  func(in Input) Parsed { return jsReport(parseJestJSON, in) },
	Report: VitestReportPath,
	Check:  vitestCheck,
}

// Mocha is the format of mocha's json reporter written to
// [MochaReportPath] (--reporter-option output=).
var Mocha = &Format{
	Name:   RunnerMocha,
	Parse:  func(in Input) Parsed { return jsReport(parseMochaJSON, in) },
	Sniff:  sniffMocha,
	Report: MochaReportPath,
	Check:  mochaCheck,
}

func sniffJest(stdout, _, report []byte) bool {
	return bytes.Contains(report, []byte(`"testResults"`)) || bytes.Contains(stdout, []byte(`"numTotalTests"`))
}

func sniffMocha(stdout, _, report []byte) bool {
	return bytes.Contains(report, []byte(`"passes"`)) || bytes.Contains(stdout, []byte(`"passes": [`))
}

func jsReport(parse func(report, stdout []byte, n *normalizer) ([]Result, bool), in Input) Parsed {
	tests, _ := parse(in.Report, in.Stdout, in.paths())
	return Parsed{Tests: tests}
}

// jestFile is one test file of a jest --json report. Vitest's json
// reporter writes the same shape.
type jestFile struct {
	Name             string          `json:"name"`    // absolute path of the test file
	Status           string          `json:"status"`  // "passed" or "failed"
	Message          string          `json:"message"` // why the file failed as a whole (compile error, failed import)
	AssertionResults []jestAssertion `json:"assertionResults"`
}

type jestAssertion struct {
	AncestorTitles  []string `json:"ancestorTitles"`
	Title           string   `json:"title"`
	Status          string   `json:"status"` // passed, failed, pending, skipped, todo, disabled
	FailureMessages []string `json:"failureMessages"`
	Duration        *float64 `json:"duration"` // milliseconds
}

// parseJestJSON reads the report of `jest --json` or of vitest's json
// reporter (report, or stdout when the runner printed it there). One Result
// per test, ids "file > describe > title"; a test file that failed to run
// at all (a type error under ts-jest, an import that does not resolve) is
// one error Result named by its file. ok is false when there was no report.
func parseJestJSON(report, stdout []byte, n *normalizer) (out []Result, ok bool) {
	var rep struct {
		TestResults []jestFile `json:"testResults"`
	}
	if !decodeReport(report, stdout, []byte(`"testResults"`), &rep) {
		return nil, false
	}
	seen := map[string]int{}
	for _, f := range rep.TestResults {
		file, _ := n.rel(f.Name, "")
		failed := false
		for _, a := range f.AssertionResults {
			if len(out) >= maxTests {
				return out, true
			}
			r := Result{ID: uniqueID(seen, jsID(file, a.AncestorTitles, a.Title)), Name: clip(a.Title, maxName), Package: file}
			if a.Duration != nil && *a.Duration > 0 && *a.Duration < 1e12 {
				r.Duration = time.Duration(*a.Duration * float64(time.Millisecond)).Round(time.Millisecond)
			}
			switch a.Status {
			case "passed":
				r.Status = StatusPass
			case "failed":
				r.Status, failed = StatusFail, true
				jsFailure(&r, strings.Join(a.FailureMessages, "\n"), n)
			default: // pending, skipped, todo, disabled
				r.Status = StatusSkip
			}
			out = append(out, r)
		}
		if f.Status == "failed" && !failed && len(out) < maxTests {
			r := Result{ID: uniqueID(seen, file), Name: file, Package: file, Status: StatusError}
			msg := f.Message
			if strings.TrimSpace(msg) == "" {
				msg = "test file failed"
			}
			jsFailure(&r, msg, n)
			out = append(out, r)
		}
	}
	return out, true
}

// mochaTest is one test of mocha's json reporter.
type mochaTest struct {
	Title     string   `json:"title"`
	FullTitle string   `json:"fullTitle"`
	File      string   `json:"file"`
	Duration  *float64 `json:"duration"`
	Err       struct {
		Message  string          `json:"message"`
		Stack    string          `json:"stack"`
		Expected json.RawMessage `json:"expected"`
		Actual   json.RawMessage `json:"actual"`
	} `json:"err"`
}

func (t mochaTest) key() string { return t.File + "\x00" + t.FullTitle }

// parseMochaJSON reads mocha's json reporter (written to the report file
// with --reporter-option output=, or to stdout by mochas before 9.2).
// Every test is one Result with the id "file > full title"; a failing hook
// is an error Result of its own, as mocha counts it among the failures.
func parseMochaJSON(report, stdout []byte, n *normalizer) ([]Result, bool) {
	var rep struct {
		Tests    []mochaTest `json:"tests"`
		Pending  []mochaTest `json:"pending"`
		Failures []mochaTest `json:"failures"`
	}
	if !decodeReport(report, stdout, []byte(`"stats"`), &rep) {
		return nil, false
	}
	pending, failed := map[string]bool{}, map[string]bool{}
	for _, t := range rep.Pending {
		pending[t.key()] = true
	}
	var out []Result
	seen := map[string]int{}
	add := func(t mochaTest, st Status) {
		if len(out) >= maxTests {
			return
		}
		file, _ := n.rel(t.File, "")
		r := Result{ID: uniqueID(seen, jsID(file, nil, t.FullTitle)), Name: clip(t.Title, maxName), Package: file, Status: st}
		if t.Duration != nil && *t.Duration > 0 && *t.Duration < 1e12 {
			r.Duration = time.Duration(*t.Duration * float64(time.Millisecond)).Round(time.Millisecond)
		}
		if st == StatusFail || st == StatusError {
			text := t.Err.Stack
			if !strings.Contains(text, t.Err.Message) {
				text = t.Err.Message + "\n" + text
			}
			jsFailure(&r, text, n)
			if e, a := jsonValue(t.Err.Expected), jsonValue(t.Err.Actual); e != "" || a != "" {
				r.Expected, r.Actual = e, a
			}
		}
		out = append(out, r)
	}
	inTests := map[string]bool{}
	for _, t := range rep.Tests {
		inTests[t.key()] = true
	}
	for _, t := range rep.Failures {
		failed[t.key()] = true
	}
	for _, t := range rep.Tests {
		switch {
		case failed[t.key()]:
			add(failureOf(rep.Failures, t), StatusFail)
		case pending[t.key()]:
			add(t, StatusSkip)
		default:
			add(t, StatusPass)
		}
	}
	for _, t := range rep.Failures {
		if !inTests[t.key()] { // a hook: "before all" hook for "x"
			add(t, StatusError)
		}
	}
	return out, true
}

// failureOf returns the failure record of t (it carries err).
func failureOf(failures []mochaTest, t mochaTest) mochaTest {
	for _, f := range failures {
		if f.key() == t.key() {
			return f
		}
	}
	return t
}

// decodeReport decodes the report file, or else the JSON object in stdout
// that contains marker: runners that print their report put it on a line
// of its own, possibly after lines the tests logged.
func decodeReport(report, stdout, marker []byte, v any) bool {
	if len(bytes.TrimSpace(report)) > 0 {
		return json.Unmarshal(report, v) == nil
	}
	for off := 0; off < len(stdout); {
		i := bytes.IndexByte(stdout[off:], '{')
		if i < 0 {
			return false
		}
		start := off + i
		if start == 0 || stdout[start-1] == '\n' {
			d := json.NewDecoder(bytes.NewReader(stdout[start:]))
			var raw json.RawMessage
			if d.Decode(&raw) == nil && bytes.Contains(raw, marker) && json.Unmarshal(raw, v) == nil {
				return true
			}
		}
		off = start + 1
	}
	return false
}

func uniqueID(seen map[string]int, id string) string {
	if seen[id]++; seen[id] > 1 {
		id += " (" + strconv.Itoa(seen[id]) + ")"
	}
	return id
}

// jsID is "file > ancestor > ... > title", clipped.
func jsID(file string, ancestors []string, title string) string {
	parts := make([]string, 0, len(ancestors)+2)
	if file != "" {
		parts = append(parts, file)
	}
	for _, a := range ancestors {
		parts = append(parts, clip(a, maxName))
	}
	parts = append(parts, clip(title, maxName))
	return clip(strings.Join(parts, " > "), maxID)
}

// jsFailure fills message, location, frames and expectation from a
// JavaScript failure text: the error's message lines, then "at" frames.
func jsFailure(r *Result, text string, n *normalizer) {
	text = ansiRe.ReplaceAllString(text, "")
	var msg []string
	var frames []Frame
	for _, l := range splitLines([]byte(text)) {
		t := strings.TrimSpace(l)
		if strings.HasPrefix(t, "at ") {
			if f, ok := jsLocation(t, n); ok && !strings.Contains(f.File, "node_modules/") && len(frames) < maxFrames {
				frames = append(frames, f)
			}
			continue
		}
		if len(frames) == 0 && len(msg) < 40 {
			msg = append(msg, l)
		}
	}
	message := strings.TrimSpace(dedent(msg))
	message = strings.TrimSpace(strings.TrimPrefix(message, "● Test suite failed to run"))
	if len(frames) == 0 {
		if m := locRe.FindStringSubmatch(message); m != nil {
			if f, ok := n.rel(m[1], ""); ok {
				frames = append(frames, Frame{File: f, Line: lineNo(m[2])})
			}
		}
	}
	if len(frames) > 0 {
		r.File, r.Line, r.Frames = frames[0].File, frames[0].Line, frames[1:]
	}
	r.Message = clip(firstLines(message, 3), maxMessage)
	r.Expected, r.Actual = jsExpectation(message)
	r.Excerpt = trimExcerpt(text)
}

var (
	jestExpectedRe = regexp.MustCompile(`(?m)^\s*Expected(?: value)?:\s*(.*)$`)
	jestReceivedRe = regexp.MustCompile(`(?m)^\s*Received(?: value)?:\s*(.*)$`)
	chaiRe         = regexp.MustCompile(`(?m)expected (.+?) to (?:be|equal|deeply equal|strictly equal|eql) (.+?)(?: // Object\.is equality)?$`)
)

// jsExpectation reads jest's Expected:/Received: lines and chai's
// "expected A to be B" (vitest), then the generic forms.
func jsExpectation(text string) (expected, actual string) {
	if e := jestExpectedRe.FindStringSubmatch(text); e != nil {
		if a := jestReceivedRe.FindStringSubmatch(text); a != nil {
			return clip(e[1], maxMessage), clip(a[1], maxMessage)
		}
	}
	if m := chaiRe.FindStringSubmatch(text); m != nil {
		return clip(m[2], maxMessage), clip(m[1], maxMessage)
	}
	return expectation(text)
}

// jsonValue renders a JSON value mocha recorded (expected, actual): strings
// without their quotes, anything else as JSON.
func jsonValue(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return clip(s, maxMessage)
	}
	return clip(string(raw), maxMessage)
}

func firstLines(s string, n int) string {
	lines := strings.Split(s, "\n")
	var out []string
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if out = append(out, strings.TrimSpace(l)); len(out) == n {
			break
		}
	}
	return strings.Join(out, "\n")
}

func lineNo(s string) int {
	n, err := strconv.Atoi(s)
	if err != nil || n < 0 {
		return 0
	}
	return n
}

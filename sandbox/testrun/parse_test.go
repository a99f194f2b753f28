package testrun

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/golden")

// rawCase is one real run stored under testdata/raw/<name> by gen.sh.
type rawCase struct {
	name    string
	project string // under testdata/projects, for Detect
	runner  string // runner name the case was run as
}

var rawCases = []rawCase{
	{"go-pass", "gopass", RunnerGo},
	{"go-fail", "gofail", RunnerGo},
	{"go-panic", "gopanic", RunnerGo},
	{"go-build", "gobuild", RunnerGo},
	{"go-testbuild", "gotesterr", RunnerGo},
	{"go-build-text", "gobuild", RunnerGo},
	{"go-timeout", "gotimeout", RunnerGo},
	{"go-nomod", "gonomod", RunnerGo},
	{"pytest-pass", "pypass", RunnerPytest},
	{"pytest-fail", "pyfail", RunnerPytest},
	{"pytest-collect", "pycollect", RunnerPytest},
	// Suites stopped at the sandbox's time limit (gen.sh kills them; the
	// "timedout" file marks the run as the sandbox reports it).
	{"pytest-hang", "pyhang", RunnerPytest},
	{"node-hang", "nodehang", RunnerNode},
	{"npm-hang", "npmhang", RunnerNPM},
	{"unittest-fail", "pyunit", RunnerUnittest},
	{"unittest-syntax", "pyunitsyntax", RunnerUnittest},
	{"node-pass", "nodepass", RunnerNode},
	{"node-fail", "nodefail", RunnerNode},
	{"node-syntax", "nodesyntax", RunnerNode},
	{"npm-fail", "npmfail", RunnerNPM},
	// Real projects from /work/shared/realworld, run natively with the
	// commands Detect chooses (see gen.sh for how they were made).
	{"jest-pass", "", RunnerJest},     // ms 3.0.0-canary.1: jest 27 + ts-jest
	{"jest-fail", "", RunnerJest},     // the same with one wrong expectation
	{"jest-tserror", "", RunnerJest},  // the same with a type error in the test file
	{"mocha-pass", "", RunnerMocha},   // bytes 3.1.2: mocha 9.2
	{"mocha-fail", "", RunnerMocha},   // the same with a failure, a throw and a skip
	{"vitest-fail", "", RunnerVitest}, // vitest 2.1.9 in a scratch project
	{"vitest-broken", "", RunnerVitest},
	{"node-sniffer", "", RunnerNPM}, // html-encoding-sniffer 6.0.0: node --test
}

// loadRaw reads a stored run: the runner, the command's result, the report.
func loadRaw(t testing.TB, c rawCase) (Runner, *sandbox.Result, []byte) {
	t.Helper()
	dir := filepath.Join("testdata", "raw", c.name)
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		return b
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(read("exit"))))
	if err != nil {
		t.Fatalf("%s/exit: %v", dir, err)
	}
	args, err := SplitWords(strings.TrimSpace(string(read("cmd"))))
	if err != nil {
		t.Fatal(err)
	}
	r := Runner{Name: c.runner, Args: args, Format: formatNamed(c.runner)}
	if c.runner == RunnerGo {
		r.Format = GoTestJSON(moduleOf(snapshot(t, filepath.Join("testdata", "projects", c.project))), nil)
	}
	switch c.runner {
	case RunnerPytest:
		r.ReportPath = JUnitPath
	case RunnerJest:
		r.ReportPath = JestReportPath
	case RunnerVitest:
		r.ReportPath = VitestReportPath
	case RunnerMocha:
		r.ReportPath = MochaReportPath
	}
	_, err = os.Stat(filepath.Join(dir, "timedout"))
	return r, &sandbox.Result{ExitCode: code, TimedOut: err == nil, Stdout: read("stdout"), Stderr: read("stderr")}, read("report")
}

func snapshot(t testing.TB, dir string) *sandbox.Snapshot {
	t.Helper()
	s, err := sandbox.SnapshotDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestParseGolden parses every stored real output and compares the Report
// with testdata/golden/<case>.json (go test ./sandbox/testrun -update).
func TestParseGolden(t *testing.T) {
	for _, c := range rawCases {
		t.Run(c.name, func(t *testing.T) {
			r, res, report := loadRaw(t, c)
			got := Parse(r, res, report)
			data, err := json.MarshalIndent(got, "", "  ")
			if err != nil {
				t.Fatal(err)
			}
			data = append(data, '\n')
			golden := filepath.Join("testdata", "golden", c.name+".json")
			if *update {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, data, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if !bytes.Equal(data, want) {
				t.Errorf("Parse(%s) differs from %s (run with -update and review the diff):\n%s", c.name, golden, data)
			}
		})
	}
}

// want is what a test must say about one test of a stored run; empty
// fields are not checked.
type want struct {
	id               string
	status           Status
	file             string
	line             int
	message          string // substring
	expected, actual string
	frame            string // "file:line" that must be among the frames
}

// TestParseFacts checks, independently of the goldens, the facts that
// matter in each real output: so an -update cannot bless a wrong parse.
func TestParseFacts(t *testing.T) {
	tests := []struct {
		name                    string
		runner                  string
		passed, failed, skipped int
		wants                   []want
	}{
		{name: "go-pass", runner: "go", passed: 3},
		{name: "go-fail", runner: "go", passed: 4, failed: 5, skipped: 1, wants: []want{
			{id: "example.com/calc.ExampleAdd", status: StatusFail, message: "example output differs", expected: "2", actual: "0"},
			{id: "example.com/calc.TestAdd", status: StatusFail, file: "calc_test.go", line: 16, message: "Add(1, 2) = -1, want 3", expected: "3", actual: "-1"},
			{id: "example.com/calc.TestAddTable/case_1", status: StatusFail, file: "calc_test.go", line: 33, message: "got -1, want 5", expected: "5", actual: "-1"},
			{id: "example.com/calc.TestAddTable", status: StatusFail},
			{id: "example.com/calc.TestAddTable/zero", status: StatusPass},
			{id: "example.com/calc.TestAddTestifyStyle", status: StatusFail, file: "calc_test.go", line: 48, expected: "7", actual: "1"},
			{id: "example.com/calc.TestSkipped", status: StatusSkip, message: "not implemented yet"},
			{id: "example.com/calc/util.TestDouble", status: StatusPass},
		}},
		{name: "go-panic", runner: "go", passed: 1, failed: 1, wants: []want{
			{id: "example.com/store.TestPut", status: StatusFail, file: "store.go", line: 10, message: "panic: assignment to entry in nil map", frame: "store_test.go:14"},
		}},
		{name: "go-build", runner: "go", passed: 1, failed: 1, wants: []want{
			{id: "example.com/multi/bad", status: StatusError, file: "bad/bad.go", line: 4, message: `cannot use "two"`},
			{id: "example.com/multi/good.TestOne", status: StatusPass},
		}},
		{name: "go-build-text", runner: "go", passed: 1, failed: 1, wants: []want{
			{id: "example.com/multi/bad", status: StatusError, file: "bad/bad.go", line: 4, message: `cannot use "two"`},
		}},
		{name: "go-testbuild", runner: "go", failed: 1, wants: []want{
			{id: "example.com/testerr", status: StatusError, file: "x_test.go", line: 6, frame: "x_test.go:8"},
		}},
		{name: "go-timeout", runner: "go", passed: 1, failed: 1, wants: []want{
			{id: "example.com/slow.TestSlow", status: StatusFail, file: "slow_test.go", line: 12, message: "test timed out after 3s"},
		}},
		{name: "go-nomod", runner: "go", failed: 1, wants: []want{
			{id: "(exit)", status: StatusError, file: "go.mod", line: 6, message: "syntax error"},
		}},
		{name: "pytest-pass", runner: "pytest", passed: 2, wants: []want{
			{id: "tests/test_calc.py::test_add", status: StatusPass},
		}},
		{name: "pytest-fail", runner: "pytest", passed: 3, failed: 7, skipped: 1, wants: []want{
			{id: "tests/test_calc.py::test_add", status: StatusFail, file: "tests/test_calc.py", line: 11, message: "assert -1 == 3", expected: "3", actual: "-1"},
			{id: "tests/test_calc.py::test_add_param[1-1-2]", status: StatusFail, file: "tests/test_calc.py", line: 16, expected: "2", actual: "0"},
			{id: "tests/test_calc.py::test_add_param[2-0-2]", status: StatusPass},
			{id: "tests/test_calc.py::test_divide_by_zero", status: StatusFail, file: "calc.py", line: 6, message: "ZeroDivisionError", frame: "tests/test_calc.py:20"},
			{id: "tests/test_calc.py::test_with_broken_fixture", status: StatusError, file: "conftest.py", line: 6, message: "fixture exploded"},
			{id: "tests/test_calc.py::TestStrings::test_upper", status: StatusFail, file: "tests/test_calc.py", line: 44, expected: "'ABD'", actual: "'ABC'"},
			{id: "tests/test_calc.py::test_skipped", status: StatusSkip, message: "not ready"},
		}},
		{name: "pytest-collect", runner: "pytest", failed: 2, wants: []want{
			{id: "tests/test_import.py", status: StatusError, file: "tests/test_import.py", line: 1, message: "ModuleNotFoundError: No module named 'no_such_module'"},
			{id: "tests/test_syntax.py", status: StatusError, file: "tests/test_syntax.py", line: 1, message: "SyntaxError: invalid syntax"},
		}},
		{name: "unittest-fail", runner: "unittest", passed: 1, failed: 4, skipped: 1, wants: []want{
			{id: "test_calc.TestCalc.test_add", status: StatusFail, file: "test_calc.py", line: 8, message: "AssertionError: -1 != 3", expected: "3", actual: "-1"},
			{id: "test_calc.TestCalc.test_error", status: StatusError, file: "test_calc.py", line: 14, message: "KeyError: 'missing'"},
			{id: "test_calc.TestCalc.test_sub (i=2)", status: StatusFail, file: "test_calc.py", line: 24, message: "2 not less than 2"},
			{id: "test_calc.TestCalc.test_sub", status: StatusFail},
			{id: "test_calc.TestCalc.test_skip", status: StatusSkip, message: "not ready"},
		}},
		{name: "unittest-syntax", runner: "unittest", passed: 1, failed: 1, wants: []want{
			{id: "test_bad", status: StatusError, file: "test_bad.py", line: 3, message: "SyntaxError: expected ':'"},
		}},
		{name: "node-pass", runner: "node", passed: 1},
		{name: "node-fail", runner: "node", passed: 3, failed: 6, skipped: 2, wants: []want{
			{id: "add works", status: StatusFail, file: "test/calc.test.js", line: 7, message: "-1 !== 3", expected: "3", actual: "-1"},
			{id: "deep objects", status: StatusFail, file: "test/calc.test.js", line: 15, expected: "a: 1\nb:\n  0: 1\n  1: 3"},
			{id: "parse throws", status: StatusFail, file: "calc.js", line: 7, message: "TypeError: not a number: x", frame: "test/calc.test.js:19"},
			{id: "calc > adds in a suite", status: StatusFail, file: "test/calc.test.js", line: 28, expected: "4", actual: "0"},
			{id: "with subtests > sub fails", status: StatusFail, file: "test/calc.test.js", line: 40, message: "five plus five"},
			{id: "with subtests > sub ok", status: StatusPass},
			{id: "skipped", status: StatusSkip, message: "not ready"},
		}},
		{name: "node-syntax", runner: "node", passed: 1, failed: 1, wants: []want{
			{id: "broken.test.js", status: StatusFail, file: "broken.test.js", line: 4, message: "SyntaxError: Unexpected token '{'"},
		}},
		{name: "jest-fail", runner: "jest", passed: 48, failed: 1, wants: []want{
			{id: "src/index.test.ts > ms(number) > should support days", status: StatusFail, file: "src/index.test.ts", line: 227, message: "toBe(expected)", expected: `"2d"`, actual: `"1d"`},
			{id: "src/index.test.ts > ms(string) > should not throw an error", status: StatusPass},
		}},
		{name: "jest-tserror", runner: "jest", failed: 1, wants: []want{
			{id: "src/index.test.ts", status: StatusError, file: "src/index.test.ts", line: 2, message: "TS2322: Type 'string' is not assignable to type 'number'"},
		}},
		{name: "mocha-fail", runner: "mocha", passed: 29, failed: 2, skipped: 1, wants: []want{
			{id: "test/byte-format.js > Test byte format function Should convert numbers < 1024 to `bytes` string", status: StatusFail, file: "test/byte-format.js", line: 28, message: "'100b' == '101b'", expected: "101b", actual: "100b"},
			{id: "test/byte-parse.js > extra throws", status: StatusFail, file: "test/byte-parse.js", line: 113, message: "TypeError: boom"},
			{id: "test/byte-parse.js > extra later", status: StatusSkip},
		}},
		{name: "vitest-fail", runner: "vitest", passed: 5, failed: 1, skipped: 2, wants: []want{
			{id: "src/fail.test.js > wrong sum", status: StatusFail, file: "src/fail.test.js", line: 2, message: "expected 2 to be 3", expected: "3", actual: "2"},
			{id: "src/math.test.js > math > nested > multiplies", status: StatusPass},
		}},
		{name: "vitest-broken", runner: "vitest", passed: 5, failed: 2, skipped: 2, wants: []want{
			{id: "src/broken.test.js", status: StatusError, message: "Failed to load url ./nope.js"},
		}},
		{name: "npm-fail", runner: "npm", failed: 1, wants: []want{
			{id: "equal numbers", status: StatusFail, file: "test/a.test.js", line: 5, expected: "2", actual: "1"},
		}},
	}
	cases := map[string]rawCase{}
	for _, c := range rawCases {
		cases[c.name] = c
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, res, report := loadRaw(t, cases[tt.name])
			got := Parse(r, res, report)
			if got.Runner != tt.runner {
				t.Errorf("Runner = %q, want %q", got.Runner, tt.runner)
			}
			if got.Passed != tt.passed || got.Failed != tt.failed || got.Skipped != tt.skipped {
				t.Errorf("passed/failed/skipped = %d/%d/%d, want %d/%d/%d", got.Passed, got.Failed, got.Skipped, tt.passed, tt.failed, tt.skipped)
			}
			if got.OK() != (res.ExitCode == 0) {
				t.Errorf("OK() = %v with exit code %d", got.OK(), res.ExitCode)
			}
			for _, w := range tt.wants {
				checkResult(t, got, w)
			}
		})
	}
}

func checkResult(t *testing.T, rep *Report, w want) {
	t.Helper()
	var r *Result
	var ids []string
	for i := range rep.Tests {
		ids = append(ids, rep.Tests[i].ID)
		if rep.Tests[i].ID == w.id {
			r = &rep.Tests[i]
		}
	}
	if r == nil {
		t.Errorf("no test %q among %q", w.id, ids)
		return
	}
	if r.Status != w.status {
		t.Errorf("%s: Status = %q, want %q", w.id, r.Status, w.status)
	}
	if w.file != "" && (r.File != w.file || r.Line != w.line) {
		t.Errorf("%s: at %s:%d, want %s:%d", w.id, r.File, r.Line, w.file, w.line)
	}
	if !strings.Contains(r.Message, w.message) {
		t.Errorf("%s: Message = %q, want it to contain %q", w.id, r.Message, w.message)
	}
	if w.expected != "" && r.Expected != w.expected {
		t.Errorf("%s: Expected = %q, want %q", w.id, r.Expected, w.expected)
	}
	if w.actual != "" && r.Actual != w.actual {
		t.Errorf("%s: Actual = %q, want %q", w.id, r.Actual, w.actual)
	}
	if w.frame != "" {
		found := false
		for _, f := range r.Frames {
			found = found || f.File+":"+strconv.Itoa(f.Line) == w.frame
		}
		if !found {
			t.Errorf("%s: Frames = %+v, want one at %s", w.id, r.Frames, w.frame)
		}
	}
	if w.file != "" && r.Excerpt == "" {
		t.Errorf("%s: no excerpt", w.id)
	}
}

// TestParseKilledMidRun cuts real outputs where the sandbox would have
// killed the runner and checks that the test then running is reported.
func TestParseKilledMidRun(t *testing.T) {
	tests := []struct {
		name    string
		raw     string // stored case
		stream  string // "stdout" or "stderr"
		cutFrom string // output is cut just after the first occurrence
		oom     bool
		wantID  string
		wantMsg string
	}{
		{name: "go timeout", raw: "go-fail", stream: "stdout", cutFrom: `"Output":"=== RUN   TestAddTable/case_1\n"}`, wantID: "example.com/calc.TestAddTable/case_1", wantMsg: "timed out"},
		{name: "go oom", raw: "go-fail", stream: "stdout", cutFrom: `"Output":"=== RUN   TestAddTable/case_1\n"}`, oom: true, wantID: "example.com/calc.TestAddTable", wantMsg: "out of memory: killed"},
		{name: "unittest timeout", raw: "unittest-fail", stream: "stderr", cutFrom: "test_error (test_calc.TestCalc.test_error) ... ", wantID: "test_calc.TestCalc.test_error", wantMsg: "timed out"},
		{name: "node timeout", raw: "node-fail", stream: "stdout", cutFrom: "# Subtest: deep objects\n", wantID: "deep objects", wantMsg: "timed out"},
		{name: "node nested timeout", raw: "node-fail", stream: "stdout", cutFrom: "    # Subtest: sub fails\n", wantID: "with subtests > sub fails", wantMsg: "timed out"},
	}
	cases := map[string]rawCase{}
	for _, c := range rawCases {
		cases[c.name] = c
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, res, _ := loadRaw(t, cases[tt.raw])
			out := &res.Stdout
			if tt.stream == "stderr" {
				out = &res.Stderr
			}
			i := bytes.Index(*out, []byte(tt.cutFrom))
			if i < 0 {
				t.Fatalf("%q not in %s", tt.cutFrom, tt.raw)
			}
			*out = (*out)[:i+len(tt.cutFrom)]
			res.ExitCode, res.TimedOut, res.OOMKilled = 124, !tt.oom, tt.oom
			if tt.oom {
				res.ExitCode = 137
			}
			rep := Parse(r, res, nil)
			if rep.TimedOut != !tt.oom || rep.OOM != tt.oom || rep.OK() {
				t.Errorf("TimedOut = %v, OOM = %v, OK() = %v", rep.TimedOut, rep.OOM, rep.OK())
			}
			checkResult(t, rep, want{id: tt.wantID, status: StatusError, message: tt.wantMsg})
		})
	}
}

// TestParseLearnsRoot checks that absolute paths under an unknown
// workspace root come back relative when the Go module is known.
func TestParseLearnsRoot(t *testing.T) {
	tests := []struct{ raw, id, file string }{
		{raw: "go-panic", id: "example.com/store.TestPut", file: "store.go"},
		{raw: "go-timeout", id: "example.com/slow.TestSlow", file: "slow_test.go"},
		{raw: "unittest-fail", id: "test_calc.TestCalc.test_add", file: "test_calc.py"},
	}
	cases := map[string]rawCase{}
	for _, c := range rawCases {
		cases[c.name] = c
	}
	for _, tt := range tests {
		r, res, report := loadRaw(t, cases[tt.raw])
		res.Stdout = bytes.ReplaceAll(res.Stdout, []byte("/workspace/"), []byte("/tmp/fixpoint-123/ws/"))
		res.Stderr = bytes.ReplaceAll(res.Stderr, []byte("/workspace/"), []byte("/tmp/fixpoint-123/ws/"))
		rep := Parse(r, res, report)
		for _, x := range rep.Tests {
			for _, f := range append([]Frame{{File: x.File}}, x.Frames...) {
				if strings.HasPrefix(f.File, "/") {
					t.Errorf("%s: %s: location %q is absolute", tt.raw, x.ID, f.File)
				}
			}
		}
		checkResult(t, rep, want{id: tt.id, status: findTest(rep, tt.id).Status, file: tt.file, line: findTest(rep, tt.id).Line})
		if findTest(rep, tt.id).File != tt.file {
			t.Errorf("%s: %s at %q, want %q", tt.raw, tt.id, findTest(rep, tt.id).File, tt.file)
		}
	}
}

// nativeCountRe reads the runners' own summary lines: jest ("Tests: 1
// failed, 48 passed, 49 total"), vitest ("Tests  1 failed | 5 passed |
// 1 skipped | 1 todo (8)"), mocha's spec reporter ("29 passing", "1
// pending", "2 failing") and node's TAP ("# pass 59").
var (
	nativeSummaryRe = regexp.MustCompile(`(?m)^\s*(?:Tests:|Tests\s)\s*(.*)$`)
	nativeCountRe   = regexp.MustCompile(`(\d+) (passed|failed|skipped|todo|pending)`)
	mochaCountRe    = regexp.MustCompile(`(?m)^\s+(\d+) (passing|failing|pending)\b`)
	tapCountRe      = regexp.MustCompile(`(?m)^# (pass|fail|skipped|todo|cancelled) (\d+)$`)
)

// nativeCounts returns passed, failed and skipped (skips, todos and
// pendings together) as the runner itself printed them.
func nativeCounts(t *testing.T, dir string) (passed, failed, skipped int) {
	t.Helper()
	read := func(name string) string {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		return string(b)
	}
	add := func(n, word string) {
		v, _ := strconv.Atoi(n)
		switch word {
		case "passed", "passing", "pass":
			passed += v
		case "failed", "failing", "fail", "cancelled":
			failed += v
		default:
			skipped += v
		}
	}
	found := false
	for _, text := range []string{read("native"), read("stdout"), read("stderr")} {
		if found || text == "" {
			continue
		}
		for _, m := range tapCountRe.FindAllStringSubmatch(text, -1) {
			add(m[2], m[1])
			found = true
		}
		for _, m := range mochaCountRe.FindAllStringSubmatch(text, -1) {
			add(m[1], m[2])
			found = true
		}
		if found {
			continue
		}
		if m := nativeSummaryRe.FindStringSubmatch(text); m != nil {
			for _, c := range nativeCountRe.FindAllStringSubmatch(m[1], -1) {
				add(c[1], c[2])
			}
			found = true
		}
	}
	if !found {
		t.Fatalf("%s: no native summary line", dir)
	}
	return passed, failed, skipped
}

// TestParseNativeCounts: for the real JavaScript projects, the parsed
// counts equal the summary the runner printed itself. A file that failed
// to load counts once more as failed (jest and vitest count it among the
// test files, not the tests).
func TestParseNativeCounts(t *testing.T) {
	tests := []struct {
		name        string
		fileErrors  int // test files that failed as a whole
		wantPassed  int // the counts in the realworld README, where there are some
		checkPassed bool
	}{
		{name: "jest-pass", wantPassed: 49, checkPassed: true},
		{name: "jest-fail"},
		{name: "jest-tserror", fileErrors: 1},
		{name: "mocha-pass", wantPassed: 30, checkPassed: true},
		{name: "mocha-fail"},
		{name: "vitest-fail"},
		{name: "vitest-broken", fileErrors: 1},
		{name: "node-sniffer", wantPassed: 59, checkPassed: true},
	}
	cases := map[string]rawCase{}
	for _, c := range rawCases {
		cases[c.name] = c
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r, res, report := loadRaw(t, cases[tt.name])
			got := Parse(r, res, report)
			p, f, s := nativeCounts(t, filepath.Join("testdata", "raw", tt.name))
			f += tt.fileErrors
			if got.Passed != p || got.Failed != f || got.Skipped != s {
				t.Errorf("Parse(%s) passed/failed/skipped = %d/%d/%d, the runner said %d/%d/%d", tt.name, got.Passed, got.Failed, got.Skipped, p, f, s)
			}
			if tt.checkPassed && got.Passed != tt.wantPassed {
				t.Errorf("Parse(%s) passed = %d, the realworld README says %d", tt.name, got.Passed, tt.wantPassed)
			}
			if got.OK() != (res.ExitCode == 0) {
				t.Errorf("Parse(%s).OK() = %v with exit code %d", tt.name, got.OK(), res.ExitCode)
			}
			if len(got.Tests) == 0 || got.Tests[0].ID == "(exit)" {
				t.Errorf("Parse(%s) found no tests of its own: %+v", tt.name, got.Tests)
			}
		})
	}
}

// TestParseTimedOutSuites: real suites stopped at the sandbox's time limit
// (gen.sh's *-hang cases: pytest -v, node --test with lang/node's started-
// test reporter, the same through npm test) keep what finished before it,
// name the test that was running, and say which setting to raise.
func TestParseTimedOutSuites(t *testing.T) {
	tests := []struct {
		raw, project, runner string
		passed, failed       int // failed includes the running test
		finished             []want
		running              string
	}{
		{"pytest-hang", "pyhang", RunnerPytest, 1, 2, []want{
			{id: "test_hang.py::test_passes", status: StatusPass},
			{id: "test_hang.py::test_fails", status: StatusFail},
		}, "test_hang.py::TestGroup::test_hangs"},
		{"node-hang", "nodehang", RunnerNode, 2, 2, []want{
			{id: "passes", status: StatusPass},
			{id: "fails", status: StatusFail, message: "AssertionError"},
			{id: "group > inner passes", status: StatusPass},
		}, "group > hangs"},
		{"npm-hang", "npmhang", RunnerNPM, 2, 2, []want{
			{id: "passes", status: StatusPass},
			{id: "group > inner passes", status: StatusPass},
		}, "group > hangs"},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			r, res, report := loadRaw(t, rawCase{tt.raw, tt.project, tt.runner})
			if !res.TimedOut || res.ExitCode != 124 {
				t.Fatalf("stored run: timed out %v, exit %d; want a sandbox timeout", res.TimedOut, res.ExitCode)
			}
			rep := Parse(r, res, report)
			if rep.Passed != tt.passed || rep.Failed != tt.failed {
				t.Errorf("passed/failed = %d/%d, want %d/%d: %+v", rep.Passed, rep.Failed, tt.passed, tt.failed, rep.Tests)
			}
			for _, w := range tt.finished {
				checkResult(t, rep, w)
			}
			checkResult(t, rep, want{id: tt.running, status: StatusError, message: "timed out"})
			if len(rep.Mismatch) > 0 {
				t.Errorf("Mismatch = %q: a stopped runner's missing summary proves nothing", rep.Mismatch)
			}
			to := rep.Timeout
			if to == nil || to.Setting != "sandbox.timeout" || len(to.Running) != 1 || to.Running[0] != tt.running {
				t.Fatalf("Timeout = %+v, want the setting and %q running", to, tt.running)
			}
			to.Limit = 90 * time.Second
			note := to.Sentence(rep)
			for _, s := range []string{"time limit of 1m30s", fmt.Sprintf("(%d passed, %d failed)", tt.passed, tt.failed-1), "still running: " + tt.running, `raise sandbox.timeout (now "1m30s")`, "--timeout"} {
				if !strings.Contains(note, s) {
					t.Errorf("Sentence() = %q, want it to contain %q", note, s)
				}
			}
		})
	}
}

// TestTAPStartedLinesOnlyWhenCutShort: the started-test lines on stderr
// (which the code under test can also print) are read only when the TAP
// stream never reached its summary: a finished run is read as its TAP says.
func TestTAPStartedLinesOnlyWhenCutShort(t *testing.T) {
	stdout := "TAP version 13\n# Subtest: a\nok 1 - a\n  ---\n  duration_ms: 1\n  ...\n1..1\n# tests 1\n# pass 1\n# fail 0\n"
	stderr := TAPStartedPrefix + `{"n":"a","f":"/workspace/t.js","l":0}` + "\n" + TAPStartedPrefix + `{"n":"forged","f":"/workspace/t.js","l":0}` + "\n"
	rep := Parse(Runner{Name: RunnerNode, Format: TAP}, &sandbox.Result{ExitCode: 1, Stdout: []byte(stdout), Stderr: []byte(stderr)}, nil)
	for _, r := range rep.Tests {
		if r.ID == "forged" {
			t.Errorf("a started line after the TAP summary became a test: %+v", rep.Tests)
		}
	}
	// Cut short, with a started line for a test TAP already finished and
	// one that is not a test: neither is named running.
	cut := "TAP version 13\n# Subtest: a\nok 1 - a\n"
	stderr = TAPStartedPrefix + `{"n":"a","f":"/workspace/t.js","l":0}` + "\n" + TAPStartedPrefix + `{"n":"t.js","f":"/workspace/t.js","l":0}` + "\n" + TAPStartedPrefix + "{broken\n"
	rep = Parse(Runner{Name: RunnerNode, Format: TAP}, &sandbox.Result{ExitCode: 124, TimedOut: true, Stdout: []byte(cut), Stderr: []byte(stderr)}, nil)
	if rep.Passed != 1 || rep.Tests[0].ID != "a" || rep.Timeout == nil || len(rep.Timeout.Running) != 0 {
		t.Fatalf("tests %+v, timeout %+v; want a passed, nothing running", rep.Tests, rep.Timeout)
	}
	for _, r := range rep.Tests[1:] {
		if r.ID != ExitID {
			t.Errorf("unexpected test %+v", r)
		}
	}
	if note := rep.Timeout.Note; !strings.Contains(note, "does not say which test was running") || strings.Contains(note, "building") || !strings.Contains(note, "(1 passed, 0 failed)") {
		t.Errorf("Note = %q", note)
	}
}

// TestTimeoutBeforeAnyResult: a run stopped before any test reported (go
// test still compiling) says where the time likely went.
func TestTimeoutBeforeAnyResult(t *testing.T) {
	rep := Parse(Runner{Name: RunnerGo, Format: GoTestJSON("example.com/m", nil)}, &sandbox.Result{ExitCode: 124, TimedOut: true}, nil)
	if rep.Timeout == nil || !strings.Contains(rep.Timeout.Note, "no test had reported a result") || !strings.Contains(rep.Timeout.Note, "raise sandbox.timeout") {
		t.Errorf("Timeout = %+v", rep.Timeout)
	}
}

// TestTAPCommentNotInID: node-tap's "# time=…" comment after a result's
// description is not part of the test's name; any other '#' is kept (ava
// does not escape one in a name).
func TestTAPCommentNotInID(t *testing.T) {
	for in, want := range map[string]string{
		"finds node # time=7736.589ms":   "finds node",
		"test/bin.js # time=30153.136ms": "test/bin.js",
		"issue \\# 12":                   "issue \\# 12",
		"issue#12":                       "issue#12",
		"plain":                          "plain",
		"tabs\t# time=3s":                "tabs",
		"outputs nothing (fixes #82)":    "outputs nothing (fixes #82)", // ava does not escape a name's #
		"a # note":                       "a # note",
	} {
		if got := cutTAPComment(in); got != want {
			t.Errorf("cutTAPComment(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestTapSuiteIDsStableAcrossRuns: two real runs of the same node-tap
// suite (tap 16: npm/node-which; tap 18: a scratch package) give the same
// test ids with the same statuses, although every "# time=" comment
// differs: a fix compared run to run is not read as renaming or breaking
// every test. A subtest's id is its parent's id plus its name.
func TestTapSuiteIDsStableAcrossRuns(t *testing.T) {
	for _, tt := range []struct {
		runs           [2]string
		passed, failed int
		parent, child  string
		failing        string
	}{
		{runs: [2]string{"tap16-which-1", "tap16-which-2"}, passed: 120, parent: "test/bin.js > finds node", child: "test/bin.js > finds node > should match pattern provided"},
		{runs: [2]string{"tap18-1", "tap18-2"}, passed: 5, failed: 4, parent: "test/basic.js > nested > inner two", child: "test/basic.js > nested > inner two > should be equal", failing: "test/basic.js > nested > inner two > should be equal"},
	} {
		var ids [2]map[string]Status
		for i, name := range tt.runs {
			r, res, report := loadRaw(t, rawCase{name, "", RunnerNPM})
			rep := Parse(r, res, report)
			ids[i] = map[string]Status{}
			for _, x := range rep.Tests {
				if strings.Contains(x.ID, "time=") || strings.Contains(x.ID, "#") {
					t.Errorf("%s: id %q carries a TAP comment", name, x.ID)
				}
				ids[i][x.ID] = x.Status
			}
			if rep.Passed < tt.passed || rep.Failed < tt.failed {
				t.Errorf("%s: passed/failed = %d/%d, want at least %d/%d", name, rep.Passed, rep.Failed, tt.passed, tt.failed)
			}
			for _, id := range []string{tt.parent, tt.child} {
				if _, ok := ids[i][id]; !ok {
					t.Errorf("%s: no test %q", name, id)
				}
			}
			if tt.failing != "" && ids[i][tt.failing] != StatusFail {
				t.Errorf("%s: %q = %q, want fail", name, tt.failing, ids[i][tt.failing])
			}
		}
		for id, st := range ids[0] {
			if got, ok := ids[1][id]; !ok || got != st {
				t.Errorf("%s: %q is %q in the first run and %q (present %v) in the second", tt.runs[0], id, st, got, ok)
			}
		}
		if len(ids[0]) != len(ids[1]) {
			t.Errorf("%s: %d ids in the first run, %d in the second", tt.runs[0], len(ids[0]), len(ids[1]))
		}
	}
}

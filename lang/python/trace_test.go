package python

import (
	"slices"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/langtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// image is the docker image the traced runs use besides bwrap.
const image = "fixpoint-sandbox-python"

// calcPy is the module under test: line 4 helper, 8 never_called, 12 the
// decorator of cached (13), 17 Box, 18 __init__, 21 get, 24 unused, 28
// doubled.
const calcPy = `import functools


def helper(x):
    return x * 2


def never_called(x):
    return x - 1


@functools.lru_cache(maxsize=None)
def cached(x):
    return helper(x) + 1


class Box:
    def __init__(self, v):
        self.v = v

    def get(self):
        return cached(self.v)

    def unused(self):
        return 0


def doubled(x):
    return helper(x)
`

// The failing test runs get -> cached -> helper; the passing tests (one
// in the same file, one in another) run doubled and never_called, which
// the trace must not hold: SelectTests narrows pytest to the failing
// node id.
func TestTracePytest(t *testing.T) {
	files := map[string]string{
		"pkg/__init__.py": "",
		"pkg/calc.py":     calcPy,
		"tests/test_calc.py": `from pkg.calc import Box, doubled


def test_box():
    assert Box(2).get() == 6


def test_doubled():
    assert doubled(2) == 4
`,
		"tests/test_other.py": "from pkg.calc import never_called\n\n\ndef test_never():\n    assert never_called(1) == 0\n",
	}
	r := Language{}.TestCommand(langtest.SnapOf(files))
	if r.Name != testrun.RunnerPytest {
		t.Fatalf("TestCommand = %q, want pytest", r.Name)
	}
	for _, b := range langtest.Backends(image) {
		t.Run(b.Name, func(t *testing.T) { checkPytestTrace(t, langtest.RunTraced(t, b, Language{}, files, r)) })
	}
}

func checkPytestTrace(t *testing.T, got langtest.TracedRun) {
	if f := got.Selected.Failures(); len(f) != 1 || f[0].ID != "tests/test_calc.py::test_box" || got.Selected.Passed != 0 {
		t.Fatalf("selected run = %d passed, failures %+v; want test_box alone", got.Selected.Passed, f)
	}
	checkCalcTrace(t, got)
	if want := "tests/test_calc.py"; !langtest.HasLine(got.Trace[want], 4) || langtest.HasLine(got.Trace[want], 8) {
		t.Errorf("trace of %s = %v, want test_box (4) and not test_doubled (8)", want, got.Trace[want])
	}
	if _, ok := got.Trace["tests/test_other.py"]; ok {
		t.Errorf("trace holds tests/test_other.py, which the selected run did not run: %v", got.Trace)
	}
	t.Logf("selected run %v, traced %v", got.Untraced, got.TracedWall)
}

// unittest is narrowed to the failing test's dotted id and traced the
// same way.
func TestTraceUnittest(t *testing.T) {
	files := map[string]string{
		"pkg/__init__.py":   "",
		"pkg/calc.py":       calcPy,
		"tests/__init__.py": "",
		"tests/testcalc.py": `import unittest
from pkg.calc import Box, doubled, never_called


class CalcTest(unittest.TestCase):
    def test_box(self):
        self.assertEqual(Box(2).get(), 6)

    def test_doubled(self):
        self.assertEqual(doubled(2), 4)

    def test_never(self):
        self.assertEqual(never_called(1), 0)
`,
	}
	r := Language{}.TestCommand(langtest.SnapOf(files))
	if r.Name != testrun.RunnerUnittest {
		t.Fatalf("TestCommand = %q, want unittest", r.Name)
	}
	for _, b := range langtest.Backends(image) {
		t.Run(b.Name, func(t *testing.T) {
			got := langtest.RunTraced(t, b, Language{}, files, r)
			if f := got.Selected.Failures(); len(f) != 1 || !strings.Contains(f[0].ID, "test_box") {
				t.Fatalf("selected run failures = %+v, want test_box alone", f)
			}
			checkCalcTrace(t, got)
		})
	}
}

// checkCalcTrace checks the trace of a run of test_box alone: calcPy's
// functions it ran, with the decorated one at its def line, and none of
// the others.
func checkCalcTrace(t *testing.T, got langtest.TracedRun) {
	t.Helper()
	calc := got.Trace["pkg/calc.py"]
	for _, line := range []int{4, 13, 18, 21} {
		if !langtest.HasLine(calc, line) {
			t.Errorf("trace of pkg/calc.py = %v, want a span at line %d", calc, line)
		}
	}
	for _, line := range []int{8, 12, 24, 28} {
		if langtest.HasLine(calc, line) {
			t.Errorf("trace of pkg/calc.py = %v, want no span at line %d (not run by test_box, or a decorator line)", calc, line)
		}
	}
	for _, f := range got.Workspace {
		if strings.HasPrefix(f, ".fixpoint/") && f != lang.TracePath && f != testrun.JUnitPath {
			t.Errorf("the traced run left %s in the workspace", f)
		}
		if strings.Contains(f, "__pycache__") {
			t.Errorf("the traced run left %s in the workspace", f)
		}
	}
	if !slices.Contains(got.Workspace, lang.TracePath) {
		t.Errorf("workspace = %q, want %s", got.Workspace, lang.TracePath)
	}
}

// Runners SelectTests does not narrow are not traced; pytest is run by
// the same interpreter with the same, narrowed, arguments.
func TestTraceTestsRunners(t *testing.T) {
	failed := []testrun.Result{{ID: "tests/test_x.py::test_y", Package: "tests/test_x.py", Status: testrun.StatusFail}}
	pytest := Language{}.TestCommand(langtest.SnapOf(map[string]string{"test_x.py": ""}))
	for _, tt := range []struct {
		name  string
		r     testrun.Runner
		tests []testrun.Result
	}{
		{name: "no failing tests", r: pytest},
		{name: "custom command", r: testrun.Runner{Name: testrun.RunnerCustom, Args: []string{"make", "test"}}, tests: failed},
		{name: "pytest's own script", r: testrun.Runner{Name: testrun.RunnerPytest, Args: []string{"pytest", "-q"}}, tests: failed},
		{name: "an id that is a flag", r: pytest, tests: []testrun.Result{{ID: "--co", Package: "--co"}}},
		{name: "collection errors only", r: pytest, tests: []testrun.Result{
			{ID: "tests/test_x.py", Package: "tests/test_x.py", Status: testrun.StatusError},
			{ID: "tests/test_y.py", Package: "tests/test_y.py", Status: testrun.StatusError}}},
	} {
		if got, ok := (Language{}).TraceTests(nil, tt.r, tt.tests); ok || got.TracePath != "" || !slices.Equal(got.Args, tt.r.Args) {
			t.Errorf("%s: TraceTests(%q) = %q, %v; want r unchanged, false", tt.name, tt.r.Args, got.Args, ok)
		}
	}
	// A collection error beside a failing test: traced.
	if _, ok := (Language{}).TraceTests(nil, pytest, append([]testrun.Result{{ID: "tests/test_z.py", Package: "tests/test_z.py", Status: testrun.StatusError}}, failed...)); !ok {
		t.Errorf("a failing test beside a collection error is not traced")
	}
	got, ok := Language{}.TraceTests(nil, pytest, failed)
	want := append([]string{pytest.Args[0], "-c", traceScript, lang.TracePath, "pytest"}, append(slices.Clone(pytest.Args[3:]), "tests/test_x.py::test_y")...)
	if !ok || !slices.Equal(got.Args, want) || got.ReportPath != pytest.ReportPath || !slices.Equal(got.Env, pytest.Env) || got.TracePath != lang.TracePath {
		t.Errorf("TraceTests(%q) = %q, %v; want %q", pytest.Args, got.Args, ok, want)
	}
}

// ParseTrace moves a decorated function's span from its first decorator
// line to its def, and keeps only .py files.
func TestParseTraceDecorators(t *testing.T) {
	snap := langtest.SnapOf(map[string]string{"pkg/calc.py": calcPy, "data.txt": "x\n"})
	data := `{"files":{"pkg/calc.py":[[12,12,0],[4,4,0],[13,13,0]],"data.txt":[[1,1,0]]}}`
	got, err := Language{}.ParseTrace(snap, "/workspace", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	want := lang.Trace{"pkg/calc.py": {{From: 4, To: 4}, {From: 13, To: 13}}}
	if len(got) != 1 || !slices.Equal(got["pkg/calc.py"], want["pkg/calc.py"]) {
		t.Errorf("ParseTrace(%s) = %v, want %v", data, got, want)
	}
}

// What a test may do to the tracer: run code in a thread (traced: the
// thread gets its own profiler), fork a child that exits (the child
// writes nothing), install its own cProfile (the test still works; the
// tracer may lose what runs after it), and end the run with its own
// exit status (kept).
func TestTracePytestEdges(t *testing.T) {
	files := map[string]string{
		"conftest.py": "",
		"pkg/__init__.py": `def in_thread():
    return 1


def in_child():
    return 2


def profiled():
    return 3
`,
		"tests/test_edges.py": `import os, threading, cProfile
import pkg


def test_a_thread():
    out = []
    th = threading.Thread(target=lambda: out.append(pkg.in_thread()))
    th.start()
    th.join()
    assert out == [2]


def test_b_fork():
    pid = os.fork()
    if pid == 0:
        pkg.in_child()
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    assert status == 1


def test_c_own_profiler():
    p = cProfile.Profile()
    p.enable()
    v = pkg.profiled()
    p.disable()
    assert v == 4


def test_passes():
    assert True
`,
	}
	r := Language{}.TestCommand(langtest.SnapOf(files))
	got := langtest.RunTraced(t, langtest.Backends(image)[0], Language{}, files, r)
	if got.Selected.Failed != 3 || got.Selected.Passed != 0 {
		t.Fatalf("selected run: %d failed, %d passed; want the three failing tests", got.Selected.Failed, got.Selected.Passed)
	}
	if spans := got.Trace["pkg/__init__.py"]; !langtest.HasLine(spans, 1) || langtest.HasLine(spans, 5) {
		t.Errorf("trace of pkg/__init__.py = %v, want in_thread (line 1), run in a thread, and not in_child (5), run in a forked child only", spans)
	}
	if spans := got.Trace["tests/test_edges.py"]; !langtest.HasLine(spans, 5) || !langtest.HasLine(spans, 13) {
		t.Errorf("trace of tests/test_edges.py = %v, want the tests at lines 5 and 13", spans)
	}
}

// The trace holds the lines that ran, not only the functions: in a long
// function the failing test enters, the branch it took (line 6) is there
// and the branch it did not take (line 8) is not.
func TestTracePytestLines(t *testing.T) {
	files := map[string]string{
		"pkg/__init__.py": "",
		"pkg/length.py": `def decode(n):
    if n < 128:
        size = n
        return size
    else:
        size = n & 0x7F
        return size * 1000
    return -1
`,
		"tests/test_length.py": "from pkg.length import decode\n\n\ndef test_long():\n    assert decode(200) == 72\n",
	}
	r := Language{}.TestCommand(langtest.SnapOf(files))
	for _, b := range langtest.Backends(image) {
		t.Run(b.Name, func(t *testing.T) {
			got := langtest.RunTraced(t, b, Language{}, files, r)
			spans := got.Trace["pkg/length.py"]
			ran := func(l int) bool {
				return slices.ContainsFunc(spans, func(s lang.Span) bool { return s.From <= l && l <= s.To })
			}
			if !ran(1) || !ran(2) || !ran(6) || !ran(7) {
				t.Errorf("trace of pkg/length.py = %v, want the def (1), the test (2) and the branch that ran (6-7)", spans)
			}
			if ran(3) || ran(4) || ran(8) {
				t.Errorf("trace of pkg/length.py = %v holds lines that did not run (3, 4, 8)", spans)
			}
		})
	}
}

package golang

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/bwrap"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

func traceSnap(kv ...string) *sandbox.Snapshot {
	s := &sandbox.Snapshot{Files: map[string]sandbox.File{}}
	for i := 0; i+1 < len(kv); i += 2 {
		s.Files[kv[i]] = sandbox.File{Data: []byte(kv[i+1])}
	}
	return s
}

func readProfile(t *testing.T, name string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "trace", name))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func TestTraceTestsGo(t *testing.T) {
	snap := traceSnap("go.mod", "module example.com/m\n\ngo 1.22\n", "calc/calc.go", "package calc\n")
	base := testrun.Runner{Name: testrun.RunnerGo, Args: []string{"go", "test", "-count=1", "-json", "./..."}}
	fail := []testrun.Result{{ID: "example.com/m/calc.TestDouble", Name: "TestDouble", Package: "example.com/m/calc", Status: testrun.StatusFail}}
	got, ok := Language{}.TraceTests(snap, base, fail)
	want := []string{"go", "test", "-covermode=count", "-coverpkg=example.com/m/...", "-coverprofile=.fixpoint/trace",
		"-count=1", "-json", "-run", "^(TestDouble)$", "example.com/m/calc"}
	if !ok || !slices.Equal(got.Args, want) || got.TracePath != lang.TracePath {
		t.Errorf("TraceTests = %q (%v, trace %q), want %q", got.Args, ok, got.TracePath, want)
	}
	// A table-driven test: its failing cases only, one alternation per
	// level; a failing test with no failing subtest keeps the plain
	// selection.
	sub := func(id string) testrun.Result {
		return testrun.Result{ID: "example.com/m/calc." + id, Name: id, Package: "example.com/m/calc", Status: testrun.StatusFail}
	}
	cases := []testrun.Result{sub("TestDiff"), sub("TestDiff/Reporter"), sub("TestDiff/Reporter/Named_pointer"), sub("TestDiff/Options/a.b")}
	if got, ok := (Language{}).TraceTests(snap, base, cases); !ok || !slices.Contains(got.Args, `^(TestDiff)$/^(Reporter|Options)$/^(Named_pointer|a\.b)$`) {
		t.Errorf("failing subtests traced as %q, %v", got.Args, ok)
	}
	if got, _ := (Language{}).TraceTests(snap, base, []testrun.Result{sub("TestA"), sub("TestDiff/Reporter")}); !slices.Contains(got.Args, "^(TestA|TestDiff)$") {
		t.Errorf("a failing test without subtests beside a failing subtest traced as %q, want the tests whole", got.Args)
	}
	race := base
	race.Args = []string{"go", "test", "-race", "-json", "./..."}
	if got, ok := (Language{}).TraceTests(snap, race, fail); !ok || !slices.Contains(got.Args, "-covermode=atomic") {
		t.Errorf("a -race runner traced as %q, want -covermode=atomic", got.Args)
	}
	// A nested module: the profile is written relative to -C's directory.
	nested := traceSnap("v2/go.mod", "module example.com/m/v2\n", "v2/a.go", "package m\n")
	r := testrun.Runner{Name: testrun.RunnerGo, Args: []string{"go", "-C", "v2", "test", "-json", "./..."}}
	nf := []testrun.Result{{ID: "example.com/m/v2.TestA", Name: "TestA", Package: "example.com/m/v2", Status: testrun.StatusFail}}
	if got, ok := (Language{}).TraceTests(nested, r, nf); !ok || got.Args[2] != "v2" || !slices.Contains(got.Args, "-coverprofile=../.fixpoint/trace") || !slices.Contains(got.Args, "-coverpkg=example.com/m/v2/...") {
		t.Errorf("nested module traced as %q, %v", got.Args, ok)
	}
	// A go.work: every member module is instrumented.
	work := traceSnap("go.work", "go 1.22\n\nuse (\n\t./a\n\t./b\n)\n", "a/go.mod", "module example.com/a\n", "b/go.mod", "module example.com/b\n")
	wr := testrun.Runner{Name: testrun.RunnerGo, Args: []string{"go", "test", "-json", "./a/...", "./b/..."}}
	wf := []testrun.Result{{ID: "example.com/a.TestA", Name: "TestA", Package: "example.com/a", Status: testrun.StatusFail}}
	if got, ok := (Language{}).TraceTests(work, wr, wf); !ok || !slices.Contains(got.Args, "-coverpkg=example.com/a/...,example.com/b/...") {
		t.Errorf("go.work traced as %q, %v", got.Args, ok)
	}
	for _, r := range []testrun.Runner{
		{Name: testrun.RunnerGo, Args: []string{"go", "test", "-json", "-coverprofile=c.out", "./..."}},
		{Name: testrun.RunnerGo, Args: []string{"go", "test", "-json", "-cover", "./..."}},
		{Name: testrun.RunnerCustom, Args: []string{"sh", "-c", "go test ./..."}},
		{Name: testrun.RunnerGo, Args: []string{"go", "-C", "../out", "test", "./..."}},
	} {
		if got, ok := (Language{}).TraceTests(snap, r, fail); ok {
			t.Errorf("TraceTests(%q) = %q, want not traced", r.Args, got.Args)
		}
	}
	// A package whose test binary does not build runs nothing: not
	// traced; beside a failing test of another package, traced.
	build := testrun.Result{ID: "example.com/m/env", Package: "example.com/m/env", Status: testrun.StatusError, Message: "undefined: GetString"}
	if got, ok := (Language{}).TraceTests(snap, base, []testrun.Result{build}); ok {
		t.Errorf("a build failure traced as %q", got.Args)
	}
	if _, ok := (Language{}).TraceTests(snap, base, append([]testrun.Result{build}, fail...)); !ok {
		t.Errorf("a failing test beside a build failure is not traced")
	}
	if _, ok := (Language{}).TraceTests(traceSnap("a.go", "package a\n"), base, fail); ok {
		t.Errorf("traced a workspace with no go.mod")
	}
}

// A real profile of a failing test that reaches a method through an
// interface: the executed blocks come back as workspace paths, the
// blocks that did not run do not, and a dependency's or a path outside
// the workspace is dropped.
func TestParseTraceGoProfile(t *testing.T) {
	snap := traceSnap("go.mod", "module example.com/m\n\ngo 1.22\n",
		"calc/calc.go", "package calc\n", "sub/inner/inner.go", "package inner\n",
		"vendor/example.com/dep/dep.go", "package dep\n", "vendor/example.com/dep/go.mod", "module example.com/dep\n")
	data := append(readProfile(t, "interface.out"),
		"example.com/dep/dep.go:1.1,3.2 1 4\n"+ // a dependency (vendored: not the module's)
			"golang.org/x/text/x.go:1.1,2.2 1 9\n"+
			"example.com/m/../../etc/passwd.go:1.1,2.2 1 1\n"+
			"/elsewhere/abs.go:1.1,2.2 1 1\n"+
			"example.com/m/calc/missing.go:1.1,2.2 1 1\n"+
			"example.com/m/calc/calc.go:bad line\n"...)
	tr, err := Language{}.ParseTrace(snap, "/workspace", data)
	if err != nil {
		t.Fatal(err)
	}
	want := lang.Trace{
		"calc/calc.go":       {{From: 9, To: 11, Count: 1}, {From: 19, To: 19, Count: 1}, {From: 21, To: 22, Count: 1}, {From: 22, To: 24, Count: 1}},
		"sub/inner/inner.go": {{From: 3, To: 3, Count: 1}},
	}
	if fmt.Sprint(tr) != fmt.Sprint(want) {
		t.Errorf("ParseTrace = %v\nwant %v", tr, want)
	}
	if _, err := (Language{}).ParseTrace(snap, "/workspace", []byte("<html>not a profile</html>")); err == nil {
		t.Error("a file that is not a profile parsed")
	}
}

// A nested module (example.com/root/sub in sub/, inside example.com/root)
// maps through its own, longer module path.
func TestParseTraceGoNestedModule(t *testing.T) {
	snap := traceSnap("go.mod", "module example.com/root\n", "sub/go.mod", "module example.com/root/sub\n", "sub/f.go", "package sub\n")
	tr, err := Language{}.ParseTrace(snap, "/workspace", readProfile(t, "nested.out"))
	if err != nil {
		t.Fatal(err)
	}
	want := lang.Trace{"sub/f.go": {{From: 3, To: 4, Count: 1}, {From: 4, To: 6, Count: 1}}}
	if fmt.Sprint(tr) != fmt.Sprint(want) {
		t.Errorf("ParseTrace = %v, want %v", tr, want)
	}
}

// The bounds: spans past maxTraceSpans are not kept, whatever the file
// holds, and the same block from several test binaries sums.
func TestParseTraceGoBounded(t *testing.T) {
	snap := traceSnap("go.mod", "module m\n", "a.go", "package a\n")
	var b strings.Builder
	b.WriteString("mode: count\n")
	for i := range maxTraceSpans + 100 {
		fmt.Fprintf(&b, "m/a.go:%d.1,%d.9 1 1\n", i+1, i+1)
	}
	b.WriteString("mode: count\nm/a.go:1.1,1.9 1 2\n")
	tr, err := Language{}.ParseTrace(snap, "/workspace", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(tr["a.go"]); n != maxTraceSpans {
		t.Errorf("kept %d spans, want the cap %d", n, maxTraceSpans)
	}
	if s := tr["a.go"][0]; s.From != 1 || s.Count != 3 {
		t.Errorf("first span = %+v, want line 1 counted 3 times", s)
	}
}

// The real traced runner, in bwrap: the failing test reaches double.Apply
// through an interface and inner.Twice in another package; the trace
// holds both, and neither never.Apply nor inner.Unused.
func TestTraceGoRunnerBwrap(t *testing.T) {
	sandboxtest.RequireCommand(t, "bwrap")
	sandboxtest.RequireCommand(t, "go")
	base := filepath.Join(os.TempDir(), fmt.Sprintf("fixpoint-golang-trace-test-%d", os.Getpid()))
	os.RemoveAll(base)
	t.Cleanup(func() { os.RemoveAll(base) })
	b, err := bwrap.New(&bwrap.Options{GoCacheDir: base})
	if err != nil {
		t.Fatal(err)
	}
	src := map[string]string{}
	for _, p := range []string{"go.mod", "calc/calc.go", "calc/calc_test.go", "sub/inner/inner.go"} {
		data, err := os.ReadFile(filepath.Join("testdata", "trace", "project", p))
		if err != nil {
			t.Fatal(err)
		}
		src[p] = string(data)
	}
	snap := traceSnap("go.mod", src["go.mod"], "calc/calc.go", src["calc/calc.go"], "calc/calc_test.go", src["calc/calc_test.go"], "sub/inner/inner.go", src["sub/inner/inner.go"])
	s, err := b.Start(t.Context(), sandbox.Spec{Labels: map[string]string{sandbox.LabelProject: "tracetest"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Sync(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	l := Language{}
	r := l.Untrusted(l.TestCommand(snap))
	fail := []testrun.Result{{ID: "example.com/m/calc.TestDouble", Name: "TestDouble", Package: "example.com/m/calc", Status: testrun.StatusFail}}
	tr, ok := l.TraceTests(snap, r, fail)
	if !ok {
		t.Fatalf("TraceTests(%q) did not trace", r.Args)
	}
	rep, err := testrun.Run(t.Context(), s, tr, sandbox.Limits{Timeout: 4 * time.Minute}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 1 || rep.Passed != 0 {
		t.Errorf("the traced run reported %d passed, %d failed; want the one failing test only (output %q)", rep.Passed, rep.Failed, rep.Output)
	}
	if rep.Trace == nil {
		t.Fatalf("no trace read back; output:\n%s", rep.Output)
	}
	trace, err := l.ParseTrace(snap, rep.Trace.Root, rep.Trace.Data)
	if err != nil {
		t.Fatal(err)
	}
	ran := func(p, code string) bool {
		n := 1 + strings.Count(src[p][:strings.Index(src[p], code)], "\n")
		for _, sp := range trace[p] {
			if sp.From <= n+1 && n <= sp.To {
				return true
			}
		}
		return false
	}
	if !ran("calc/calc.go", "return inner.Twice(x)") || !ran("sub/inner/inner.go", "func Twice") {
		t.Errorf("the trace lacks double.Apply or inner.Twice: %v", trace)
	}
	if ran("calc/calc.go", "return x - 1") || ran("sub/inner/inner.go", "func Unused") {
		t.Errorf("the trace holds code the test never ran: %v", trace)
	}
	if _, ok := trace["calc/calc_test.go"]; ok {
		t.Errorf("the trace holds the test file: %v", trace)
	}
}

// A profile names files by import path or by absolute path; either way a
// file is kept only as lang.TraceRel keeps one for every tracer: a
// symbolic link of the workspace, a path out of it through "..", or one
// under another root is dropped, whatever the module path says.
func TestParseTraceGoKeepsOnlyRegularWorkspaceFiles(t *testing.T) {
	snap := traceSnap("go.mod", "module m\n", "a.go", "package a\n", "b.go", "package a\n")
	snap.Files["link.go"] = sandbox.File{Link: "/etc/passwd"}
	profile := "mode: count\n" +
		"m/a.go:1.1,1.9 1 1\n" +
		"/workspace/b.go:1.1,1.9 1 1\n" +
		"m/link.go:1.1,1.9 1 1\n" +
		"/workspace/link.go:1.1,1.9 1 1\n" +
		"m/../etc/x.go:1.1,1.9 1 1\n" +
		"/elsewhere/a.go:1.1,1.9 1 1\n"
	tr, err := Language{}.ParseTrace(snap, "/workspace", []byte(profile))
	if err != nil {
		t.Fatal(err)
	}
	if len(tr) != 2 || len(tr["a.go"]) != 1 || len(tr["b.go"]) != 1 {
		t.Errorf("trace = %v, want a.go and b.go alone", tr)
	}
}

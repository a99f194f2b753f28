package agent

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// Round 8: the failing tests' trace (trace.go, tracerank.go). A Go
// package whose one long file (well over a whole file's room) holds
// thirty implementations of an unexported interface, each of whose put
// methods is long; the failing test calls Save, which reaches the buggy
// diskSink.put through a table of sinks: no name on the test's path
// tells the thirty put methods apart, and they do not all fit. Only the
// trace says which one ran.

// sinkKinds are the sink types, the buggy one last (the static fill,
// which keeps the file's order among equals, reaches it last).
func sinkKinds() []string {
	var ks []string
	for i := range 29 {
		ks = append(ks, fmt.Sprintf("mem%02d", i))
	}
	return append(ks, "disk")
}

const diskBug = "\treturn len(v) + 1"

// sinkProject is the project's files.
func sinkProject() map[string]string {
	var b strings.Builder
	b.WriteString("package store\n\ntype sink interface {\n\tput(v string) int\n}\n\n")
	b.WriteString("var sinks = map[string]sink{\n")
	for _, k := range sinkKinds() {
		fmt.Fprintf(&b, "\t%q: &%sSink{},\n", k, k)
	}
	b.WriteString("}\n\n// Save stores v in the configured sink and returns the bytes written.\nfunc Save(v string) int {\n\treturn sinks[current].put(v)\n}\n\nvar current = \"disk\"\n\n")
	for _, k := range sinkKinds() {
		fmt.Fprintf(&b, "type %sSink struct{ n int }\n\n", k)
		fmt.Fprintf(&b, "// put writes v to the %s sink.\nfunc (s *%sSink) put(v string) int {\n", k, k)
		for i := range 30 {
			fmt.Fprintf(&b, "\ts.n = s.n*31 + %d // mix the %s sink's state, step %d\n", i, k, i)
		}
		if k == "disk" {
			b.WriteString(diskBug + "\n}\n\n")
		} else {
			b.WriteString("\treturn len(v)\n}\n\n")
		}
	}
	test := "package store\n\nimport \"testing\"\n\nfunc TestSaveCountsBytes(t *testing.T) {\n\tif got := Save(\"abc\"); got != 3 {\n\t\tt.Fatalf(\"Save wrote %d bytes, want 3\", got)\n\t}\n}\n"
	return map[string]string{
		"go.mod":              "module example.com/store\n\ngo 1.22\n",
		"store/store.go":      b.String(),
		"store/store_test.go": test,
	}
}

// The context builder alone: with the trace of the failing test (the
// lines of Save and of diskSink.put ran), the prompt shows the buggy
// method; without it, it does not.
func TestContextTraceFindsAnIndirectMethod(t *testing.T) {
	src := sinkProject()
	if n := len(src["store/store.go"]); n < 3*wholeFileMax {
		t.Fatalf("store.go has %d bytes: the test wants a file well over a whole file's room", n)
	}
	snap := files("go.mod", src["go.mod"], "store/store.go", src["store/store.go"], "store/store_test.go", src["store/store_test.go"])
	rep := failing("example.com/store.TestSaveCountsBytes", "store/store_test.go", 7)
	rep.Tests[0].Message = "Save wrote 4 bytes, want 3"
	mod := src["store/store.go"]
	put := lineOf(mod, "func (s *diskSink) put(")
	save := lineOf(mod, "func Save(")
	trace := lang.Trace{"store/store.go": {{From: save, To: save + 2, Count: 1}, {From: put, To: put + 32, Count: 1}}}
	untraced, _ := firstPrompt(snap, rep)
	if shown(untraced, "store/store.go", diskBug) {
		t.Fatalf("the untraced prompt already shows diskSink.put: the test does not test the trace")
	}
	traced := tracedPrompt(snap, rep, trace)
	if !shown(traced, "store/store.go", "func (s *diskSink) put(v string) int {") || !shown(traced, "store/store.go", diskBug) {
		t.Errorf("the traced prompt lacks diskSink.put:\n%s", sections(traced))
	}
	if !shown(traced, "store/store.go", "func Save(v string) int {\n\treturn sinks[current].put(v)") {
		t.Errorf("the traced prompt lacks Save, which the test calls")
	}
	if len(traced) > 32*1024 {
		t.Errorf("the traced prompt's context is %d bytes, over 32 KB", len(traced))
	}
}

// A trace of many declarations (the framework, a test helper, vendored
// code, and sixty functions of another long file) does not crowd the
// package under test out: peripheral files and test files never rank,
// and a file where much ran weighs each declaration less.
func TestContextTraceSpecificity(t *testing.T) {
	src := sinkProject()
	noisy := "package util\n\n" + filler("go", "step", 60)
	snap := files("go.mod", src["go.mod"], "store/store.go", src["store/store.go"], "store/store_test.go", src["store/store_test.go"],
		"util/util.go", noisy, "vendor/example.com/dep/dep.go", "package dep\n\nfunc Dep() int {\n\treturn 1\n}\n",
		"store/helpers_test.go", "package store\n\nfunc helper() int {\n\treturn 2\n}\n")
	rep := failing("example.com/store.TestSaveCountsBytes", "store/store_test.go", 7)
	mod := src["store/store.go"]
	put := lineOf(mod, "func (s *diskSink) put(")
	trace := lang.Trace{
		"store/store.go":                {{From: put, To: put + 32, Count: 1}},
		"vendor/example.com/dep/dep.go": {{From: 3, To: 5, Count: 1}},
		"store/helpers_test.go":         {{From: 3, To: 5, Count: 1}},
	}
	for i := range 60 {
		l := lineOf(noisy, fmt.Sprintf("func step%d(", i))
		trace["util/util.go"] = append(trace["util/util.go"], lang.Span{From: l, To: l + 9, Count: 50})
	}
	ranked, _ := contextRankTraced(snap, &Request{Mode: ModeFix}, rep, allFiles, trace)
	if len(ranked) < 2 || ranked[0] != "store/store_test.go" || ranked[1] != "store/store.go" {
		t.Errorf("ranked = %q, want the failing test's file, then the traced file of its package", ranked)
	}
	for _, p := range ranked {
		if p == "vendor/example.com/dep/dep.go" {
			t.Errorf("vendored code ranks: %q", ranked)
		}
	}
	w, _ := traceWeights(strings.Count(noisy, "\n")+1, declUnits(strings.SplitAfter(noisy, "\n"), nil, nil, nil), trace["util/util.go"])
	one, _ := traceWeights(strings.Count(mod, "\n")+1, declUnits(strings.SplitAfter(mod, "\n"), nil, nil, nil), trace["store/store.go"])
	if len(w) != 60 || len(one) != 1 {
		t.Fatalf("traced declarations: %d in util.go, %d in store.go; want 60 and 1", len(w), len(one))
	}
	for _, x := range one {
		for _, y := range w {
			if y >= x/4 {
				t.Fatalf("a declaration of sixty that ran 50 times weighs %.3f, the only one of its file %.3f: want far less", y, x)
			}
		}
	}
	prompt := tracedPrompt(snap, rep, trace)
	if !shown(prompt, "store/store.go", diskBug) {
		t.Errorf("the noisy trace crowded diskSink.put out:\n%s", sections(prompt))
	}
}

// tracedPrompt is firstPrompt with a trace.
func tracedPrompt(snap *sandbox.Snapshot, rep *testrun.Report, trace lang.Trace) string {
	ranked, rc := contextRankTraced(snap, &Request{Mode: ModeFix}, rep, allFiles, trace)
	h := hintsFor(snap, rep, "")
	h.Reach = rc
	h.Trace = trace
	in := &promptInput{Mode: ModeFix}
	fitContext(in, snap, ranked, allFiles, 24000*charsPerToken, 4000, h)
	var b strings.Builder
	in.contextSections(&b)
	return b.String()
}

// The whole run: the real Go tracer runs the failing test in the
// baseline's session, and the first prompt shows diskSink.put; with
// agent.trace off it does not. The trace is not a test run, and a trace
// this small runs no spectrum.
func TestRunTraceShowsTheExecutedMethod(t *testing.T) {
	skipShort(t)
	first := func(trace bool) (string, *Result) {
		m, res, lines := runFixOnce(t, sinkProject(), func(cfg *config.Config) { cfg.Agent.Trace = &trace })
		if len(m.calls) == 0 {
			t.Fatalf("no prompt was sent; progress: %q", lines)
		}
		if trace && !strings.Contains(strings.Join(lines, "\n"), "tracing the 1 failing test") {
			t.Errorf("no progress line for the trace: %q", lines)
		}
		// A trace this small is shown whole: the spectrum's two runs
		// (spectrum.go) would change nothing and do not run.
		if strings.Contains(strings.Join(lines, "\n"), "failing tests' packages") {
			t.Errorf("the spectrum ran for a trace the prompt holds whole: %q", lines)
		}
		return m.calls[0], res
	}
	prompt, res := first(true)
	if !shown(prompt, "store/store.go", diskBug) {
		t.Errorf("the first prompt lacks diskSink.put with the trace (traced %d files in %s):\n%s", res.TracedFiles, res.TraceTime, sections(prompt))
	}
	if res.TraceTime <= 0 || res.TracedFiles != 1 || res.Phases[PhaseTrace] != res.TraceTime {
		t.Errorf("TraceTime %s, TracedFiles %d, Phases[trace] %s: want the trace's time and one file", res.TraceTime, res.TracedFiles, res.Phases[PhaseTrace])
	}
	if res.FullRuns != 1 || res.TargetedRuns != 0 {
		t.Errorf("FullRuns %d, TargetedRuns %d: the trace counted as a test run", res.FullRuns, res.TargetedRuns)
	}
	prompt, res = first(false)
	if shown(prompt, "store/store.go", diskBug) {
		t.Errorf("the first prompt shows diskSink.put with agent.trace off: the test does not test the trace")
	}
	if res.TraceTime != 0 || res.TracedFiles != 0 {
		t.Errorf("agent.trace = false still traced: %s, %d files", res.TraceTime, res.TracedFiles)
	}
}

// A long function only the trace points at, of which the failing test ran
// one case of sixty: the first pass shows its declaring line and the
// lines that ran, where the whole function does not fit.
func TestContextTraceShowsThePathThroughALongFunction(t *testing.T) {
	var b strings.Builder
	b.WriteString("package conv\n\n// Dispatch converts v by kind.\nfunc Dispatch(kind, v int) int {\n\tswitch kind {\n")
	for i := range 60 {
		fmt.Fprintf(&b, "\tcase %d:\n", i)
		for j := range 4 {
			fmt.Fprintf(&b, "\t\tv = v*%d + %d // kind %d, step %d of its conversion\n", i+2, j, i, j)
		}
		if i == 37 {
			b.WriteString("\t\treturn v - 1\n")
		} else {
			b.WriteString("\t\treturn v\n")
		}
	}
	b.WriteString("\t}\n\treturn 0\n}\n")
	mod := b.String()
	if len(mod) < 2*traceSplitMin {
		t.Fatalf("Dispatch has %d bytes, want a long one", len(mod))
	}
	snap := files("go.mod", "module example.com/conv\n", "conv/conv.go", mod)
	head := lineOf(mod, "func Dispatch(")
	c37 := lineOf(mod, "\tcase 37:")
	trace := lang.Trace{"conv/conv.go": {{From: head, To: head + 1, Count: 1}, {From: c37, To: c37 + 5, Count: 1}}}
	in := &promptInput{Mode: ModeFix}
	fillFiles(in, snap, []string{"conv/conv.go"}, 3000, &contextHints{Trace: trace})
	var sb strings.Builder
	in.contextSections(&sb)
	prompt := sb.String()
	if !shown(prompt, "conv/conv.go", "func Dispatch(kind, v int) int {") ||
		!shown(prompt, "conv/conv.go", "\tcase 37:\n\t\tv = v*39 + 0 // kind 37, step 0 of its conversion") ||
		!shown(prompt, "conv/conv.go", "\t\treturn v - 1") {
		t.Errorf("the excerpt lacks the declaring line or the case that ran:\n%s", prompt)
	}
	if strings.Contains(prompt, "kind 5, step") {
		t.Errorf("the excerpt shows a case that did not run, within 3000 characters:\n%s", prompt)
	}
}

// A traced namesake of the failing test's file ranks first among the
// traced files: tests/test_gen.py ran the parser a great deal (it parses
// the generator's output) and gen.py a little, and the trace confirms
// that the module its name points at ran.
func TestContextTraceNamesakeFirst(t *testing.T) {
	args := []string{"tests/test_gen.py", "from pkg import gen, parse\n\n\ndef test_round_trip():\n    assert parse.parse(gen.emit('x')) == 'x'\n",
		"pkg/gen.py", "def emit(x):\n    return '(' + x\n"}
	trace := lang.Trace{"pkg/gen.py": {{From: 1, To: 2}}}
	for _, name := range []string{"parse", "lex", "yacc", "ast", "util"} {
		body := filler("py", name+"_rule", 40)
		args = append(args, "pkg/"+name+".py", body)
		for i := range 40 {
			l := lineOf(body, fmt.Sprintf("def %s_rule%d(", name, i))
			trace["pkg/"+name+".py"] = append(trace["pkg/"+name+".py"], lang.Span{From: l, To: l + 3})
		}
	}
	snap := files(args...)
	rep := failing("tests/test_gen.py::test_round_trip", "tests/test_gen.py", 5)
	ranked, _ := contextRankTraced(snap, &Request{Mode: ModeFix}, rep, allFiles, trace)
	if len(ranked) < 2 || ranked[0] != "tests/test_gen.py" || ranked[1] != "pkg/gen.py" {
		t.Errorf("ranked = %q, want the failing test's file, then its traced namesake pkg/gen.py", ranked)
	}
}

// A baseline stopped at its time limit is not traced: the failing test
// that hangs would hang traced too, costing one more time limit for no
// trace (round 8: jonboulle/clockwork, 120 s of baseline, then 120 s of
// trace). The progress says why.
func TestRunTraceSkipsATimedOutBaseline(t *testing.T) {
	skipShort(t)
	src := sinkProject()
	src["store/hang_test.go"] = "package store\n\nimport \"testing\"\n\nfunc TestHangs(t *testing.T) {\n\tselect {}\n}\n"
	_, res, lines := runFixOnce(t, src, func(cfg *config.Config) { cfg.Sandbox.Timeout = config.Duration(20 * time.Second) })
	if res.Baseline == nil || res.Baseline.Timeout == nil {
		t.Fatalf("the baseline did not reach its time limit: %+v; progress %q", res.Baseline, lines)
	}
	all := strings.Join(lines, "\n")
	if strings.Contains(all, "tracing the") || res.TraceTime != 0 || res.Phases[PhaseTrace] != 0 {
		t.Errorf("a timed-out baseline was traced (%s): %q", res.TraceTime, lines)
	}
	if !strings.Contains(all, "no trace of the failing tests (the baseline run reached sandbox.timeout") {
		t.Errorf("the progress does not say why there is no trace: %q", lines)
	}
}

// runFixOnce runs one fix iteration over a project of files (written to a
// temporary directory) on the test backend, with the scripted model and
// the config tune changes; it returns the model (its calls are the
// prompts), the result and the progress lines.
func runFixOnce(t *testing.T, files map[string]string, tune func(*config.Config)) (*scripted, *Result, []string) {
	t.Helper()
	root := t.TempDir()
	for p, c := range files {
		full := filepath.Join(root, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cfg := testConfig(t)
	cfg.Agent.MaxIterations = 1
	tune(cfg)
	m := &scripted{}
	e := New(cfg, &Options{Model: m, Backend: testBackend(t)})
	defer e.Close()
	var lines []string
	res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: root}, func(ev Event) {
		if ev.Delta == "" {
			lines = append(lines, ev.Message)
		}
	})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return m, res, lines
}

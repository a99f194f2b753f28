package agent

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/lang"
)

// Round 10: the failing tests' spectrum (spectrum.go). A Go package whose
// one long file holds a renderer: Render dispatches each line of a
// document to one of forty long handlers through a table, each of which
// asks a predicate of its own; the wrap handler asks
// isDelimiter, the function to fix. The failing test renders a document
// of every kind of line, so its trace holds all forty-odd functions at
// the same small weight, and no name on its path points at isDelimiter
// (the test is TestRenderDocument). The passing tests render each kind
// four times; only the failing test reaches isDelimiter.

const delimBug = "\treturn strings.HasPrefix(line, \"~~\") // BUG: also ```"

// renderKinds is the number of handlers.
const renderKinds = 40

// renderProject is the project's files.
func renderProject() map[string]string {
	var b strings.Builder
	b.WriteString("package md\n\nimport \"strings\"\n\n")
	b.WriteString("// Render renders each line of doc by its kind.\nfunc Render(doc string) string {\n\tvar out []string\n\tfor _, line := range strings.Split(doc, \"\\n\") {\n\t\tout = append(out, render(line))\n\t}\n\treturn strings.Join(out, \"\\n\")\n}\n\n")
	b.WriteString("func render(line string) string {\n\tkind, _, _ := strings.Cut(line, \" \")\n\tif h, ok := handlers[kind]; ok {\n\t\treturn h(line)\n\t}\n\treturn line\n}\n\n")
	b.WriteString("var handlers = map[string]func(string) string{\n\t\"x\": wrap,\n")
	for i := range renderKinds {
		fmt.Fprintf(&b, "\t\"k%02d\": kind%02d,\n", i, i)
	}
	b.WriteString("}\n\n")
	for i := range renderKinds {
		fmt.Fprintf(&b, "// kind%02d renders a line of kind %d.\nfunc kind%02d(line string) string {\n\tacc := len(line)\n", i, i, i)
		for j := range 24 {
			fmt.Fprintf(&b, "\tacc = acc*31 + %d // fold the kind %d line's state, step %d\n", j, i, j)
		}
		fmt.Fprintf(&b, "\tif isKind%02d(line) {\n\t\tacc++\n\t}\n\treturn strings.Repeat(\"k\", acc%%3+1) + line\n}\n\n", i)
		fmt.Fprintf(&b, "// isKind%02d reports a line of kind %d.\nfunc isKind%02d(line string) bool {\n\treturn strings.HasPrefix(line, \"k%02d\")\n}\n\n", i, i, i, i)
	}
	b.WriteString("func wrap(line string) string {\n\tif isDelimiter(strings.TrimPrefix(line, \"x \")) {\n\t\treturn \"<pre>\"\n\t}\n\treturn line\n}\n\n")
	b.WriteString("// isDelimiter reports a fence delimiter line.\nfunc isDelimiter(line string) bool {\n" + delimBug + "\n}\n")
	var tb strings.Builder
	tb.WriteString("package md\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n\t\"testing\"\n)\n\n")
	tb.WriteString("func TestRenderDocument(t *testing.T) {\n\tvar doc []string\n\tfor i := 0; i < " + fmt.Sprint(renderKinds) + "; i++ {\n\t\tdoc = append(doc, fmt.Sprintf(\"k%02d text\", i))\n\t}\n\tdoc = append(doc, \"x ```\")\n\tgot := Render(strings.Join(doc, \"\\n\"))\n\tif !strings.HasSuffix(got, \"<pre>\") {\n\t\tt.Fatalf(\"the document's last line rendered as %q, want <pre>\", got[strings.LastIndex(got, \"\\n\")+1:])\n\t}\n}\n\n")
	tb.WriteString("func TestRenderEachKind(t *testing.T) {\n\tfor i := 0; i < " + fmt.Sprint(renderKinds) + "; i++ {\n\t\tfor j := 0; j < 4; j++ {\n\t\t\tif got := Render(fmt.Sprintf(\"k%02d case %d\", i, j)); got == \"\" {\n\t\t\t\tt.Fatalf(\"kind %d rendered empty\", i)\n\t\t\t}\n\t\t}\n\t}\n}\n")
	return map[string]string{
		"go.mod":        "module example.com/md\n\ngo 1.22\n",
		"md/md.go":      b.String(),
		"md/md_test.go": tb.String(),
	}
}

// renderTraces are the trace of the failing test and of its package
// (the same in -short mode: the spectrum's two runs), as the Go tracer
// writes them (one span per function, counted): the
// failing test runs render and each handler once and isDelimiter once;
// the whole package runs each handler five times, render 201 times and
// isDelimiter once.
func renderTraces(mod string) (trace, all lang.Trace) {
	ls := strings.Split(mod, "\n")
	span := func(name string, count int) lang.Span {
		at := lineOf(mod, "func "+name+"(")
		end := at
		for end < len(ls) && ls[end-1] != "}" {
			end++
		}
		return lang.Span{From: at, To: end, Count: count}
	}
	var fail, whole []lang.Span
	fail = append(fail, span("Render", 1), span("render", 41), span("wrap", 1), span("isDelimiter", 1))
	whole = append(whole, span("Render", 161), span("render", 201), span("wrap", 1), span("isDelimiter", 1))
	for i := range renderKinds {
		fail = append(fail, span(fmt.Sprintf("kind%02d", i), 1), span(fmt.Sprintf("isKind%02d", i), 1))
		whole = append(whole, span(fmt.Sprintf("kind%02d", i), 5), span(fmt.Sprintf("isKind%02d", i), 5))
	}
	return lang.Trace{"md/md.go": fail}, lang.Trace{"md/md.go": whole}
}

// The context builder alone: with the trace, isDelimiter is one of
// forty-odd equal functions and is not shown; with the spectrum too, it
// is, and the prompt stays within its budget.
func TestContextSpectrumFindsTheFunctionOnlyTheFailingTestRuns(t *testing.T) {
	src := renderProject()
	if n := len(src["md/md.go"]); n < 3*wholeFileMax {
		t.Fatalf("md.go has %d bytes: the test wants a file well over a whole file's room", n)
	}
	snap := files("go.mod", src["go.mod"], "md/md.go", src["md/md.go"], "md/md_test.go", src["md/md_test.go"])
	rep := failing("example.com/md/md.TestRenderDocument", "md/md_test.go", lineOf(src["md/md_test.go"], "t.Fatalf(\"the document"))
	rep.Tests[0].Message = "the document's last line rendered as \"x ```\", want <pre>"
	trace, all := renderTraces(src["md/md.go"])
	prompt := func(spec *spectrum) string {
		ranked, rc := contextRankTraced(snap, &Request{Mode: ModeFix}, rep, allFiles, trace)
		h := hintsFor(snap, rep, "")
		h.Reach, h.Trace, h.Spectrum = rc, trace, spec
		in := &promptInput{Mode: ModeFix}
		fitContext(in, snap, ranked, allFiles, 8000*charsPerToken, 4000, h)
		var b strings.Builder
		in.contextSections(&b)
		return b.String()
	}
	if p := prompt(nil); shown(p, "md/md.go", delimBug) {
		t.Fatalf("the trace alone shows isDelimiter: the test does not test the spectrum:\n%s", sections(p))
	}
	p := prompt(&spectrum{Fail: trace, All: all})
	if !shown(p, "md/md.go", delimBug) {
		t.Errorf("with the spectrum the prompt lacks isDelimiter:\n%s", sections(p))
	}
	if n := len(p); n > 8000*charsPerToken {
		t.Errorf("prompt of %d bytes is over its %d-byte budget", n, 8000*charsPerToken)
	}
}

// spectrumWeights, case by case, on a file of four functions (each a
// unit): what only the failing tests run rises to spectrumScale × its
// share, what every test runs is weighed down, a file where everything
// is specific is left alone, and spans the spectrum run did not report
// (or counts not known) change nothing.
func TestSpectrumWeights(t *testing.T) {
	units := []declUnit{{from: 0, to: 9, at: 0}, {from: 10, to: 19, at: 10}, {from: 20, to: 29, at: 20}, {from: 30, to: 39, at: 30}}
	traced := map[int]float64{0: 0.5, 1: 0.5, 2: 0.5, 3: 0.5}
	fail := []lang.Span{sp(1, 5, 1), sp(11, 15, 1), sp(21, 25, 10), sp(31, 35, 1)}
	tests := []struct {
		name string
		all  []lang.Span
		want map[int]float64
	}{
		{name: "one specific", all: []lang.Span{sp(1, 5, 1), sp(11, 15, 100), sp(21, 25, 1000), sp(31, 35, 2)},
			want: map[int]float64{0: 2, 1: 0.5 * spectrumDemote, 2: 0.5 * spectrumDemote, 3: 1}},
		{name: "all specific", all: []lang.Span{sp(1, 5, 1), sp(11, 15, 1), sp(21, 25, 10), sp(31, 35, 1)},
			want: traced},
		{name: "not reported", all: []lang.Span{sp(1, 5, 1), sp(11, 15, 100)},
			want: map[int]float64{0: 2, 1: 0.5 * spectrumDemote, 2: 0.5, 3: 0.5}},
		{name: "spectrum count below the failing run's", all: []lang.Span{sp(1, 5, 0), sp(11, 15, 100), sp(21, 25, 1), sp(31, 35, 100)},
			want: map[int]float64{0: 0.5, 1: 0.5 * spectrumDemote, 2: 2, 3: 0.5 * spectrumDemote}},
		{name: "no spectrum", all: nil, want: traced},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := spectrumWeights(40, units, traced, fail, tc.all)
			if len(got) != len(tc.want) {
				t.Fatalf("spectrumWeights = %v, want %v", got, tc.want)
			}
			for u, w := range tc.want {
				if math.Abs(got[u]-w) > 1e-9 {
					t.Errorf("spectrumWeights = %v, want %v", got, tc.want)
					break
				}
			}
		})
	}
}

// A Go coverage block starts at a function's first statement; when that
// is a local `var x T`, the one-line declaration of x must not take the
// function's trace weight (nor split it): the span belongs to the
// function that holds it whole.
func TestTraceSpanBelongsToTheFunctionHoldingIt(t *testing.T) {
	src := "package p\n\nfunc Long(data []byte) int {\n\tvar info string\n\tfor i := range data {\n\t\tinfo += string(data[i])\n\t}\n\treturn len(info)\n}\n\nfunc Other() int {\n\treturn 1\n}\n"
	ls := strings.SplitAfter(src, "\n")
	units := declUnits(ls, nil, nil, nil)
	long := lineOf(src, "func Long(")
	w, spans := traceWeights(len(ls), units, []lang.Span{sp(long+1, long+4, 1), sp(long+5, long+5, 1)})
	var got []string
	for u := range w {
		got = append(got, units[u].name)
	}
	if len(w) != 1 || units[firstKey(w)].name != "Long" || len(spans[firstKey(w)]) != 2 {
		t.Errorf("traceWeights gave %q (spans %v), want Long alone with both spans", got, spans)
	}
}

// sp is a span (From, To, Count).
func sp(from, to, count int) lang.Span { return lang.Span{From: from, To: to, Count: count} }

func firstKey(m map[int]float64) int {
	for k := range m {
		return k
	}
	return -1
}

// Hostile spectra (the spectrum run is project code): spans before the
// file, past its end, reversed, counts at the limits, duplicates by the
// thousand. spectrumWeights never panics, keeps exactly the traced
// declarations and never weighs one above spectrumScale.
func FuzzSpectrumWeights(f *testing.F) {
	f.Add(1, 5, 3, 1, 5, 7, 1)
	f.Add(-3, 0, -1, 900, 2, math.MaxInt32, 50)
	f.Add(30, 1, math.MaxInt32, 30, 1, math.MaxInt32, 3000)
	f.Add(1, 10, math.MaxInt, 1, 10, math.MaxInt, 3)
	f.Fuzz(func(t *testing.T, ff, ft, fc, af, at, ac, dup int) {
		units := []declUnit{{from: 0, to: 19, at: 0}, {from: 2, to: 2, at: 2}, {from: 20, to: 39, at: 20}}
		traced := map[int]float64{0: 0.3, 2: 0.7}
		fail := []lang.Span{sp(ff, ft, fc), sp(21, 22, 1), sp(1, 10, 1)}
		all := []lang.Span{sp(21, 22, 1000)}
		for range min(max(dup, 0), 5000) {
			all = append(all, sp(af, at, ac))
		}
		got := spectrumWeights(40, units, traced, fail, all)
		if len(got) != len(traced) {
			t.Fatalf("spectrumWeights = %v, want the keys of %v", got, traced)
		}
		for u, w := range got {
			if _, ok := traced[u]; !ok || w < 0 || w > spectrumScale || math.IsNaN(w) {
				t.Fatalf("spectrumWeights = %v from %v", got, traced)
			}
		}
	})
}

// The whole run on the real Go tracer: the failing test, then the
// spectrum's two runs, traced in the baseline's session, and the first prompt
// shows isDelimiter; neither traced run counts as a test run.
func TestRunSpectrumShowsTheFunctionOnlyTheFailingTestRuns(t *testing.T) {
	skipShort(t)
	m, res, lines := runFixOnce(t, renderProject(), func(cfg *config.Config) { cfg.Agent.ContextTokens = 8000 })
	if len(m.calls) == 0 {
		t.Fatalf("no prompt was sent; progress: %q", lines)
	}
	joined := strings.Join(lines, "\n")
	if !strings.Contains(joined, "spectrum in ") {
		t.Fatalf("no spectrum ran; progress: %q", lines)
	}
	if !shown(m.calls[0], "md/md.go", delimBug) {
		t.Errorf("the first prompt lacks isDelimiter (traced %d files in %s):\n%s", res.TracedFiles, res.TraceTime, sections(m.calls[0]))
	}
	if res.FullRuns != 1 || res.TargetedRuns != 0 {
		t.Errorf("FullRuns %d, TargetedRuns %d: a traced run counted as a test run", res.FullRuns, res.TargetedRuns)
	}
}

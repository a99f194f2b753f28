package testrun

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// hostileInputs are large inputs shaped to hit the parsers' worst cases:
// many tests, deep nesting, huge lines, huge attributes.
func hostileInputs() map[string]func() (Runner, *sandbox.Result, []byte) {
	return map[string]func() (Runner, *sandbox.Result, []byte){
		"go-30k-tests": func() (Runner, *sandbox.Result, []byte) {
			var b strings.Builder
			for i := range maxTests + 2000 {
				fmt.Fprintf(&b, `{"Action":"run","Package":"p%d","Test":"T/%d"}`+"\n", i%50, i)
				fmt.Fprintf(&b, `{"Action":"output","Package":"p%d","Test":"T/%d","Output":"    x_test.go:%d: got 1, want 2\n"}`+"\n", i%50, i, i)
				fmt.Fprintf(&b, `{"Action":"fail","Package":"p%d"}`+"\n", i%50)
			}
			return Runner{Name: RunnerGo, Format: GoTestJSON("p", nil)}, &sandbox.Result{ExitCode: 1, Stdout: []byte(b.String())}, nil
		},
		"go-huge-output": func() (Runner, *sandbox.Result, []byte) {
			var b strings.Builder
			b.WriteString(`{"Action":"run","Package":"p","Test":"T"}` + "\n")
			line := `{"Action":"output","Package":"p","Test":"T","Output":"` + strings.Repeat("panic: ", 2000) + `\n"}` + "\n"
			for b.Len() < 4<<20 {
				b.WriteString(line)
			}
			return Runner{Name: RunnerGo, Format: GoTestJSON("", nil)}, &sandbox.Result{ExitCode: 2, Stdout: []byte(b.String())}, nil
		},
		"tap-deep": func() (Runner, *sandbox.Result, []byte) {
			var b strings.Builder
			for i := range 100 { // deeper than the 64 levels kept, names longer than kept
				fmt.Fprintf(&b, "%s# Subtest: %s\n", strings.Repeat("    ", i), strings.Repeat("n", 2000))
			}
			for i := range maxTests + 5000 { // more results than kept, each with the longest id
				fmt.Fprintf(&b, "%snot ok %d - x\n", strings.Repeat("    ", 63), i)
			}
			return Runner{Name: RunnerNode, Format: TAP}, &sandbox.Result{ExitCode: 1, Stdout: []byte(b.String())}, nil
		},
		"junit-long-classname": func() (Runner, *sandbox.Result, []byte) {
			cls := strings.Repeat("a.", 50000)
			var b strings.Builder
			b.WriteString("<testsuite>")
			for range 20 {
				fmt.Fprintf(&b, `<testcase classname="%s" name="t"><failure message="m">x.py:1: E</failure></testcase>`, cls)
			}
			b.WriteString("</testsuite>")
			return Runner{Name: RunnerPytest, Format: Pytest, ReportPath: JUnitPath}, &sandbox.Result{ExitCode: 1}, []byte(b.String())
		},
		"unittest-many-sections": func() (Runner, *sandbox.Result, []byte) {
			var b strings.Builder
			for i := range 5000 {
				fmt.Fprintf(&b, "test_%d (m.C.test_%d) ... FAIL\n", i, i)
			}
			for i := range 5000 {
				fmt.Fprintf(&b, "%s\nFAIL: test_%d (m.C.test_%d)\n%s\n  File \"/workspace/m.py\", line %d, in t\nAssertionError: 1 != 2\n\n", strings.Repeat("=", 70), i, i, strings.Repeat("-", 70), i)
			}
			return Runner{Name: RunnerUnittest, Format: Unittest}, &sandbox.Result{ExitCode: 1, Stderr: []byte(b.String())}, nil
		},
	}
}

// TestParseHostileBounded checks that large hostile inputs give bounded,
// valid reports (the benchmarks below measure how long they take).
func TestParseHostileBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("large inputs")
	}
	for name, mk := range hostileInputs() {
		t.Run(name, func(t *testing.T) {
			r, res, report := mk()
			rep := Parse(r, res, report)
			checkReport(t, rep, len(res.Stdout)+len(res.Stderr)+len(report))
			if len(rep.Tests) == 0 {
				t.Errorf("no tests parsed from %s", name)
			}
		})
	}
}

func BenchmarkParse(b *testing.B) {
	for _, c := range rawCases {
		b.Run(c.name, func(b *testing.B) {
			r, res, report := loadRaw(b, c)
			b.SetBytes(int64(len(res.Stdout) + len(res.Stderr) + len(report)))
			for b.Loop() {
				Parse(r, res, report)
			}
		})
	}
	for name, mk := range hostileInputs() {
		b.Run("hostile/"+name, func(b *testing.B) {
			r, res, report := mk()
			b.SetBytes(int64(len(res.Stdout) + len(res.Stderr) + len(report)))
			for b.Loop() {
				Parse(r, res, report)
			}
		})
	}
}

// BenchmarkSpool measures the line filter every byte of a test run passes
// through on its way to the parsers: a slow filter slows the tests.
func BenchmarkSpool(b *testing.B) {
	lines := map[string]string{
		"short-log-lines": "y\n",
		"long-log-lines":  strings.Repeat("x", 1000) + "\n",
		"unittest-lines":  "test_x (m.C.test_x) ... ok\n",
		"go-output-json":  `{"Action":"output","Package":"m","Test":"TestA","Output":"    a_test.go:9: ` + strings.Repeat("x", 200) + `\n"}` + "\n",
	}
	for name, line := range lines {
		chunk := []byte(strings.Repeat(line, (32<<10)/len(line)+1))
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(chunk)))
			var s spool
			s.Write([]byte(strings.Repeat("\n", spoolVerbatim+1))) // past the verbatim part: the filter runs
			for b.Loop() {
				s.Write(chunk)
			}
		})
	}
}

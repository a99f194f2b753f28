package agent

import (
	"fmt"
	"strings"
	"testing"
)

// Round 7: the context is filled declaration by declaration across files
// (see [fillFiles]). Each class on a synthetic project: a long module
// whose reached declarations sit far from its top, more reached code than
// the budget holds (the lowest-ranked declarations go, not a file's
// tail), another platform's namesake of a reached function, and a large
// test file of which only the failing test is shown.

// filesSize is the characters of the prompt's file sections.
func filesSize(prompt string) int { return len(sections(prompt)) }

// bigBody is a declaration body of n lines in a language's syntax, each
// using nothing the failure names.
func bigBody(lang string, n int) string {
	var b strings.Builder
	for i := range n {
		switch lang {
		case "py":
			fmt.Fprintf(&b, "    acc = acc * 7 + %d  # step of a long computation\n", i)
		case "go", "rs", "ts":
			fmt.Fprintf(&b, "\tacc = acc*7 + %d // step of a long computation\n", i)
		}
	}
	return b.String()
}

// A Python module of about 3,000 lines whose function the test calls is
// near the top and calls a helper at the bottom: both are shown, the
// thousands of lines between them are not (a long function the message
// names, near the top, does not push the end out), and the prompt stays
// within its budget.
func TestFillShowsTheEndOfALongPythonModule(t *testing.T) {
	mod := "import re\n\n\ndef load(text):\n    return _finish(text.strip())\n\n\n" +
		"def validate(text):\n    acc = 0\n" + bigBody("py", 330) + "    return acc\n\n\n" +
		filler("py", "middle_", 290) +
		"def _finish(text):\n    return text.split(',')  # BUG: should split on ';'\n"
	if n := strings.Count(mod, "\n"); n < 2800 {
		t.Fatalf("module has %d lines: the test wants a long one", n)
	}
	test := "from pkg.core import load\n\n\ndef test_load_pairs():\n    assert load('a;b') == ['a', 'b']\n"
	snap := files("pkg/__init__.py", "", "pkg/core.py", mod, "tests/test_core.py", test)
	rep := failing("tests/test_core.py::test_load_pairs", "tests/test_core.py", 5)
	// The message names a long function near the top: it may be shown,
	// but not at the cost of what the test reaches at the module's end.
	rep.Tests[0].Message = "validate rejected 'a;b'"
	prompt, _ := firstPrompt(snap, rep)
	if !shown(prompt, "pkg/core.py", "def _finish(text):\n    return text.split(',')  # BUG: should split on ';'") {
		t.Errorf("prompt lacks _finish at the module's end:\n%s", sections(prompt))
	}
	if !shown(prompt, "pkg/core.py", "def load(text):\n    return _finish(text.strip())") {
		t.Errorf("prompt lacks load, which the test calls")
	}
	if strings.Contains(sections(prompt), "def middle_100(") {
		t.Errorf("prompt spends room on declarations nothing reaches")
	}
	if !strings.Contains(prompt, "import re") {
		t.Errorf("prompt lacks the module's header (imports)")
	}
	if len(prompt) > 32000 {
		t.Errorf("prompt is %d bytes, over 32 KB", len(prompt))
	}
}

// More reached code than the budget holds: a TypeScript test calls four
// functions of two long modules, each calling a chain of large helpers.
// What the test calls and one call below is shown, in both modules
// (the second module's functions come after the first's whole chain in
// no file order); the deepest helpers are what is left out; the files
// stay within contextFilesMax.
func TestFillDropsTheLowestRankedDeclarations(t *testing.T) {
	chain := func(prefix string) string {
		var b strings.Builder
		// prefixEntry -> prefixStep1 -> prefixStep2 -> prefixStep3 -> prefixStep4
		fmt.Fprintf(&b, "export function %sEntry(acc: number): number {\n\treturn %sStep1(acc) // entry of %s\n}\n\n", prefix, prefix, prefix)
		for i := 1; i <= 4; i++ {
			call := "acc"
			if i < 4 {
				call = fmt.Sprintf("%sStep%d(acc)", prefix, i+1)
			}
			fmt.Fprintf(&b, "function %sStep%d(acc: number): number {\n%s\treturn %s // end of %sStep%d\n}\n\n", prefix, i, bigBody("ts", 60), call, prefix, i)
		}
		return b.String()
	}
	parse := "import { z } from './z';\n\n" + filler("js", "unusedParse", 60) + chain("parse") + chain("lex")
	render := "import { z } from './z';\n\n" + filler("js", "unusedRender", 60) + chain("render") + chain("emit")
	test := "import { parseEntry, lexEntry } from '../src/parse';\nimport { renderEntry, emitEntry } from '../src/render';\n\n" +
		"test('round trip', () => {\n\texpect(renderEntry(parseEntry(1)) + lexEntry(2) + emitEntry(3)).toBe(4);\n});\n"
	snap := files("package.json", `{"name":"rt"}`, "src/z.ts", "export const z = 1;\n", "src/parse.ts", parse, "src/render.ts", render, "test/rt.test.ts", test)
	prompt, ranked := firstPrompt(snap, failing("test/rt.test.ts > round trip", "test/rt.test.ts", 5))
	for _, p := range []string{"parse", "lex", "render", "emit"} {
		file := "src/parse.ts"
		if p == "render" || p == "emit" {
			file = "src/render.ts"
		}
		for _, want := range []string{"export function " + p + "Entry(acc: number): number {", "\treturn " + p + "Step2(acc) // end of " + p + "Step1"} {
			if !shown(prompt, file, want) {
				t.Errorf("prompt lacks %q of %s (ranked %q)", want, file, ranked)
			}
		}
		if shown(prompt, file, "\treturn acc // end of "+p+"Step4") {
			t.Errorf("prompt shows %sStep4, four calls down, though nearer code fills the budget", p)
		}
	}
	if strings.Contains(sections(prompt), "unusedParse3(") {
		t.Errorf("prompt shows code nothing reaches")
	}
	if n := filesSize(prompt); n > contextFilesMax+2000 {
		t.Errorf("file sections take %d characters, over the budget %d", n, contextFilesMax)
	}
}

// Go: the reached function has a namesake in a file built only for
// another platform (watch_windows.go beside watch_linux.go): the namesake
// is shown, the rest of that file is not.
func TestFillShowsAnotherPlatformsNamesake(t *testing.T) {
	linux := "//go:build linux\n\npackage watch\n\nfunc newBackend() *backend {\n\tb := &backend{}\n\tgo b.readEvents()\n\treturn b\n}\n\n" +
		"func (b *backend) readEvents() {\n\tif strings.HasPrefix(b.path, b.old) { // BUG: a sibling prefix matches\n\t\tb.rename()\n\t}\n}\n\n" + filler("go", "linuxOnly", 40)
	windows := "//go:build windows\n\npackage watch\n\n" + filler("go", "windowsOnly", 40) +
		"func newBackend() *backend {\n\tb := &backend{}\n\tgo b.readEvents()\n\treturn b\n}\n\n" +
		"func (b *backend) readEvents() {\n\tif strings.HasPrefix(b.path, b.old) { // BUG: the same on windows\n\t\tb.rename()\n\t}\n}\n\n" + filler("go", "windowsMore", 40)
	watch := "package watch\n\ntype backend struct{ path, old string }\n\n// New starts watching.\nfunc New() *backend { return newBackend() }\n"
	test := "package watch\n\nimport \"testing\"\n\nfunc TestRenameSibling(t *testing.T) {\n\tw := New()\n\tif w.path != \"\" {\n\t\tt.Fatal(w.path)\n\t}\n}\n"
	snap := files("go.mod", "module example.com/watch\n", "watch.go", watch, "watch_linux.go", linux, "watch_windows.go", windows, "watch_test.go", test)
	prompt, ranked := firstPrompt(snap, failing("example.com/watch.TestRenameSibling", "watch_test.go", 8))
	if !shown(prompt, "watch_linux.go", "if strings.HasPrefix(b.path, b.old) { // BUG: a sibling prefix matches") {
		t.Errorf("prompt lacks the reached readEvents (ranked %q)", ranked)
	}
	if !shown(prompt, "watch_windows.go", "if strings.HasPrefix(b.path, b.old) { // BUG: the same on windows") {
		t.Errorf("prompt lacks the windows namesake of readEvents (ranked %q):\n%s", ranked, sections(prompt))
	}
	if strings.Contains(sections(prompt), "func windowsOnly3(") {
		t.Errorf("prompt shows the other platform's code that shares no reached name")
	}
}

// A large test file: the failing test is shown, not the other tests its
// output names (a go test run lists every test it ran).
func TestFillShowsTheFailingTestOnly(t *testing.T) {
	var tests strings.Builder
	tests.WriteString("package calc\n\nimport \"testing\"\n\n")
	for i := range 40 {
		fmt.Fprintf(&tests, "func TestOther%d(t *testing.T) {\n%s\tif Add(%d, 1) != %d {\n\t\tt.Fatal()\n\t}\n}\n\n", i, bigBody("go", 6), i, i+1)
	}
	tests.WriteString("func TestAddNegative(t *testing.T) {\n\tif Add(-1, -1) != -2 {\n\t\tt.Fatal(\"wrong\")\n\t}\n}\n")
	src := "package calc\n\n// Add adds.\nfunc Add(a, b int) int {\n\treturn a + b + 1 // BUG\n}\n"
	snap := files("go.mod", "module example.com/calc\n", "calc.go", src, "calc_test.go", tests.String())
	rep := failing("example.com/calc.TestAddNegative", "calc_test.go", lineOf(tests.String(), "t.Fatal(\"wrong\")"))
	rep.Tests[0].Excerpt = "=== RUN   TestOther3\n--- PASS: TestOther3\n=== RUN   TestOther7\n--- PASS: TestOther7\n=== RUN   TestAddNegative\n"
	prompt, _ := firstPrompt(snap, rep)
	if !shown(prompt, "calc_test.go", "func TestAddNegative(t *testing.T) {\n\tif Add(-1, -1) != -2 {") {
		t.Errorf("prompt lacks the failing test")
	}
	if !shown(prompt, "calc.go", "return a + b + 1 // BUG") {
		t.Errorf("prompt lacks the code under test")
	}
	if strings.Contains(sections(prompt), "func TestOther3(") || strings.Contains(sections(prompt), "func TestOther7(") {
		t.Errorf("prompt shows passing tests the output names:\n%s", sections(prompt))
	}
}

// Rust: a long lib.rs whose public function (top) calls a private one at
// the bottom; both shown, the file's `use` header too, the middle not.
func TestFillShowsTheEndOfALongRustFile(t *testing.T) {
	lib := "use std::fmt;\n\npub fn parse(s: &str) -> Vec<u64> {\n    finish(s.trim())\n}\n\n" + filler("rs", "middle_", 300) +
		"fn finish(s: &str) -> Vec<u64> {\n    s.split(',').map(|x| x.parse().unwrap()).collect() // BUG: ';'\n}\n"
	test := "use calc::parse;\n\n#[test]\nfn parses_pairs() {\n    assert_eq!(parse(\"1;2\"), vec![1, 2]);\n}\n"
	snap := files("Cargo.toml", "[package]\nname = \"calc\"\n", "src/lib.rs", lib, "tests/parse.rs", test)
	prompt, ranked := firstPrompt(snap, failing("parses_pairs", "tests/parse.rs", 5))
	if !shown(prompt, "src/lib.rs", "fn finish(s: &str) -> Vec<u64> {\n    s.split(',').map(|x| x.parse().unwrap()).collect() // BUG: ';'") {
		t.Errorf("prompt lacks finish at the file's end (ranked %q)", ranked)
	}
	if !strings.Contains(prompt, "use std::fmt;") || strings.Contains(sections(prompt), "pub fn middle_150(") {
		t.Errorf("prompt lacks the header or shows the middle")
	}
	if len(prompt) > 32000 {
		t.Errorf("prompt is %d bytes, over 32 KB", len(prompt))
	}
}

// A declaration whose signature spans several lines (Python's def style(
// … ) -> str:, Go's func f(\n…\n) error {) is the whole body, not the
// signature: a long function's docstring and body are shown.
func TestFillShowsAFunctionWithAMultilineSignatureWhole(t *testing.T) {
	mod := "import os\n\n\n" + filler("py", "head_", 120) +
		"def style(\n    text,\n    fg=None,\n) -> str:\n    \"\"\"Styles text.\n\n    .. versionchanged:: 8.0\n        fg may be a number.\n    \"\"\"\n" +
		bigBody("py", 40) + "    if fg:  # BUG: 0 is a color\n        return _color(fg) + text\n    return text\n\n\n" +
		"def _color(fg):\n    return str(fg)\n\n\n" + filler("py", "tail_", 120)
	test := "from pkg.term import style\n\n\ndef test_style_zero():\n    assert style('x', fg=0) == '0x'\n"
	snap := files("pkg/__init__.py", "", "pkg/term.py", mod, "tests/test_term.py", test)
	prompt, _ := firstPrompt(snap, failing("tests/test_term.py::test_style_zero", "tests/test_term.py", 5))
	for _, want := range []string{"    .. versionchanged:: 8.0\n        fg may be a number.", "    if fg:  # BUG: 0 is a color"} {
		if !shown(prompt, "pkg/term.py", want) {
			t.Errorf("prompt lacks %q of style:\n%s", want, sections(prompt))
		}
	}
	ls := strings.SplitAfter(mod, "\n")
	at := lineOf(mod, "def style(") - 1
	if end := declEnd(ls, at); !strings.Contains(ls[end], "return text") {
		t.Errorf("declEnd of style is line %d %q, want its last line", end+1, ls[end])
	}
	goSrc := []string{"func f(\n", "\ta int,\n", ") error {\n", "\treturn nil\n", "}\n", "\n", "func g() {}\n"}
	if end := declEnd(goSrc, 0); end != 4 {
		t.Errorf("declEnd of a Go function with a multi-line signature is line %d, want 5", end+1)
	}
}

// A long failure (dozens of failing cases) takes room from the files, down
// to half their share, rather than growing the prompt past promptTarget.
func TestFillYieldsToALongFailure(t *testing.T) {
	var fs []string
	for i := range 8 {
		fs = append(fs, fmt.Sprintf("pkg/m%d.py", i), "import os\n\n\n"+filler("py", fmt.Sprintf("f%d_", i), 30))
	}
	snap := files(fs...)
	var ranked []string
	for i := range 8 {
		ranked = append(ranked, fmt.Sprintf("pkg/m%d.py", i))
	}
	size := func(fixed int) int {
		in := &promptInput{Mode: ModeFix}
		fitContext(in, snap, ranked, allFiles, 24000*charsPerToken, fixed, &contextHints{})
		n := len(in.RepoMap)
		for _, f := range in.Files {
			n += len(f.Path) + len(f.Content)
		}
		return n
	}
	if n := size(4000); n < contextFilesMax {
		t.Fatalf("with a short failure the files and map take %d characters, want the files' whole share", n)
	}
	if n := size(20000); n+20000 > promptTarget+1000 || n < contextFilesMax/2 {
		t.Errorf("with a 20 000-character failure the files and map take %d characters: want the prompt near %d, files at least %d", n, promptTarget, contextFilesMax/2)
	}
}

// A build error in a package whose first-ranked file is a little over a
// whole file's room: that file is shown nearly whole (less its
// lowest-ranked declarations) before the package's smaller, lower-ranked
// files are shown whole, so the function that uses the limit the test
// patch renames is shown although nothing the test calls reaches it.
func TestFillShowsTheFirstRankedFileNearlyWhole(t *testing.T) {
	parse := "package conf\n\nimport \"fmt\"\n\n// maxExpansions caps imports.\nconst maxExpansions = 1000\n\n" +
		"func Parse(s string) error {\n\tp := &parser{}\n\t_ = lexStep0(jsonStep0(dispStep0(1)))\n\treturn p.next(s)\n}\n\n" +
		"type parser struct{ fileExpansions int }\n\n" +
		"func (p *parser) next(s string) error {\n\tif s == \"\" {\n\t\treturn fmt.Errorf(\"empty\")\n\t}\n\treturn nil\n}\n\n" +
		filler("go", "parseStep", 20) +
		"func (p *parser) doImport() error {\n\tif p.fileExpansions >= maxExpansions { // BUG: its own limit\n\t\treturn fmt.Errorf(\"too deep\")\n\t}\n\tp.fileExpansions++\n\treturn nil\n}\n\n" +
		filler("go", "parseTail", 20)
	if len(parse) <= wholeFileMax || len(parse) > nearlyWholeMax {
		t.Fatalf("parse.go is %d characters: the test wants a little over a whole file's %d", len(parse), wholeFileMax)
	}
	test := "package conf\n\nimport \"testing\"\n\nfunc TestImportDepth(t *testing.T) {\n\tmaxFileExpansions = 2\n\tif err := Parse(\"import a\"); err == nil {\n\t\tt.Fatal(\"want an error\")\n\t}\n}\n"
	snap := files("conf/parse.go", parse, "conf/parse_test.go", test,
		"conf/lexer.go", "package conf\n\n"+filler("go", "lexStep", 28),
		"conf/json.go", "package conf\n\n"+filler("go", "jsonStep", 28),
		"conf/dispenser.go", "package conf\n\n"+filler("go", "dispStep", 28))
	rep := failing("conf.TestImportDepth", "conf/parse_test.go", 6)
	rep.Tests[0].Message = "conf/parse_test.go:6:2: undefined: maxFileExpansions"
	prompt, ranked := firstPrompt(snap, rep)
	if !shown(prompt, "conf/parse.go", "func (p *parser) doImport() error {\n\tif p.fileExpansions >= maxExpansions { // BUG: its own limit") {
		t.Errorf("prompt lacks doImport of the first-ranked file (ranked %v):\n%s", ranked, sections(prompt))
	}
	if n := filesSize(prompt); n > contextFilesMax+2000 {
		t.Errorf("file sections take %d characters, over the budget %d", n, contextFilesMax)
	}
}

package agent

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent/repomap"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

func TestNameWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"TestIncPatchOverflow", []string{"Test", "Inc", "Patch", "Overflow"}},
		{"test_parse_version", []string{"test", "parse", "version"}},
		{"HTTPServerTimeout", []string{"HTTP", "Server", "Timeout"}},
		{"parseV2Header", []string{"parse", "V", "2", "Header"}},
	}
	for _, tt := range tests {
		if got := nameWords(tt.in); !slices.Equal(got, tt.want) {
			t.Errorf("nameWords(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	names := map[string]bool{}
	addNameKeys(names, "TestIncPatchOverflow")
	for _, id := range []string{"IncPatch", "incPatch", "inc_patch", "PatchOverflow"} {
		if !nameMatch(names, id) {
			t.Errorf("TestIncPatchOverflow does not name %s", id)
		}
	}
	if nameMatch(names, "Test") || nameMatch(names, "Inc") {
		t.Error("a test name's marker word or a word under 4 letters names a symbol")
	}
}

// A Go test whose name joins the function's words (TestIncPatchOverflow →
// IncPatch) and whose failing line only checks a result computed a line
// above reaches the file that defines the function, in a package too large
// to show whole.
func TestContextFollowsTestNamesAndCallsAbove(t *testing.T) {
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{"go.mod": {Data: []byte("module example.com/v\n")}}}
	filler := strings.Repeat("// filler to make the package large\n", 60)
	for _, n := range []string{"alpha", "beta", "gamma", "delta"} {
		snap.Files["v/"+n+".go"] = sandbox.File{Data: []byte("package v\n\nfunc " + strings.ToUpper(n[:1]) + n[1:] + "() int { return 1 }\n" + filler)}
	}
	snap.Files["v/patch.go"] = sandbox.File{Data: []byte("package v\n\nfunc (v *Version) IncPatch() { v.patch++ }\n" + filler)}
	snap.Files["v/minor.go"] = sandbox.File{Data: []byte("package v\n\nfunc (v *Version) normalize() string { return \"\" }\n" + filler)}
	snap.Files["v/v_test.go"] = sandbox.File{Data: []byte("package v\n\nimport \"testing\"\n\nfunc TestIncPatchOverflow(t *testing.T) {\n\tv := &Version{}\n\ts := v.normalize()\n\tif s != \"1\" {\n\t\tt.Fatal(s)\n\t}\n}\n")}
	rep := &testrun.Report{Runner: "go", ExitCode: 1, Failed: 1, Tests: []testrun.Result{{
		ID: "example.com/v/v.TestIncPatchOverflow", Name: "TestIncPatchOverflow", Status: testrun.StatusFail,
		File: "v/v_test.go", Line: 9, Message: "\"\"",
	}}}
	ranked := contextFiles(snap, &Request{Mode: ModeFix}, rep, func(string) bool { return true })
	for _, want := range []string{"v/patch.go", "v/minor.go"} {
		if !slices.Contains(ranked, want) {
			t.Errorf("contextFiles = %q, want %s (named by the test name / called above the failing line)", ranked, want)
		}
	}
	if slices.Contains(ranked, "v/alpha.go") {
		t.Errorf("contextFiles = %q: shows a file nothing names", ranked)
	}
}

// With no test file named (the build or the runner failed), the project's
// own sources come before examples and benchmarks, however small.
func TestContextFallbackPrefersProjectSources(t *testing.T) {
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{
		"examples/tiny.go":   {Data: []byte("package main\n")},
		"bench/b.go":         {Data: []byte("package bench\n")},
		"lib/core.go":        {Data: []byte("package lib\n\nfunc Core() {}\n" + strings.Repeat("//\n", 50))},
		"lib/core_test.go":   {Data: []byte("package lib\n")},
		"internal/deep/x.go": {Data: []byte("package deep\n")},
	}}
	rep := &testrun.Report{Runner: "go", ExitCode: 2, Failed: 1, Output: "go: something failed"}
	ranked := contextFiles(snap, &Request{Mode: ModeFix}, rep, func(string) bool { return true })
	if len(ranked) < 2 || ranked[0] != "lib/core.go" {
		t.Errorf("contextFiles = %q, want lib/core.go first", ranked)
	}
	if i, j := slices.Index(ranked, "examples/tiny.go"), slices.Index(ranked, "internal/deep/x.go"); i >= 0 && i < j {
		t.Errorf("contextFiles = %q: an example before the project's code", ranked)
	}
}

// A relevant file whose whole symbol line does not fit the map still shows
// the symbols that fit, not a bare name.
func TestRepoMapTruncatesInsteadOfDropping(t *testing.T) {
	var syms strings.Builder
	syms.WriteString("package big\n\n")
	for i := range 200 {
		syms.WriteString("func Function" + strings.Repeat("x", 10) + string(rune('A'+i%26)) + string(rune('a'+i/26)) + "() {}\n")
	}
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{"big/big.go": {Data: []byte(syms.String())}, "go.mod": {Data: []byte("module m\n")}}}
	m := repomap.Build(snap, &repomap.Options{MaxBytes: 400, Relevant: []string{"big/big.go"}})
	if !strings.Contains(m, "big/big.go: func FunctionxxxxxxxxxxAa()") || !strings.Contains(m, "; …") {
		t.Errorf("map = %q: want big.go's first symbols and an ellipsis", m)
	}
}

// A test named for a feature (TestTable) in a package too large to show
// whole reaches the code that handles it (handleTableCell), and a failing
// test whose names say nothing still shows the package under test: the
// file declaring most of what the test file uses.
func TestContextReachesThePackageUnderTest(t *testing.T) {
	filler := strings.Repeat("// filler to make the package large\n", 80)
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{
		"go.mod":         {Data: []byte("module example.com/m\n")},
		"md/render.go":   {Data: []byte("package md\n\nfunc (r *R) handleTableCell() {}\n" + filler)},
		"md/other.go":    {Data: []byte("package md\n\nfunc Other() {}\n" + filler)},
		"md/markdown.go": {Data: []byte("package md\n\nfunc Render(s string) string { return s }\n" + filler)},
		"md/md_test.go":  {Data: []byte("package md\n\nimport \"testing\"\n\nfunc TestTable(t *testing.T) {\n\tif Render(\"x\") != \"y\" {\n\t\tt.Fatal(\"x\")\n\t}\n}\n")},
		"md/zz_test.go":  {Data: []byte("package md\n")},
	}}
	rep := &testrun.Report{Runner: "go", ExitCode: 1, Failed: 1, Tests: []testrun.Result{{
		ID: "example.com/m/md.TestTable", Name: "TestTable", Status: testrun.StatusFail, File: "md/md_test.go", Line: 7, Message: "x",
	}}}
	ranked := contextFiles(snap, &Request{Mode: ModeFix}, rep, func(string) bool { return true })
	if !slices.Contains(ranked, "md/render.go") {
		t.Errorf("contextFiles = %q, want md/render.go (handleTableCell, named by TestTable)", ranked)
	}
	snap.Files["md/md_test.go"] = sandbox.File{Data: []byte("package md\n\nimport \"testing\"\n\nfunc TestIt(t *testing.T) {\n\tif Render(\"x\") != \"y\" {\n\t\tt.Fatal(\"x\")\n\t}\n}\n")}
	rep.Tests[0].ID, rep.Tests[0].Name, rep.Tests[0].Line = "example.com/m/md.TestIt", "TestIt", 1
	ranked = contextFiles(snap, &Request{Mode: ModeFix}, rep, func(string) bool { return true })
	if !slices.Contains(ranked, "md/markdown.go") {
		t.Errorf("contextFiles = %q, want md/markdown.go (declares Render, which the test uses)", ranked)
	}
}

// Of the files declaring what a failure names, the one declaring a name
// few files declare comes first, and a file built only for another
// platform (a //go:build solaris backend, x_windows.go) comes after the
// others whatever it declares: the failing run never executed it.
func TestContextRanksDefinersBySpecificityAndPlatform(t *testing.T) {
	filler := strings.Repeat("// filler to make the package large\n", 80)
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{
		"go.mod":            {Data: []byte("module example.com/w\n")},
		"a_fen.go":          {Data: []byte("//go:build solaris\n\npackage w\n\nfunc newWatches() {}\nfunc handleRename() {}\n" + filler)},
		"b_windows.go":      {Data: []byte("package w\n\nfunc newWatches() {}\nfunc handleRename() {}\n" + filler)},
		"c_kqueue.go":       {Data: []byte("//go:build darwin || freebsd\n\npackage w\n\nfunc newWatches() {}\n" + filler)},
		"d_inotify.go":      {Data: []byte("//go:build linux\n\npackage w\n\nfunc newWatches() {}\nfunc handleRename() {}\n" + filler)},
		"e_shared.go":       {Data: []byte("package w\n\nfunc newWatches() {}\n" + filler)},
		"d_inotify_test.go": {Data: []byte("package w\n\nimport \"testing\"\n\nfunc TestRenameSibling(t *testing.T) {\n\tw := newWatches()\n\thandleRename(w)\n\tt.Fatal(w)\n}\n")},
	}}
	rep := &testrun.Report{Runner: "go", ExitCode: 1, Failed: 1, Tests: []testrun.Result{{
		ID: "example.com/w.TestRenameSibling", Name: "TestRenameSibling", Status: testrun.StatusFail,
		File: "d_inotify_test.go", Line: 8, Message: "bad",
	}}}
	ranked := contextFiles(snap, &Request{Mode: ModeFix}, rep, func(string) bool { return true })
	pos := func(p string) int {
		i := slices.Index(ranked, p)
		if i < 0 {
			t.Fatalf("contextFiles = %q: want %s", ranked, p)
		}
		return i
	}
	if pos("d_inotify.go") != 1 {
		t.Errorf("contextFiles = %q: want d_inotify.go (declares both names, built on linux) right after the test", ranked)
	}
	for _, other := range []string{"a_fen.go", "b_windows.go", "c_kqueue.go"} {
		if pos(other) < pos("e_shared.go") {
			t.Errorf("contextFiles = %q: %s (another platform's) before e_shared.go", ranked, other)
		}
	}
}

// A file too large to show whole is excerpted around what the failure
// names and, with the room left, the declarations whose bodies use the
// words of the failing test's name (TestRenameKeepsSibling →
// ev.renamedFrom in handleEvent), not the declarations that use nothing
// of it.
func TestExcerptAddsDeclarationsUsingTheTestsWords(t *testing.T) {
	var src strings.Builder
	src.WriteString("package w\n\nfunc WatchList() []string {\n\treturn nil\n}\n\n")
	for i := range 30 {
		fmt.Fprintf(&src, "func unrelated%d() int {\n%s\treturn %d\n}\n\n", i, strings.Repeat("\tx := 1\n\t_ = x\n", 8), i)
	}
	src.WriteString("func (w *inotify) handleEvent(ev *Event) {\n\tif strings.HasPrefix(w.path, ev.renamedFrom) {\n\t\tw.path = ev.Name\n\t}\n}\n\n")
	for i := range 30 {
		fmt.Fprintf(&src, "func more%d() int {\n%s\treturn %d\n}\n\n", i, strings.Repeat("\ty := 2\n\t_ = y\n", 8), i)
	}
	names := map[string]bool{"WatchList": true}
	addNameKeys(names, "TestRenameKeepsSibling")
	ex, ok := fileExcerpt(src.String(), nil, names, nil, 1500)
	if !ok {
		t.Fatal("no excerpt")
	}
	for _, want := range []string{"func WatchList() []string {", "if strings.HasPrefix(w.path, ev.renamedFrom) {"} {
		if !strings.Contains(ex, want) {
			t.Errorf("excerpt lacks %q:\n%s", want, ex)
		}
	}
	if strings.Contains(ex, "func unrelated3()") || len(ex) > 1500 {
		t.Errorf("excerpt (%d bytes) shows a declaration that uses nothing named, or exceeds its budget:\n%s", len(ex), ex)
	}
}

// The body of the failing test lends its identifiers, however far above
// the failing line the call is: found by its name (Go, pytest with a
// class and parameters), by its title (JavaScript), or as the
// declaration around the failing line.
func TestTestBodyNames(t *testing.T) {
	pad := strings.Repeat("\tx := 1\n\t_ = x\n", 6)
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{
		"v/v_test.go":        {Data: []byte("package v\n\nfunc TestOther(t *testing.T) {\n\tnotMine()\n}\n\nfunc TestParse(t *testing.T) {\n\tgot := ParseTolerant(\"1.0\")\n" + pad + "\tif got != want {\n\t\tt.Fatal(got)\n\t}\n}\n")},
		"tests/test_core.py": {Data: []byte("import idna\n\nclass IDNATests(unittest.TestCase):\n    def test_encode(self):\n        idna.encode_other('x')\n\n    def test_decode(self):\n        res = idna.decode_alabel(b'xn--')\n" + strings.Repeat("        y = 1\n", 10) + "        self.assertEqual(res, 'x')\n")},
		"test/app.test.js":   {Data: []byte("describe('router', () => {\n  it('mounts nested apps', () => {\n    const app = createRouter();\n" + strings.Repeat("    step();\n", 8) + "    assert.equal(app.mounted, true);\n  });\n  it('other', () => {\n    notMine();\n  });\n});\n")},
		"lib/helper_test.go": {Data: []byte("package lib\n\nfunc helper() {\n\tsetupThing()\n\tcheck()\n}\n")},
	}}
	rep := &testrun.Report{Tests: []testrun.Result{
		{ID: "example.com/v.TestParse", Name: "TestParse", Status: testrun.StatusFail, File: "v/v_test.go", Line: 21},
		{ID: "tests/test_core.py::IDNATests::test_decode[case-1]", Name: "test_decode[case-1]", Status: testrun.StatusFail, File: "tests/test_core.py", Line: 19},
		{ID: "router mounts nested apps", Name: "mounts nested apps", Status: testrun.StatusFail, File: "test/app.test.js", Line: 12},
		{ID: "example.com/lib.TestUnknown", Name: "TestUnknown", Status: testrun.StatusFail, File: "lib/helper_test.go", Line: 5},
	}}
	names := testBodyNames(snap, rep)
	for _, want := range []string{"ParseTolerant", "decode_alabel", "createRouter", "setupThing"} {
		if !names[want] {
			t.Errorf("testBodyNames lacks %s: %v", want, names)
		}
	}
	for _, not := range []string{"notMine", "encode_other"} {
		if names[not] {
			t.Errorf("testBodyNames has %s, used by a test that did not fail", not)
		}
	}
}

// Sources come before a second failing test file in the budget order.
func TestCodeFirst(t *testing.T) {
	got := codeFirst([]string{"a_test.go", "b_test.go", "a.go", "go.mod", "b.go"})
	want := []string{"a_test.go", "a.go", "go.mod", "b.go", "b_test.go"}
	if !slices.Equal(got, want) {
		t.Errorf("codeFirst = %q, want %q", got, want)
	}
}

// Declarations an excerpt can be cut to, in each language's forms.
func TestDeclName(t *testing.T) {
	for line, want := range map[string]string{
		"func (w *inotify) handleEvent(ev *Event) {":     "handleEvent",
		"    def decode(self, s):":                       "decode",
		"pub fn write<W: io::Write>(wr: W) -> usize {":   "write",
		"    pub(crate) unsafe fn raw(&self) {":          "raw",
		"impl<T: Integer> Display for Wrapper<T> {":      "Wrapper",
		"pub struct Version {":                           "Version",
		"app.handle = function handle(req, res, next) {": "handle",
		"exports.parse = (str, options) => {":            "parse",
		"Router.prototype.route = async function (p) {":  "route",
		"  async send(body) {":                           "send",
		"  private render<T>(x: T): string {":            "render",
		"export default function compile(src) {":         "compile",
		"  if (res.headersSent) {":                       "",
		"  for (const k of keys) {":                      "",
		"  } else if (x) {":                              "",
		"  return foo(x) {":                              "",
		"    x = compute(1)":                             "",
		"x == compute(1)":                                "",
		"_RE_NUMBER = re.compile(":                       "_RE_NUMBER",
		"TABLE: dict[str, int] = {":                      "TABLE",
	} {
		got, ok := declName(line)
		if got != want || ok != (want != "") {
			t.Errorf("declName(%q) = %q, %v; want %q", line, got, ok, want)
		}
	}
}

// A test that requires the package root reaches, through the root's own
// requires, the directory where the function it calls is declared as a
// member function (proto.handle = function handle), and not the files
// there that declare nothing it uses.
func TestContextFollowsTheEntryModulesImports(t *testing.T) {
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{
		"package.json":     {Data: []byte(`{"name":"mini","main":"index.js"}`)},
		"index.js":         {Data: []byte("module.exports = require('./lib/app')\n")},
		"lib/app.js":       {Data: []byte("var router = require('./router')\nexports.create = function create() {}\n")},
		"lib/router.js":    {Data: []byte("var proto = module.exports = {}\nproto.handle = function handle(req, res) {\n  return res\n}\n")},
		"lib/unrelated.js": {Data: []byte("exports.other = function other() {}\n")},
		"test/app.test.js": {Data: []byte("const mini = require('..')\ndescribe('app', () => {\n  it('handles nested', () => {\n    const app = mini.create()\n    const out = app.handle({}, {})\n    assert.equal(out.status, 200)\n  })\n})\n")},
	}}
	rep := &testrun.Report{Runner: "node", ExitCode: 1, Failed: 1, Tests: []testrun.Result{{
		ID: "app handles nested", Name: "handles nested", Status: testrun.StatusFail, File: "test/app.test.js", Line: 6,
	}}}
	ranked := contextFiles(snap, &Request{Mode: ModeFix}, rep, func(string) bool { return true })
	for _, want := range []string{"index.js", "lib/router.js"} {
		if !slices.Contains(ranked, want) {
			t.Errorf("contextFiles = %q, want %s", ranked, want)
		}
	}
	if slices.Contains(ranked, "lib/unrelated.js") {
		t.Errorf("contextFiles = %q: shows a file that declares nothing the test uses", ranked)
	}
}

// An excerpt cut to a named function also shows, room permitting, the
// helper of the same file it calls, though the helper's body names
// nothing of the failure.
func TestExcerptFollowsCallsOfNamedDeclarations(t *testing.T) {
	var src strings.Builder
	src.WriteString("package v\n\nfunc ParseTolerant(s string) Version {\n\treturn normalize(strip(s))\n}\n\n")
	for i := range 40 {
		fmt.Fprintf(&src, "func filler%d() int {\n%s\treturn %d\n}\n\n", i, strings.Repeat("\tx := 1\n\t_ = x\n", 8), i)
	}
	src.WriteString("func strip(s string) string {\n\treturn s[1:]\n}\n")
	ex, ok := fileExcerpt(src.String(), nil, map[string]bool{"ParseTolerant": true}, nil, 1000)
	if !ok || !strings.Contains(ex, "func strip(s string) string {\n\treturn s[1:]\n}") || strings.Contains(ex, "func filler1()") {
		t.Errorf("excerpt (ok %v) does not show the helper ParseTolerant calls, or shows fillers:\n%s", ok, ex)
	}
}

// The core of every ranked file (the declarations the failure names)
// comes before the extras an excerpt grows with: three large sources that
// each declare a named function all show it, though the first alone has
// enough related declarations to fill the files' budget.
func TestFitContextCoresBeforeExtras(t *testing.T) {
	large := func(named string, related int) string {
		var b strings.Builder
		fmt.Fprintf(&b, "package w\n\nfunc %s() int {\n\treturn 1\n}\n\n", named)
		for i := range 120 {
			body := "\tx := 1\n\t_ = x\n"
			if i < related {
				body = "\tx := renamedFrom()\n\t_ = x\n"
			}
			fmt.Fprintf(&b, "func f%s%d() int {\n%s%s\treturn %d\n}\n\n", named, i, body, strings.Repeat("\ty := 2\n\t_ = y\n", 6), i)
		}
		return b.String()
	}
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{
		"a.go": {Data: []byte(large("HandleA", 120))},
		"b.go": {Data: []byte(large("HandleB", 0))},
		"c.go": {Data: []byte(large("HandleC", 0))},
	}}
	names := map[string]bool{"HandleA": true, "HandleB": true, "HandleC": true}
	addNameKeys(names, "TestRenameSibling")
	in := &promptInput{Mode: ModeFix}
	fitContext(in, snap, []string{"a.go", "b.go", "c.go"}, func(string) bool { return true }, 24000*charsPerToken, 2000, &contextHints{Names: names})
	var all strings.Builder
	total := 0
	for _, f := range in.Files {
		all.WriteString(f.Content)
		total += len(f.Content)
	}
	for _, want := range []string{"func HandleA() int {", "func HandleB() int {", "func HandleC() int {", "renamedFrom()"} {
		if !strings.Contains(all.String(), want) {
			t.Errorf("context lacks %q (files %d, omitted %v)", want, len(in.Files), in.Omitted)
		}
	}
	if total > contextFilesMax {
		t.Errorf("files take %d bytes, over %d", total, contextFilesMax)
	}
}

// The helper two calls below what the failure reaches is shown, room
// permitting: from the function holding a stack frame's line (Python,
// nothing named) down through the method it calls to the one that one
// calls, with its comments and decorators; declarations no call reaches
// are not.
func TestExcerptFollowsTheCallChainFromAFrame(t *testing.T) {
	var src strings.Builder
	src.WriteString("class Distro:\n    def info(self):\n        return self._load()\n\n")
	for i := range 30 {
		fmt.Fprintf(&src, "    def filler%d(self):\n%s        return %d\n\n", i, strings.Repeat("        x = 1\n", 8), i)
	}
	src.WriteString("    def _load(self):\n        return self._parse_line('x')\n\n")
	for i := range 30 {
		fmt.Fprintf(&src, "    def more%d(self):\n%s        return %d\n\n", i, strings.Repeat("        y = 2\n", 8), i)
	}
	src.WriteString("    # Splits one KEY=value line.\n    @staticmethod\n    def _parse_line(line):\n        return line.split('=')\n")
	ex, ok := fileExcerpt(src.String(), []int{3}, nil, nil, 2000)
	if !ok {
		t.Fatal("no excerpt")
	}
	for _, want := range []string{"    def _load(self):\n        return self._parse_line('x')", "    # Splits one KEY=value line.\n    @staticmethod\n    def _parse_line(line):\n        return line.split('=')"} {
		if !strings.Contains(ex, want) {
			t.Errorf("excerpt lacks %q:\n%s", want, ex)
		}
	}
	if strings.Contains(ex, "def filler3(") || strings.Contains(ex, "def more3(") {
		t.Errorf("excerpt shows a declaration no call reaches:\n%s", ex)
	}
}

// Weights halve with each call down, and a name several declarations
// share splits its weight among them.
func TestCallWeights(t *testing.T) {
	src := "func A() {\n\tB()\n}\n\nfunc B() {\n\tC()\n}\n\nfunc C() {\n\tD()\n}\n\nfunc D() {\n\tE()\n}\n\nfunc E() {\n}\n"
	ls := strings.SplitAfter(src, "\n")
	units := declUnits(ls, nil, map[string]bool{"A": true}, nil)
	score := map[string]float64{}
	for _, u := range units {
		score[u.name] = u.score
	}
	if score["B"] != 0.5 || score["C"] != 0.25 || score["D"] != 0.125 || score["E"] != 0 {
		t.Errorf("scores = %v: want B 1/2, C 1/4, D 1/8, E (4 calls down) 0", score)
	}
}

// A failing test its runner gave no location for (TAP, a JSON reporter)
// still brings its test file, and through that file's imports the code
// under test: by a file its id names (pytest, cargo), else by the test
// file that declares it by title.
func TestContextFindsTheTestFileOfALocationlessFailure(t *testing.T) {
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{
		"package.json":       {Data: []byte(`{"name":"x","main":"source/index.js"}`)},
		"source/index.js":    {Data: []byte("import {wrap} from './wrap.js';\nexport default function paint(s) {\n  return wrap(s);\n}\n")},
		"source/wrap.js":     {Data: []byte("export function wrap(s) {\n  return s;\n}\n")},
		"source/unused.js":   {Data: []byte("export const tiny = 1;\n")},
		"test/other.test.js": {Data: []byte("import test from 'ava';\ntest('other', t => {\n  t.pass();\n});\n")},
		"test/paint.test.js": {Data: []byte("import test from 'ava';\nimport paint from '../source/index.js';\ntest('keeps nested styles', t => {\n  t.is(paint('a'), 'a');\n});\n")},
		"tests/test_core.py": {Data: []byte("from pkg import core\n\ndef test_thing():\n    assert core.thing() == 1\n")},
		"pkg/__init__.py":    {Data: []byte("")},
		"pkg/core.py":        {Data: []byte("def thing():\n    return 2\n")},
	}}
	for _, c := range []struct {
		res  testrun.Result
		want []string
	}{
		{testrun.Result{ID: "keeps nested styles", Name: "keeps nested styles", Status: testrun.StatusFail}, []string{"test/paint.test.js", "source/index.js"}},
		{testrun.Result{ID: "tests/test_core.py::test_thing", Name: "test_thing", Status: testrun.StatusFail}, []string{"tests/test_core.py", "pkg/core.py"}},
	} {
		rep := &testrun.Report{Tests: []testrun.Result{c.res}}
		ranked := contextFiles(snap, &Request{Mode: ModeFix}, rep, func(string) bool { return true })
		if len(ranked) < 2 || ranked[0] != c.want[0] || !slices.Contains(ranked, c.want[1]) {
			t.Errorf("%s: contextFiles = %q: want %s first, then %s", c.res.ID, ranked, c.want[0], c.want[1])
		}
	}
}

// A failing test file's namesake source comes with it, in every test
// naming convention, though the failure names nothing it declares: in the
// test's directory or a directory it imports, or else the only one among
// the project's sources (not an example's).
func TestContextShowsTheTestFilesNamesake(t *testing.T) {
	for _, c := range []struct{ test, want, decoy string }{
		{"md/roff_test.go", "md/roff.go", "md/other.go"},
		{"tests/test_parser.py", "src/pkg/_parser.py", "examples/parser.py"},
		{"test/wrap.test.js", "source/wrap.js", "source/other.js"},
		{"spec/wrap.spec.ts", "lib/wrap.ts", "lib/unwrap.ts"},
	} {
		snap := &sandbox.Snapshot{Files: map[string]sandbox.File{
			c.test:  {Data: []byte("x\n")},
			c.want:  {Data: []byte("y\n")},
			c.decoy: {Data: []byte(strings.Repeat("z\n", smallDirBytes))}, // not a small package's sibling
		}}
		rep := &testrun.Report{Tests: []testrun.Result{{ID: "t1", Name: "t1", Status: testrun.StatusFail, File: c.test, Line: 1}}}
		ranked := contextFiles(snap, &Request{Mode: ModeFix}, rep, func(string) bool { return true })
		if len(ranked) < 2 || ranked[1] != c.want || slices.Contains(ranked, c.decoy) {
			t.Errorf("%s: contextFiles = %q: want %s right after the test, not %s", c.test, ranked, c.want, c.decoy)
		}
	}
	if k := testStem("tests/test.js"); k != "" {
		t.Errorf("testStem(test.js) = %q: want none (test words only)", k)
	}
}

// A module-level constant is a declaration too: the regular expression a
// named function matches with is shown with it, room permitting, though
// it sits far above among others nothing uses.
func TestExcerptShowsTheModuleConstantANamedFunctionUses(t *testing.T) {
	var src strings.Builder
	src.WriteString("import re\n\n")
	for i := range 40 {
		fmt.Fprintf(&src, "UNUSED_%d = re.compile(r'%s')\n", i, strings.Repeat("x", 60))
	}
	src.WriteString("_RE_NUMBER = re.compile(\n    r'[0-9]+'\n)\n\n")
	for i := range 30 {
		fmt.Fprintf(&src, "def filler%d():\n%s    return %d\n\n", i, strings.Repeat("    x = 1\n", 8), i)
	}
	src.WriteString("def parse_number(s):\n    return _RE_NUMBER.match(s)\n")
	ex, ok := fileExcerpt(src.String(), nil, map[string]bool{"parse_number": true}, nil, 1000)
	if !ok || !strings.Contains(ex, "_RE_NUMBER = re.compile(\n    r'[0-9]+'\n)\n") || strings.Contains(ex, "UNUSED_3 =") {
		t.Errorf("excerpt (ok %v) lacks the constant parse_number uses, or shows unused ones:\n%s", ok, ex)
	}
}

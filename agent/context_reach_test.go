package agent

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent/judge"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// The classes of misses the context builder had on real bugs, each on a
// small synthetic workspace per language: a long module whose fix sits in
// a method a helper of the tested function calls (1), code two or three
// calls and files away from anything the failure names (2), and code built
// or run only on another platform than the sandbox's (3).

func allFiles(string) bool { return true }

// firstPrompt renders the context part of the first prompt as the loop
// builds it, at the default budget.
func firstPrompt(snap *sandbox.Snapshot, rep *testrun.Report) (string, []string) {
	ranked, rc := contextRank(snap, &Request{Mode: ModeFix}, rep, allFiles)
	h := hintsFor(snap, rep, "")
	h.Reach = rc
	in := &promptInput{Mode: ModeFix}
	fitContext(in, snap, ranked, allFiles, 24000*charsPerToken, 4000, h)
	var b strings.Builder
	in.contextSections(&b)
	return b.String(), ranked
}

// sections is the prompt's file sections, without the repository map.
func sections(prompt string) string {
	if i := strings.Index(prompt, "## File: "); i >= 0 {
		return prompt[i:]
	}
	return ""
}

// shown reports whether the lines of code (blank lines aside) appear
// together, in order, in a "## File: p" section of prompt: what the bench
// counts as a hunk shown.
func shown(prompt, p, code string) bool { return judge.Shown(prompt, p, code) }

// filler writes n declarations of the language that nothing calls, each
// about 300 bytes.
func filler(lang, prefix string, n int) string {
	var b strings.Builder
	for i := range n {
		switch lang {
		case "go":
			fmt.Fprintf(&b, "func %s%d(x int) int {\n%s\treturn x + %d\n}\n\n", prefix, i, strings.Repeat("\tx = x*3 + 1 // unrelated arithmetic\n", 8), i)
		case "py":
			fmt.Fprintf(&b, "def %s%d(x):\n%s    return x + %d\n\n\n", prefix, i, strings.Repeat("    x = x * 3 + 1  # unrelated arithmetic\n", 8), i)
		case "pymethod":
			fmt.Fprintf(&b, "    def %s%d(self, x):\n%s        return x + %d\n\n", prefix, i, strings.Repeat("        x = x * 3 + 1  # unrelated arithmetic\n", 8), i)
		case "js":
			fmt.Fprintf(&b, "function %s%d(x) {\n%s  return x + %d;\n}\n\n", prefix, i, strings.Repeat("  x = x * 3 + 1; // unrelated arithmetic\n", 8), i)
		case "rs":
			fmt.Fprintf(&b, "pub fn %s%d(mut x: u64) -> u64 {\n%s    x + %d\n}\n\n", prefix, i, strings.Repeat("    x = x * 3 + 1; // unrelated arithmetic\n", 8), i)
		}
	}
	return b.String()
}

func files(kv ...string) *sandbox.Snapshot {
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{}}
	for i := 0; i+1 < len(kv); i += 2 {
		snap.Files[kv[i]] = sandbox.File{Data: []byte(kv[i+1])}
	}
	return snap
}

func failing(id, file string, line int) *testrun.Report {
	return &testrun.Report{ExitCode: 1, Failed: 1, Tests: []testrun.Result{{ID: id, Name: id, Status: testrun.StatusFail, File: file, Line: line, Message: "assertion failed"}}}
}

func lineOf(text, sub string) int {
	i := strings.Index(text, sub)
	if i < 0 {
		return 0
	}
	return strings.Count(text[:i], "\n") + 1
}

// Class 1, Python: a module of about 3,000 lines whose bug sits in a
// method that a helper of the function the test calls calls, using a
// module-level table. The prompt carries the chain and the table as
// excerpts, not the module's head.
func TestContextLongPythonModule(t *testing.T) {
	mod := "import re\n\n" + filler("py", "head_", 50) +
		"def lookup(key):\n    return _resolve(key.strip())\n\n\n" +
		filler("py", "mid_", 80) +
		"def _resolve(key):\n    parser = _Parser()\n    return parser.parse_item(key)\n\n\n" +
		"class _Parser:\n    \"\"\"Parses items.\"\"\"\n\n    def __init__(self):\n        self.cache = {}\n\n" +
		filler("pymethod", "other_", 90) +
		"    def parse_item(self, key):\n        # BUG: the wrong table\n        return _ITEMS.get(key.lower())\n\n\n" +
		filler("py", "tail_", 60) +
		"_ITEMS = {\n    'a': 1,\n    'b': 2,\n}\n"
	if n := strings.Count(mod, "\n"); n < 2500 {
		t.Fatalf("module has %d lines: the test wants a long one", n)
	}
	test := "from pkg.items import lookup\n\n\ndef test_lookup_upper():\n    value = lookup(' A ')\n    assert value == 1\n"
	snap := files("pkg/__init__.py", "", "pkg/items.py", mod, "tests/test_items.py", test)
	prompt, _ := firstPrompt(snap, failing("tests/test_items.py::test_lookup_upper", "tests/test_items.py", 6))
	for _, want := range []string{
		"def _resolve(key):\n    parser = _Parser()\n    return parser.parse_item(key)",
		"    def parse_item(self, key):\n        # BUG: the wrong table\n        return _ITEMS.get(key.lower())",
		"_ITEMS = {\n    'a': 1,",
	} {
		if !shown(prompt, "pkg/items.py", want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if strings.Contains(sections(prompt), "def head_3(") || strings.Contains(sections(prompt), "def other_3(") {
		t.Errorf("prompt spends room on declarations nothing reaches:\n%s", sections(prompt))
	}
	if !strings.Contains(prompt, "not shown)") || len(prompt) > 32000 {
		t.Errorf("want excerpts with line numbers within 32 KB; got %d bytes", len(prompt))
	}
}

// Class 1, Go: a 3,000-line file; the test calls Lookup, which calls a
// helper, which calls a method using a package-level table.
func TestContextLongGoFile(t *testing.T) {
	src := "package items\n\n" + filler("go", "head", 60) +
		"// Lookup finds key.\nfunc Lookup(key string) int {\n\treturn resolve(strings.TrimSpace(key))\n}\n\n" +
		filler("go", "mid", 80) +
		"func resolve(key string) int {\n\tp := &parser{}\n\treturn p.parseItem(key)\n}\n\n" +
		filler("go", "other", 80) +
		"func (p *parser) parseItem(key string) int {\n\treturn itemTable[strings.ToLower(key)] // BUG\n}\n\n" +
		filler("go", "tail", 60) +
		"var itemTable = map[string]int{\n\t\"a\": 1,\n}\n"
	test := "package items\n\nimport \"testing\"\n\nfunc TestLookupUpper(t *testing.T) {\n\tgot := Lookup(\" A \")\n\tif got != 1 {\n\t\tt.Fatal(got)\n\t}\n}\n"
	snap := files("go.mod", "module example.com/items\n", "items.go", src, "items_test.go", test)
	prompt, _ := firstPrompt(snap, failing("example.com/items.TestLookupUpper", "items_test.go", 8))
	for _, want := range []string{
		"func resolve(key string) int {\n\tp := &parser{}\n\treturn p.parseItem(key)\n}",
		"func (p *parser) parseItem(key string) int {\n\treturn itemTable[strings.ToLower(key)] // BUG\n}",
		"var itemTable = map[string]int{\n\t\"a\": 1,\n}",
	} {
		if !shown(prompt, "items.go", want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if strings.Contains(sections(prompt), "func head3(") || len(prompt) > 32000 {
		t.Errorf("prompt shows the file's head or is over 32 KB (%d bytes):\n%s", len(prompt), prompt)
	}
}

// Class 2, Go: the test calls Diff (compare.go), which calls report
// (report.go), which calls formatValue in a large third file: two calls
// and two files from anything the failure names, in a package too large
// to show whole.
func TestContextFollowsCallsAcrossGoFiles(t *testing.T) {
	snap := files(
		"go.mod", "module example.com/cmp\n",
		"cmp/compare.go", "package cmp\n\n// Diff reports the differences.\nfunc Diff(x, y any) string {\n\tvar r reporter\n\treturn r.report(x, y)\n}\n\n"+filler("go", "cmpHelper", 30),
		"cmp/report.go", "package cmp\n\ntype reporter struct{}\n\nfunc (r *reporter) report(x, y any) string {\n\treturn formatValue(x) + formatValue(y)\n}\n\n"+filler("go", "reportHelper", 30),
		"cmp/report_reflect.go", "package cmp\n\n"+filler("go", "reflectHelper", 50)+"func formatValue(v any) string {\n\tskipType := true // BUG: named pointers lose their type\n\treturn format(v, skipType)\n}\n\n"+filler("go", "reflectMore", 50),
		"cmp/options.go", "package cmp\n\n"+filler("go", "option", 40),
		"cmp/path.go", "package cmp\n\n"+filler("go", "pathStep", 40),
		"cmp/compare_test.go", "package cmp\n\nimport \"testing\"\n\nfunc TestDiff(t *testing.T) {\n\tgot := Diff(1, 2)\n\tif got != \"\" {\n\t\tt.Error(got)\n\t}\n}\n",
	)
	prompt, ranked := firstPrompt(snap, failing("example.com/cmp/cmp.TestDiff", "cmp/compare_test.go", 8))
	if !shown(prompt, "cmp/report_reflect.go", "func formatValue(v any) string {\n\tskipType := true // BUG: named pointers lose their type") {
		t.Errorf("prompt lacks formatValue, two calls down in a third file (ranked %q)", ranked)
	}
	if slices.Contains(ranked, "cmp/options.go") || slices.Contains(ranked, "cmp/path.go") {
		t.Errorf("ranked %q: includes files no call reaches", ranked)
	}
}

// Class 2, Python: test -> the package's re-export -> api.load -> a helper
// imported from another module -> the function that one calls.
func TestContextFollowsCallsAcrossPythonModules(t *testing.T) {
	snap := files(
		"pkg/__init__.py", "from .api import load\n",
		"pkg/api.py", "from ._helpers import parse_text\n\n"+filler("py", "api_", 20)+"def load(path):\n    with open(path) as f:\n        return parse_text(f.read())\n",
		"pkg/_helpers.py", "import re\n\n"+filler("py", "helper_", 30)+"def parse_text(text):\n    return [_split_line(l) for l in text.splitlines()]\n\n\n"+filler("py", "more_", 30)+"def _split_line(line):\n    key, _, value = line.partition(':')  # BUG: should be '='\n    return key, value\n",
		"pkg/unrelated.py", filler("py", "unused_", 40),
		"tests/test_load.py", "import pkg\n\n\ndef test_load_pairs(tmp_path):\n    p = tmp_path / 'x'\n    p.write_text('a=1')\n    assert pkg.load(p) == [('a', '1')]\n",
	)
	prompt, ranked := firstPrompt(snap, failing("tests/test_load.py::test_load_pairs", "tests/test_load.py", 7))
	if !shown(prompt, "pkg/_helpers.py", "def _split_line(line):\n    key, _, value = line.partition(':')  # BUG: should be '='") {
		t.Errorf("prompt lacks _split_line (ranked %q)", ranked)
	}
	if slices.Contains(ranked, "pkg/unrelated.py") {
		t.Errorf("ranked %q: includes a module nothing reaches", ranked)
	}
}

// Class 2, Node: require('..') -> index.js -> lib/format.js -> lib/pad.js.
func TestContextFollowsCallsAcrossNodeModules(t *testing.T) {
	snap := files(
		"package.json", `{"name":"fmt","main":"index.js"}`,
		"index.js", "'use strict';\nconst {format} = require('./lib/format');\n\nmodule.exports = function render(v) {\n  return format(v);\n};\n",
		"lib/format.js", "'use strict';\nconst {padLeft} = require('./pad');\n\n"+filler("js", "fmtHelper", 30)+"function format(v) {\n  return padLeft(String(v), 4);\n}\n\nmodule.exports = {format};\n",
		"lib/pad.js", "'use strict';\n\n"+filler("js", "padHelper", 40)+"function padLeft(s, n) {\n  return ' '.repeat(n - s.length - 1) + s; // BUG: off by one\n}\n\nmodule.exports = {padLeft};\n",
		"lib/unused.js", filler("js", "unused", 40),
		"test/render.test.js", "const test = require('node:test');\nconst assert = require('node:assert');\nconst render = require('..');\n\ntest('pads to four', () => {\n  assert.equal(render(7), '   7');\n});\n",
	)
	prompt, ranked := firstPrompt(snap, failing("pads to four", "test/render.test.js", 6))
	if !shown(prompt, "lib/pad.js", "function padLeft(s, n) {\n  return ' '.repeat(n - s.length - 1) + s; // BUG: off by one\n}") {
		t.Errorf("prompt lacks padLeft (ranked %q)", ranked)
	}
	if slices.Contains(ranked, "lib/unused.js") {
		t.Errorf("ranked %q: includes a module nothing reaches", ranked)
	}
}

// Class 3, Go: the same functions in a linux and a windows backend: the
// one the failing run executed ranks first; the windows namesake of a
// reached function comes after it and after everything else the run
// reached, and a windows function nothing reached is not shown.
func TestContextRanksTheRunnersPlatformVariantFirst(t *testing.T) {
	backend := func(tag, bug string) string {
		return "package w\n\n" + filler("go", "helper"+tag, 50) +
			"func (w *watcher) handleEvent(name string) {\n\tif strings.HasPrefix(w.path, name) { // " + bug + "\n\t\tw.path = name\n\t}\n}\n\n" +
			"func (w *watcher) readEvents() {\n\tfor n := range w.ch {\n\t\tw.handleEvent(n)\n\t}\n}\n\n" +
			"func (w *watcher) only" + tag + "() {\n\tw.path = \"\"\n}\n"
	}
	snap := files(
		"go.mod", "module example.com/w\n",
		"backend_linux.go", backend("Linux", "BUG here"),
		"backend_windows.go", backend("Windows", "BUG repeated"),
		"watcher.go", "package w\n\ntype watcher struct {\n\tpath string\n\tch   chan string\n}\n\nfunc (w *watcher) Start() {\n\tgo w.readEvents()\n}\n"+filler("go", "watch", 30),
		"watcher_test.go", "package w\n\nimport \"testing\"\n\nfunc TestRenameSibling(t *testing.T) {\n\tw := &watcher{}\n\tw.Start()\n\tif w.path != \"x\" {\n\t\tt.Fatal(w.path)\n\t}\n}\n",
	)
	prompt, ranked := firstPrompt(snap, failing("example.com/w.TestRenameSibling", "watcher_test.go", 9))
	li, wi := slices.Index(ranked, "backend_linux.go"), slices.Index(ranked, "backend_windows.go")
	if li < 0 || wi < 0 || li > wi || wi != len(ranked)-1 {
		t.Errorf("ranked %q: want the linux backend, the rest, then the windows one last", ranked)
	}
	if !shown(prompt, "backend_linux.go", "if strings.HasPrefix(w.path, name) { // BUG here") {
		t.Error("prompt lacks the linux backend's handleEvent")
	}
	if !shown(prompt, "backend_windows.go", "if strings.HasPrefix(w.path, name) { // BUG repeated") {
		t.Error("prompt lacks the windows namesake of the reached handleEvent (room was left)")
	}
	if strings.Contains(sections(prompt), "onlyWindows()") {
		t.Errorf("prompt shows a windows function nothing reached:\n%s", sections(prompt))
	}
}

// Class 3, Python: a module that defines a function per platform under
// if sys.platform == "win32": … else: …: the walk reaches the branch
// linux takes; the other branch's namesake weighs a quarter of it.
func TestReachPrefersThePythonBranchLinuxTakes(t *testing.T) {
	mod := "import sys\n\nIS_WIN = sys.platform.startswith('win')\n\n" +
		"if IS_WIN:\n    def _size():\n        return _win_size()\nelse:\n    def _size():\n        return _posix_size()\n\n\n" +
		"def _win_size():\n    return 1\n\n\ndef _posix_size():\n    return 2\n\n\ndef width():\n    return _size()\n"
	snap := files("pkg/term.py", mod, "tests/test_term.py", "from pkg.term import width\n\n\ndef test_width():\n    assert width() == 80\n")
	rep := failing("tests/test_term.py::test_width", "tests/test_term.py", 5)
	rc := callReach(snap, []string{"pkg/term.py"}, rep, nil)
	w := rc.Decls["pkg/term.py"]
	winAt, posixAt := lineOf(mod, "    def _size():\n        return _win")-1, lineOf(mod, "    def _size():\n        return _posix")-1
	if w[posixAt] <= w[winAt] || w[winAt] == 0 {
		t.Errorf("weights: posix _size %v, win32 _size %v: want the branch linux takes heavier, the other a share", w[posixAt], w[winAt])
	}
	if w[lineOf(mod, "def _posix_size")-1] == 0 || w[lineOf(mod, "def _win_size")-1] != 0 {
		t.Errorf("weights %v: want _posix_size reached through linux's branch, _win_size not", w)
	}
}

// Class 1, Node: a long module whose exported function calls a helper
// that calls a class method using a module-level table.
func TestContextLongNodeModule(t *testing.T) {
	src := "'use strict';\n\n" + filler("js", "head", 60) +
		"function lookup(key) {\n  return resolve(key.trim());\n}\n\n" + filler("js", "mid", 80) +
		"function resolve(key) {\n  const p = new Parser();\n  return p.parseItem(key);\n}\n\n" +
		"class Parser {\n  constructor() {\n    this.cache = {};\n  }\n\n  parseItem(key) {\n    return ITEMS[key.toLowerCase()]; // BUG\n  }\n}\n\n" +
		filler("js", "tail", 80) + "const ITEMS = {\n  a: 1,\n};\n\nmodule.exports = {lookup};\n"
	snap := files("package.json", `{"name":"items","main":"index.js"}`, "index.js", src,
		"test/lookup.test.js", "const test = require('node:test');\nconst assert = require('node:assert');\nconst {lookup} = require('..');\n\ntest('finds upper case keys', () => {\n  assert.equal(lookup(' A '), 1);\n});\n")
	prompt, _ := firstPrompt(snap, failing("finds upper case keys", "test/lookup.test.js", 6))
	for _, want := range []string{
		"function resolve(key) {\n  const p = new Parser();\n  return p.parseItem(key);\n}",
		"  parseItem(key) {\n    return ITEMS[key.toLowerCase()]; // BUG\n  }",
		"const ITEMS = {\n  a: 1,\n};",
	} {
		if !shown(prompt, "index.js", want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if strings.Contains(sections(prompt), "function head3(") || len(prompt) > 32000 {
		t.Errorf("prompt shows the module's head or is over 32 KB (%d bytes)", len(prompt))
	}
}

// Class 1 and 2, Rust: an integration test calls the crate's re-export
// (lib.rs), whose function in one module calls a helper in another, long
// module, which calls a method of an impl block.
func TestContextFollowsCallsAcrossRustModules(t *testing.T) {
	snap := files(
		"Cargo.toml", "[package]\nname = \"fmtlib\"\nversion = \"0.1.0\"\n",
		"src/lib.rs", "mod format;\nmod pad;\nmod unused;\n\npub use format::render;\n",
		"src/format.rs", "use crate::pad::pad_left;\n\n"+filler("rs", "fmt_helper", 30)+"pub fn render(v: u64) -> String {\n    pad_left(&v.to_string(), 4)\n}\n",
		"src/pad.rs", filler("rs", "pad_helper", 60)+"pub fn pad_left(s: &str, n: usize) -> String {\n    Padder::new(n).pad(s)\n}\n\n"+filler("rs", "pad_more", 60)+
			"pub struct Padder {\n    n: usize,\n}\n\nimpl Padder {\n    pub fn new(n: usize) -> Self {\n        Padder { n }\n    }\n\n    pub fn pad(&self, s: &str) -> String {\n        \" \".repeat(self.n - s.len() - 1) + s // BUG: off by one\n    }\n}\n",
		"src/unused.rs", filler("rs", "unused", 40),
		"tests/render.rs", "use fmtlib::render;\n\n#[test]\nfn pads_to_four() {\n    assert_eq!(render(7), \"   7\");\n}\n",
	)
	prompt, ranked := firstPrompt(snap, failing("render::pads_to_four", "tests/render.rs", 5))
	for _, want := range []string{
		"pub fn pad_left(s: &str, n: usize) -> String {\n    Padder::new(n).pad(s)\n}",
		"    pub fn pad(&self, s: &str) -> String {\n        \" \".repeat(self.n - s.len() - 1) + s // BUG: off by one",
	} {
		if !shown(prompt, "src/pad.rs", want) {
			t.Errorf("prompt lacks %q (ranked %q)", want, ranked)
		}
	}
	if slices.Contains(ranked, "src/unused.rs") {
		t.Errorf("ranked %q: includes a module nothing reaches", ranked)
	}
}

// Class 3, Node: a module whose functions are declared per platform under
// if (process.platform === 'win32') { … } else { … }: the branch linux
// takes outweighs the other.
func TestReachPrefersTheNodeBranchLinuxTakes(t *testing.T) {
	mod := "'use strict';\nconst isWindows = process.platform === 'win32';\n\n" +
		"if (isWindows) {\n  function columns() {\n    return winColumns();\n  }\n} else {\n  function columns() {\n    return ttyColumns();\n  }\n}\n\n" +
		"function winColumns() {\n  return 1;\n}\n\nfunction ttyColumns() {\n  return 2;\n}\n\nmodule.exports = function width() {\n  return columns();\n};\n"
	snap := files("package.json", `{"name":"w","main":"index.js"}`, "index.js", mod,
		"test/width.test.js", "const test = require('node:test');\nconst width = require('..');\n\ntest('width', () => {\n  require('node:assert').equal(width(), 80);\n});\n")
	rep := failing("width", "test/width.test.js", 5)
	rc := callReach(snap, []string{"index.js"}, rep, nil)
	w := rc.Decls["index.js"]
	winAt, ttyAt := lineOf(mod, "  function columns() {\n    return win")-1, lineOf(mod, "  function columns() {\n    return tty")-1
	if w[ttyAt] <= w[winAt] || w[winAt] == 0 {
		t.Errorf("weights: linux columns %v, win32 columns %v: want the branch linux takes heavier, the other a share", w[ttyAt], w[winAt])
	}
	if w[lineOf(mod, "function ttyColumns")-1] == 0 || w[lineOf(mod, "function winColumns")-1] != 0 {
		t.Errorf("weights %v: want ttyColumns reached through linux's branch, winColumns not", w)
	}
}

// Class 1, Python, the shape of a large facade module: module functions
// delegate to the same-named methods of a module-level instance; a class
// test's helper asserts on several of them; the bug is four calls down,
// in a static parser behind a cached property, past a hundred methods
// and functions nothing reaches.
func TestContextLongPythonFacadeModule(t *testing.T) {
	mod := "import os\n\n\n" + filler("py", "util_", 40) +
		"def id():\n    return _facade.id()\n\n\n" +
		"def version(pretty=False):\n    return _facade.version(pretty)\n\n\n" +
		filler("py", "api_", 40) +
		"class Facade:\n    def __init__(self, release_file=''):\n        self.release_file = release_file\n\n" +
		filler("pymethod", "m_", 60) +
		"    def id(self):\n        return self.release_attr('id').lower()\n\n" +
		"    def version(self, pretty=False):\n        return self.release_attr('version_id')\n\n" +
		filler("pymethod", "n_", 60) +
		"    def release_attr(self, attribute):\n        return self._release_info.get(attribute, '')\n\n" +
		"    @cached_property\n    def _release_info(self):\n        with open(self.release_file) as f:\n            return self._parse_release_content(f)\n\n" +
		filler("pymethod", "o_", 40) +
		"    @staticmethod\n    def _parse_release_content(lines):\n        props = {}\n        for line in lines:\n            key, _, value = line.partition('=')\n            props[key.lower()] = value  # BUG: quotes kept\n        return props\n\n\n" +
		"_facade = Facade()\n"
	if n := strings.Count(mod, "\n"); n < 2500 {
		t.Fatalf("module has %d lines: the test wants a long one", n)
	}
	test := "import facade\n\n\nclass TestRelease:\n    def _test_outcome(self, outcome):\n        assert self.facade.id() == outcome.get('id', '')\n        assert self.facade.version() == outcome.get('version', '')\n\n" +
		"    def test_quoted_values(self):\n        self.facade = facade.Facade(release_file='x')\n        desired = {'id': 'fedora', 'version': '30'}\n        self._test_outcome(desired)\n"
	snap := files("facade.py", mod, "tests/test_facade.py", test)
	rep := failing("tests/test_facade.py::TestRelease::test_quoted_values", "tests/test_facade.py", 6)
	rep.Tests[0].Frames = []testrun.Frame{{File: "tests/test_facade.py", Line: 12}}
	prompt, ranked := firstPrompt(snap, rep)
	for _, want := range []string{
		"    def release_attr(self, attribute):\n        return self._release_info.get(attribute, '')",
		"            key, _, value = line.partition('=')\n            props[key.lower()] = value  # BUG: quotes kept",
	} {
		if !shown(prompt, "facade.py", want) {
			t.Errorf("prompt lacks %q (ranked %q)", want, ranked)
		}
	}
	if s := sections(prompt); strings.Contains(s, "def m_3(") || strings.Contains(s, "def util_3(") || len(prompt) > 32000 {
		t.Errorf("prompt shows declarations nothing reaches, or is over 32 KB (%d bytes):\n%s", len(prompt), sections(prompt))
	}
}

// A failing case of a table-driven test: the walk passes through the
// helper whose table holds the case's label, not through the other
// helpers' tables (which call half the package's options).
func TestReachFollowsTheFailingCasesTable(t *testing.T) {
	test := "package cmp\n\nimport \"testing\"\n\n" +
		"func reporterTests() []test {\n\treturn []test{{label: \"Reporter/NamedPointer\", opts: Transformer(nil)}}\n}\n\n" +
		"func projectTests() []test {\n\treturn []test{{label: \"Project/Zoo\", opts: Comparer(nil)}}\n}\n\n" +
		"func TestDiff(t *testing.T) {\n\tvar tests []test\n\ttests = append(tests, reporterTests()...)\n\ttests = append(tests, projectTests()...)\n\tfor _, tt := range tests {\n\t\tt.Run(tt.label, func(t *testing.T) {\n\t\t\tDiff(tt.opts)\n\t\t})\n\t}\n}\n"
	snap := files("go.mod", "module example.com/cmp\n",
		"cmp/options.go", "package cmp\n\nfunc Transformer(f any) Option {\n\treturn nil\n}\n\nfunc Comparer(f any) Option {\n\treturn nil\n}\n",
		"cmp/compare.go", "package cmp\n\nfunc Diff(opts ...Option) string {\n\treturn \"\"\n}\n",
		"cmp/compare_test.go", test)
	rep := failing("example.com/cmp/cmp.TestDiff/Reporter/NamedPointer", "cmp/compare_test.go", 18)
	rc := callReach(snap, []string{"cmp/options.go", "cmp/compare.go"}, rep, nil)
	opts := rc.Decls["cmp/options.go"]
	if opts[2] == 0 || opts[6] != 0 {
		t.Errorf("options weights %v: want Transformer (the failing case's table) reached, Comparer (another case's) not", opts)
	}
	if rc.Decls["cmp/compare.go"][2] == 0 {
		t.Error("Diff, which the test body calls, is not reached")
	}
}

// Class 3, Python: a module that imports its implementation per platform
// (if sys.platform == "win32": from ._win import size else: from ._posix
// import size): the module linux loads ranks first and carries the
// weight; the other comes last.
func TestContextRanksTheModuleLinuxImportsFirst(t *testing.T) {
	snap := files(
		"pkg/__init__.py", "",
		"pkg/term.py", "import sys\n\nif sys.platform == 'win32':\n    from ._win import size\nelse:\n    from ._posix import size\n\n\ndef width():\n    return size()[0]\n",
		"pkg/_win.py", "def size():\n    return (1, 1)  # console API\n",
		"pkg/_posix.py", "def size():\n    return (0, 0)  # BUG: ioctl result unused\n",
		"tests/test_term.py", "from pkg.term import width\n\n\ndef test_width():\n    assert width() == 80\n",
	)
	rep := failing("tests/test_term.py::test_width", "tests/test_term.py", 5)
	ranked := contextFiles(snap, &Request{Mode: ModeFix}, rep, allFiles)
	pi, wi := slices.Index(ranked, "pkg/_posix.py"), slices.Index(ranked, "pkg/_win.py")
	if pi < 0 || (wi >= 0 && (wi < pi || wi != len(ranked)-1)) {
		t.Errorf("ranked %q: want _posix.py before _win.py, and _win.py (if at all) last", ranked)
	}
	rc := callReach(snap, []string{"pkg/term.py", "pkg/_win.py", "pkg/_posix.py"}, rep, nil)
	if rc.Files["pkg/_posix.py"] == 0 || rc.Files["pkg/_win.py"] != 0 || rc.Variants["pkg/_win.py"] >= rc.Files["pkg/_posix.py"] {
		t.Errorf("weights %v, variants %v: want _posix.size reached, _win.size only a variant's share", rc.Files, rc.Variants)
	}
}

// Class 1, Python, a recursive-descent parser module: the bug sits six
// calls below the function the test calls, among dozens of parse
// functions and tables nothing on the path uses.
func TestContextLongPythonParserModule(t *testing.T) {
	chain := []string{"loads", "parse_statement", "parse_key_value", "parse_value", "parse_inline_table", "parse_basic_str", "parse_escape"}
	var mod strings.Builder
	mod.WriteString("import re\n\n" + filler("py", "table_helper_", 40))
	for i, name := range chain[:len(chain)-1] {
		fmt.Fprintf(&mod, "def %s(src, pos):\n    pos = skip_ws(src, pos)\n    return %s(src, pos)\n\n\n", name, chain[i+1])
		mod.WriteString(filler("py", fmt.Sprintf("unrelated_%d_", i), 12))
	}
	mod.WriteString("def parse_escape(src, pos):\n    return BASIC_ESCAPES[src[pos]]  # BUG: \\\\e missing\n\n\n")
	mod.WriteString("def skip_ws(src, pos):\n    return pos\n\n\n" + filler("py", "tail_", 30))
	mod.WriteString("BASIC_ESCAPES = {\n    'n': '\\n',\n    't': '\\t',\n}\n")
	snap := files("src/toml/__init__.py", "from ._parser import loads\n", "src/toml/_parser.py", mod.String(),
		"tests/test_strings.py", "import toml\n\n\ndef test_control_char():\n    doc = toml.loads('a = \"\\\\e\"')\n    assert doc == {'a': '\\x1b'}\n")
	prompt, ranked := firstPrompt(snap, failing("tests/test_strings.py::test_control_char", "tests/test_strings.py", 6))
	for _, want := range []string{
		"def parse_escape(src, pos):\n    return BASIC_ESCAPES[src[pos]]  # BUG: \\\\e missing",
		"BASIC_ESCAPES = {\n    'n': '\\n',",
	} {
		if !shown(prompt, "src/toml/_parser.py", want) {
			t.Errorf("prompt lacks %q (ranked %q)", want, ranked)
		}
	}
	if s := sections(prompt); strings.Contains(s, "def tail_3(") || len(prompt) > 32000 {
		t.Errorf("prompt shows declarations nothing reaches, or is over 32 KB (%d bytes)", len(prompt))
	}
}

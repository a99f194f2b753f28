package agent

import (
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Round 6's classes of misses on real bugs, each on a small synthetic
// workspace per language: an edit at a file's first lines (its imports,
// crate attributes) of a file shown as an excerpt (4), a reached function
// longer than the lines a declaration used to show (5), and a helper in
// another module called under another name (an import alias, a renamed
// destructuring, a `use … as`) (6).

// Class 4, Go: the failure reaches a function deep in a long file; the
// excerpt shows the file's header too — package clause, imports, and the
// line after them, where a declaration is added.
func TestContextShowsTheHeaderOfAGoExcerpt(t *testing.T) {
	src := "// Copyright the authors.\n\npackage items\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n)\n\n// Version is the package's version.\nconst Version = \"1\"\n\n" +
		filler("go", "head", 60) +
		"// Lookup finds key.\nfunc Lookup(key string) int {\n\treturn table[strings.ToLower(key)] // BUG\n}\n\n" + filler("go", "tail", 60) +
		"var table = map[string]int{}\n\nvar _ = fmt.Sprint\n"
	test := "package items\n\nimport \"testing\"\n\nfunc TestLookupUpper(t *testing.T) {\n\tif Lookup(\"A\") != 1 {\n\t\tt.Fatal()\n\t}\n}\n"
	snap := files("go.mod", "module example.com/items\n", "items.go", src, "items_test.go", test)
	prompt, _ := firstPrompt(snap, failing("example.com/items.TestLookupUpper", "items_test.go", 7))
	for _, want := range []string{
		"package items\n\nimport (\n\t\"fmt\"\n\t\"strings\"\n)\n\n// Version is the package's version.",
		"func Lookup(key string) int {\n\treturn table[strings.ToLower(key)] // BUG",
	} {
		if !shown(prompt, "items.go", want) {
			t.Errorf("prompt lacks %q:\n%s", want, sections(prompt))
		}
	}
	if strings.Contains(sections(prompt), "func head3(") || !strings.Contains(prompt, "not shown)") {
		t.Errorf("want an excerpt without the declarations nothing reaches:\n%s", sections(prompt))
	}
}

// Class 4, Rust: a crate root whose fix adds an inner attribute at line
// 1; the test reaches a function below a hundred others.
func TestContextShowsTheHeaderOfARustExcerpt(t *testing.T) {
	lib := "//! Similarity metrics.\n\n#![forbid(unsafe_code)]\n#![cfg_attr(\n    docsrs,\n    feature(doc_cfg)\n)]\n\nuse std::cmp::max;\nuse std::collections::{\n    HashMap,\n};\n\nmod util;\n\n" +
		filler("rs", "metric", 80) +
		"pub fn hamming(a: &str, b: &str) -> usize {\n    a.len() - b.len() // BUG\n}\n\n" + filler("rs", "tail", 40)
	snap := files("Cargo.toml", "[package]\nname = \"strsim\"\nversion = \"0.1.0\"\n", "src/lib.rs", lib, "src/util.rs", "pub fn id() {}\n",
		"tests/lib.rs", "use strsim::hamming;\n\n#[test]\nfn hamming_empty() {\n    assert_eq!(hamming(\"\", \"\"), 0);\n}\n")
	prompt, ranked := firstPrompt(snap, failing("hamming_empty", "tests/lib.rs", 5))
	for _, want := range []string{
		"//! Similarity metrics.\n\n#![forbid(unsafe_code)]\n#![cfg_attr(\n    docsrs,\n    feature(doc_cfg)\n)]\n\nuse std::cmp::max;\nuse std::collections::{\n    HashMap,\n};\n\nmod util;",
		"pub fn hamming(a: &str, b: &str) -> usize {\n    a.len() - b.len() // BUG",
	} {
		if !shown(prompt, "src/lib.rs", want) {
			t.Errorf("prompt lacks %q (ranked %q):\n%s", want, ranked, sections(prompt))
		}
	}
	if strings.Contains(sections(prompt), "pub fn metric3(") {
		t.Errorf("prompt shows declarations nothing reaches:\n%s", sections(prompt))
	}
}

// Class 4, TypeScript: a module whose fix edits its import lines; the
// imports run over several lines.
func TestContextShowsTheHeaderOfATypeScriptExcerpt(t *testing.T) {
	src := "import {\n  unsafeStringify,\n  parse,\n} from './stringify.js';\nimport rng from './rng.js';\nconst legacy = require('./legacy');\n\n" +
		strings.ReplaceAll(filler("js", "helper", 70), "function ", "export function ") +
		"export function v1(options) {\n  return unsafeStringify(rng(options)); // BUG\n}\n\n" + filler("js", "tail", 30)
	snap := files("package.json", `{"name":"uuid","main":"src/index.ts"}`, "src/index.ts", "export { v1 } from './v1.js';\n", "src/v1.ts", src,
		"src/stringify.ts", "export function unsafeStringify(a) { return ''; }\nexport function parse(s) { return s; }\n", "src/rng.ts", "export default function rng() { return []; }\n",
		"test/v1.test.ts", "import test from 'node:test';\nimport assert from 'node:assert';\nimport { v1 } from '../src/v1.js';\n\ntest('v1 sequence', () => {\n  assert.equal(v1({}).length, 36);\n});\n")
	prompt, ranked := firstPrompt(snap, failing("v1 sequence", "test/v1.test.ts", 6))
	for _, want := range []string{
		"import {\n  unsafeStringify,\n  parse,\n} from './stringify.js';\nimport rng from './rng.js';\nconst legacy = require('./legacy');",
		"export function v1(options) {\n  return unsafeStringify(rng(options)); // BUG",
	} {
		if !shown(prompt, "src/v1.ts", want) {
			t.Errorf("prompt lacks %q (ranked %q):\n%s", want, ranked, sections(prompt))
		}
	}
	if strings.Contains(sections(prompt), "export function helper3(") {
		t.Errorf("prompt shows declarations nothing reaches:\n%s", sections(prompt))
	}
}

// Class 4, Python: a module's docstring, its imports (a parenthesised
// list, an optional import) and the first line after them.
func TestContextShowsTheHeaderOfAPythonExcerpt(t *testing.T) {
	mod := "#!/usr/bin/env python\n# Licensed under the Apache License.\n\"\"\"\nThe distro module.\n\"\"\"\n\nimport os\nfrom typing import (\n    Any,\n    Dict,\n)\n\ntry:\n    from functools import cached_property\nexcept ImportError:\n    cached_property = property\n\n__version__ = '1.0'\n\n" +
		filler("py", "head_", 60) + "def name():\n    return _read('NAME')  # BUG\n\n\n" + filler("py", "tail_", 40) + "def _read(key):\n    return os.environ.get(key)\n"
	snap := files("distro.py", mod, "tests/test_distro.py", "import distro\n\n\ndef test_name():\n    assert distro.name() == 'x'\n")
	prompt, ranked := firstPrompt(snap, failing("tests/test_distro.py::test_name", "tests/test_distro.py", 5))
	for _, want := range []string{
		"import os\nfrom typing import (\n    Any,\n    Dict,\n)\n\ntry:\n    from functools import cached_property\nexcept ImportError:\n    cached_property = property\n\n__version__ = '1.0'",
		"def name():\n    return _read('NAME')  # BUG",
	} {
		if !shown(prompt, "distro.py", want) {
			t.Errorf("prompt lacks %q (ranked %q):\n%s", want, ranked, sections(prompt))
		}
	}
	if strings.Contains(sections(prompt), "def head_3(") {
		t.Errorf("prompt shows declarations nothing reaches:\n%s", sections(prompt))
	}
}

// Class 5, Go: the function the test calls is 260 lines long, its bug
// near its end; the excerpt shows it whole, not its first 150 lines.
func TestContextShowsALongReachedFunctionWhole(t *testing.T) {
	var body strings.Builder
	for i := range 125 {
		fmt.Fprintf(&body, "\tcase %d:\n\t\tout = append(out, %d)\n", i, i)
	}
	src := "package fmtv\n\n" + filler("go", "head", 50) +
		"// FormatValue formats v.\nfunc FormatValue(v int) []int {\n\tvar out []int\n\tswitch v {\n" + body.String() +
		"\t}\n\tskipType = true // BUG: named pointers lose their type\n\treturn out\n}\n\nvar skipType bool\n\n" + filler("go", "tail", 50)
	test := "package fmtv\n\nimport \"testing\"\n\nfunc TestFormatValue(t *testing.T) {\n\tif got := FormatValue(1); len(got) != 2 {\n\t\tt.Fatal(got)\n\t}\n}\n"
	snap := files("go.mod", "module example.com/fmtv\n", "format.go", src, "format_test.go", test)
	prompt, _ := firstPrompt(snap, failing("example.com/fmtv.TestFormatValue", "format_test.go", 7))
	if !shown(prompt, "format.go", "\t}\n\tskipType = true // BUG: named pointers lose their type\n\treturn out\n}") {
		t.Errorf("prompt lacks the end of the long function:\n%s", sections(prompt))
	}
	if strings.Contains(sections(prompt), "func head3(") || len(prompt) > 32000 {
		t.Errorf("prompt shows declarations nothing reaches or is over 32 KB (%d bytes)", len(prompt))
	}
}

// Class 6, Python: the function the test calls calls a helper of another
// module under the name its import gives it (from ._num import
// parse_digits as _digits), and that helper calls the buggy one in a
// third module, past dozens of functions nothing reaches.
func TestContextFollowsAPythonImportAlias(t *testing.T) {
	snap := files(
		"lexical/__init__.py", "from .api import parse_float\n",
		"lexical/api.py", "from ._num import parse_digits as _digits\n\n"+filler("py", "api_", 30)+"def parse_float(text):\n    return _digits(text.strip())\n",
		"lexical/_num.py", "from ._algorithm import scale as _scale\n\n"+filler("py", "num_", 40)+"def parse_digits(text):\n    return _scale(int(text), len(text))\n",
		"lexical/_algorithm.py", filler("py", "alg_", 40)+"def scale(mantissa, exp):\n    return mantissa * 10 ** (exp - 1)  # BUG: off by one\n\n\n"+filler("py", "alg_more_", 30),
		"lexical/_unused.py", filler("py", "unused_", 30),
		"tests/test_parse.py", "from lexical import parse_float\n\n\ndef test_parse_float_exponent():\n    assert parse_float('12') == 12\n",
	)
	prompt, ranked := firstPrompt(snap, failing("tests/test_parse.py::test_parse_float_exponent", "tests/test_parse.py", 5))
	if !shown(prompt, "lexical/_algorithm.py", "def scale(mantissa, exp):\n    return mantissa * 10 ** (exp - 1)  # BUG: off by one") {
		t.Errorf("prompt lacks scale, called as _scale two modules down (ranked %q)", ranked)
	}
	if strings.Contains(sections(prompt), "def alg_3(") {
		t.Errorf("prompt shows declarations nothing reaches:\n%s", sections(prompt))
	}
}

// Class 6, Node: a destructuring require renames the helper
// (const {padLeft: pad} = require('./pad')), and a re-export renames the
// function the test imports (export {render as format} from).
func TestContextFollowsANodeImportAlias(t *testing.T) {
	snap := files(
		"package.json", `{"name":"fmt","main":"index.js"}`,
		"index.js", "export { render as format } from './lib/render.js';\n",
		"lib/render.js", "const {padLeft: pad} = require('./pad');\n\n"+filler("js", "renderHelper", 30)+"export function render(v) {\n  return pad(String(v), 4);\n}\n",
		"lib/pad.js", filler("js", "padHelper", 50)+"function padLeft(s, n) {\n  return ' '.repeat(n - s.length - 1) + s; // BUG: off by one\n}\n\n"+filler("js", "padMore", 20)+"module.exports = {padLeft};\n",
		"test/format.test.js", "import test from 'node:test';\nimport assert from 'node:assert';\nimport {format} from '../index.js';\n\ntest('pads to four', () => {\n  assert.equal(format(7), '   7');\n});\n",
	)
	prompt, ranked := firstPrompt(snap, failing("pads to four", "test/format.test.js", 6))
	if !shown(prompt, "lib/pad.js", "function padLeft(s, n) {\n  return ' '.repeat(n - s.length - 1) + s; // BUG: off by one\n}") {
		t.Errorf("prompt lacks padLeft, called as pad (ranked %q):\n%s", ranked, sections(prompt))
	}
	if strings.Contains(sections(prompt), "function padHelper3(") {
		t.Errorf("prompt shows declarations nothing reaches:\n%s", sections(prompt))
	}
}

// Class 6, Rust: a module calls another module's helper under the name
// its use declaration gives it (use crate::num::as_u64 as to_int).
func TestContextFollowsARustUseAlias(t *testing.T) {
	snap := files(
		"Cargo.toml", "[package]\nname = \"lexical\"\nversion = \"0.1.0\"\n",
		"src/lib.rs", "mod algorithm;\nmod num;\nmod unused;\n\npub use algorithm::parse_float;\n",
		"src/algorithm.rs", "use crate::num::{as_u64 as to_int, Float};\n\n"+filler("rs", "alg_helper", 40)+"pub fn parse_float(s: &str) -> u64 {\n    to_int(s.len() as u64)\n}\n",
		"src/num.rs", filler("rs", "num_helper", 60)+"pub fn as_u64(n: u64) -> u64 {\n    n - 1 // BUG: off by one\n}\n\npub struct Float;\n\n"+filler("rs", "num_more", 30),
		"src/unused.rs", filler("rs", "unused", 30),
		"tests/parse.rs", "use lexical::parse_float;\n\n#[test]\nfn parses_length() {\n    assert_eq!(parse_float(\"12\"), 2);\n}\n",
	)
	prompt, ranked := firstPrompt(snap, failing("parses_length", "tests/parse.rs", 5))
	if !shown(prompt, "src/num.rs", "pub fn as_u64(n: u64) -> u64 {\n    n - 1 // BUG: off by one\n}") {
		t.Errorf("prompt lacks as_u64, called as to_int (ranked %q):\n%s", ranked, sections(prompt))
	}
	if strings.Contains(sections(prompt), "pub fn num_helper3(") {
		t.Errorf("prompt shows declarations nothing reaches:\n%s", sections(prompt))
	}
}

// Class 6, Go: the failing test calls a helper declared in another test
// file of its package (executeCommand in command_test.go), which calls
// the code under test: the walk passes through it to the function that
// calls the buggy one in another file.
func TestContextFollowsAGoTestHelperInAnotherTestFile(t *testing.T) {
	snap := files(
		"go.mod", "module example.com/cli\n",
		"command.go", "package cli\n\n"+filler("go", "cmdHelper", 60)+"// ExecuteC runs the command.\nfunc (c *Command) ExecuteC() error {\n\treturn c.stripFlags(c.args)\n}\n\n"+filler("go", "cmdMore", 40),
		"flags.go", "package cli\n\n"+filler("go", "flagHelper", 50)+"func (c *Command) stripFlags(args []string) error {\n\treturn nil // BUG: flags after -- kept\n}\n\n"+filler("go", "flagMore", 20),
		"unrelated.go", "package cli\n\n"+filler("go", "other", 40),
		"command_test.go", "package cli\n\nimport \"testing\"\n\nfunc executeCommand(root *Command, args ...string) error {\n\troot.args = args\n\treturn root.ExecuteC()\n}\n\nfunc TestRoot(t *testing.T) {}\n",
		"args_test.go", "package cli\n\nimport \"testing\"\n\nfunc TestArgsAfterDash(t *testing.T) {\n\troot := &Command{}\n\tif err := executeCommand(root, \"--\", \"-x\"); err == nil {\n\t\tt.Fatal(\"want an error\")\n\t}\n}\n",
	)
	prompt, ranked := firstPrompt(snap, failing("example.com/cli.TestArgsAfterDash", "args_test.go", 8))
	if !shown(prompt, "flags.go", "func (c *Command) stripFlags(args []string) error {\n\treturn nil // BUG: flags after -- kept\n}") {
		t.Errorf("prompt lacks stripFlags (ranked %q):\n%s", ranked, sections(prompt))
	}
	if slices.Contains(ranked, "unrelated.go") {
		t.Errorf("ranked %q: includes a file nothing reaches", ranked)
	}
}

// Class 6, Python: the test class's setUp constructs the object whose
// constructor calls the buggy helper; the failing test method only calls
// the object's accessors. The walk starts from setUp too.
func TestContextFollowsTheTestsSetUp(t *testing.T) {
	mod := "import os\n\n\n" + filler("py", "util_", 40) +
		"class Release:\n    def __init__(self, release_file=''):\n        self.release_file = _resolve_path(release_file)\n\n" +
		filler("pymethod", "m_", 50) + "    def name(self):\n        return 'x'\n\n\n" +
		filler("py", "mid_", 40) + "def _resolve_path(p):\n    return os.path.join('/etc', p)  # BUG: absolute paths joined\n\n\n" + filler("py", "tail_", 30)
	test := "import unittest\n\nimport release\n\n\nclass TestOther(unittest.TestCase):\n    def setUp(self):\n        self.other = release.util_1(3)\n\n    def test_other(self):\n        pass\n\n\n" +
		"class TestRelease(unittest.TestCase):\n    def setUp(self):\n        self.dist = release.Release(release_file='/tmp/x')\n\n" +
		"    def test_kept(self):\n        self.assertTrue(self.dist)\n\n    def test_again(self):\n        self.assertTrue(self.dist)\n\n    def test_name(self):\n        self.assertEqual(self.dist.name(), 'Fedora')\n"
	snap := files("release.py", mod, "tests/test_release.py", test)
	prompt, ranked := firstPrompt(snap, failing("tests/test_release.py::TestRelease::test_name", "tests/test_release.py", 26))
	if !shown(prompt, "release.py", "def _resolve_path(p):\n    return os.path.join('/etc', p)  # BUG: absolute paths joined") {
		t.Errorf("prompt lacks _resolve_path, which setUp's constructor calls (ranked %q):\n%s", ranked, sections(prompt))
	}
	if strings.Contains(sections(prompt), "def util_1(") {
		t.Errorf("prompt shows what another class's setUp calls:\n%s", sections(prompt))
	}
}

// Class 6, Node: a describe block's beforeEach builds the parser whose
// constructor calls the buggy helper.
func TestContextFollowsTheTestsBeforeEach(t *testing.T) {
	src := "'use strict';\n\n" + filler("js", "head", 40) +
		"class Parser {\n  constructor(opts) {\n    this.delim = normalizeDelim(opts.delim);\n  }\n\n  parse(s) {\n    return s.split(this.delim);\n  }\n}\n\n" +
		filler("js", "mid", 40) + "function normalizeDelim(d) {\n  return d || ';'; // BUG: wrong fallback\n}\n\n" + filler("js", "tail", 30) + "module.exports = {Parser, head1};\n"
	test := "const assert = require('node:assert');\nconst {Parser, head1} = require('..');\n\ndescribe('other', () => {\n  beforeEach(() => {\n    head1(2);\n  });\n});\n\n" +
		"describe('parse', () => {\n  let p;\n  beforeEach(() => {\n    p = new Parser({});\n  });\n\n  it('keeps', () => {\n    assert.ok(p);\n  });\n\n  it('keeps again', () => {\n    assert.ok(p);\n  });\n\n  it('splits on commas by default', () => {\n    assert.deepEqual(p.parse('a,b'), ['a', 'b']);\n  });\n});\n"
	snap := files("package.json", `{"name":"csv","main":"index.js"}`, "index.js", src, "test/parse.test.js", test)
	prompt, ranked := firstPrompt(snap, failing("parse splits on commas by default", "test/parse.test.js", 25))

	if !shown(prompt, "index.js", "function normalizeDelim(d) {\n  return d || ';'; // BUG: wrong fallback\n}") {
		t.Errorf("prompt lacks normalizeDelim, which beforeEach's constructor calls (ranked %q):\n%s", ranked, sections(prompt))
	}
	if strings.Contains(sections(prompt), "function head1(") {
		t.Errorf("prompt shows what another block's beforeEach calls:\n%s", sections(prompt))
	}
}

// A long package doc comment above the imports: the header an excerpt
// shows keeps to a fifth of its room, its last lines (the package clause
// and the imports), not the top of the comment.
func TestHeaderLinesKeepTheImportsOfALongHeader(t *testing.T) {
	src := strings.Repeat("// The package does many things, described at length here.\n", 50) +
		"package w\n\nimport (\n\t\"os\"\n)\n\nfunc f() {}\n"
	ls := strings.SplitAfter(src, "\n")
	from, to, ok := headerLines(ls, 55, 600)
	if !ok || ls[to] != "func f() {}\n" || ls[55-1] != ")\n" {
		t.Fatalf("headerLines = %d, %d, %v: want the header through the line after it", from, to, ok)
	}
	size := 0
	for i := from; i <= to; i++ {
		size += len(ls[i])
	}
	if size > 600 || from < 40 {
		t.Errorf("header shown from line %d (%d bytes): want its last lines within 600 bytes", from+1, size)
	}
}

// An excerpt whose core (what the failure names) fills its room shows
// that core, not the header: the header is added only when it fits, so
// the cut at the room's end never falls on the named code.
func TestExcerptHeaderYieldsToTheCore(t *testing.T) {
	src := "package w\n\nimport (\n" + strings.Repeat("\t\"example.com/some/long/import/path\"\n", 20) + ")\n\n" +
		filler("go", "skip", 30) + "func handleEvent(name string) {\n" + strings.Repeat("\tname = strings.TrimSpace(name) // named work\n", 40) + "\tif strings.HasPrefix(w.path, name) { // BUG\n\t}\n}\n"
	core, ok := excerptOf(src, 0, nil, map[string]bool{"handleEvent": true}, nil, nil, 100000)
	if !ok {
		t.Fatal("no excerpt")
	}
	ex, _ := excerptOf(src, 23, nil, map[string]bool{"handleEvent": true}, nil, nil, len(core)+200)
	if !strings.Contains(ex, "if strings.HasPrefix(w.path, name) { // BUG") {
		t.Errorf("the header pushed the named code out of the excerpt:\n%s", ex)
	}
	if whole, _ := excerptOf(src, 23, nil, map[string]bool{"handleEvent": true}, nil, nil, 100000); !strings.Contains(whole, "import (\n") {
		t.Errorf("with room, the excerpt lacks the header:\n%s", whole)
	}
}

package node

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/langtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// libJS: used at line 2, unused 5, arrow 8, K.method 10, onlyOther 13.
const libJS = `'use strict';
function used(a) {
  return a + 1;
}
function unused(a) {
  return a - 1;
}
const arrow = (x) => used(x) * 2;
class K {
  method() { return 3; }
}

function onlyOther() { return unused(2); }
module.exports = { used, unused, arrow, K, onlyOther };
`

// traceProject: test/a.test.js fails (arrow -> used, and an ESM import
// of em); test/b.test.js passes and runs onlyOther -> unused and never,
// which node --test runs in a process of its own that the trace leaves
// out. bom.js starts with a BOM, which node strips before V8 sees the
// text: b's offset is one less than in the file, and mapped without the
// shift it would land on line 1.
func traceProject(pkgJSON string) map[string]string {
	return map[string]string{
		"package.json": pkgJSON,
		"lib.js":       libJS,
		"esm.mjs":      "export function em(x) { return x; }\nexport function never() { return 0; }\n",
		"bom.js":       "\ufeff'use strict';\nfunction b() {\n  return 1;\n}\nexports.b = b;\n",
		"test/a.test.js": `const test = require('node:test');
const assert = require('node:assert');
const { arrow } = require('../lib.js');
const { b } = require('../bom.js');
test('fails', async () => {
  const { em } = await import('../esm.mjs');
  em(b());
  assert.strictEqual(arrow(1), 5);
});
`,
		"test/b.test.js": `const test = require('node:test');
const { onlyOther } = require('../lib.js');
test('other', async () => {
  const { never } = await import('../esm.mjs');
  never();
  onlyOther();
});
`,
	}
}

func TestTraceNodeTest(t *testing.T) {
	// docker runs the two shapes of wrapped command (flags in the
	// arguments, flags in NODE_OPTIONS) and skips the third, to keep the
	// test's cost down; bwrap runs all three.
	for _, tt := range []struct {
		name, pkg, runner string
		docker            bool
	}{
		{name: "no script", pkg: `{"name":"p","version":"1.0.0"}`, runner: testrun.RunnerNode, docker: true},
		{name: "npm test script", pkg: `{"name":"p","version":"1.0.0","scripts":{"test":"node --test"}}`, runner: testrun.RunnerNPM},
		{name: "npm test script with a directory", pkg: `{"name":"p","version":"1.0.0","scripts":{"test":"node --test test/"}}`, runner: testrun.RunnerNPM, docker: true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := traceProject(tt.pkg)
			r := Language{}.TestCommand(langtest.SnapOf(files))
			if r.Name != tt.runner {
				t.Fatalf("TestCommand = %q %q, want runner %q", r.Name, r.Args, tt.runner)
			}
			backends := langtest.Backends("fixpoint-sandbox-node")
			if !tt.docker {
				backends = backends[:1]
			}
			for _, b := range backends {
				t.Run(b.Name, func(t *testing.T) {
					got := langtest.RunTraced(t, b, Language{}, files, r)
					if f := got.Baseline.Failures(); len(f) != 1 || f[0].Package != "test/a.test.js" {
						t.Fatalf("baseline failures = %+v, want the one of test/a.test.js", f)
					}
					want := map[string][]int{"lib.js": {2, 8}, "esm.mjs": {1}, "bom.js": {2}, "test/a.test.js": {5}}
					not := map[string][]int{"lib.js": {5, 10, 13}, "esm.mjs": {2}}
					for f, lines := range want {
						for _, l := range lines {
							if !langtest.HasLine(got.Trace[f], l) {
								t.Errorf("trace of %s = %v, want a span at line %d", f, got.Trace[f], l)
							}
						}
					}
					for f, lines := range not {
						for _, l := range lines {
							if langtest.HasLine(got.Trace[f], l) {
								t.Errorf("trace of %s = %v, want none at line %d (run by the passing file only, or never)", f, got.Trace[f], l)
							}
						}
					}
					if s := got.Trace["lib.js"]; len(s) > 0 && s[0].Count < 1 {
						t.Errorf("trace of lib.js = %v, want call counts", s)
					}
					if _, ok := got.Trace["test/b.test.js"]; ok {
						t.Errorf("trace holds test/b.test.js, whose process ran no failing test: %v", got.Trace)
					}
					for _, f := range got.Workspace {
						if _, ok := files[f]; !ok && f != lang.TracePath {
							t.Errorf("the traced run left %s in the workspace", f)
						}
					}
					t.Logf("selected run %v, traced %v", got.Untraced, got.TracedWall)
				})
			}
		})
	}
}

// node --test, ava and mocha are traced with V8's coverage, jest and
// vitest with their own, a mocha that loads a transform through c8; not
// scripts fixpoint cannot read; a node --test failure without a test
// file keeps every process; a composed script's runner step runs alone.
func TestTraceTestsRunners(t *testing.T) {
	failed := []testrun.Result{{ID: "test/a.test.js > fails", Package: "test/a.test.js", Status: testrun.StatusFail}}
	for _, tt := range []struct {
		name  string
		pkg   string
		extra map[string]string
		tests []testrun.Result
		want  string // "v8", "istanbul", "c8" or "" (not traced)
	}{
		{name: "node --test", pkg: `{}`, tests: failed, want: "v8"},
		{name: "npm node --test", pkg: `{"scripts":{"test":"node --test"}}`, tests: failed, want: "v8"},
		{name: "no failing tests", pkg: `{}`, tests: nil},
		{name: "a failure without a file", pkg: `{}`, tests: []testrun.Result{{ID: "fails", Status: testrun.StatusFail}}, want: "v8 all"},
		{name: "a file outside the workspace", pkg: `{}`, tests: []testrun.Result{{ID: "x", Package: "../x.test.js"}}},
		{name: "jest", pkg: `{"scripts":{"test":"jest"},"devDependencies":{"jest":"29"}}`, tests: failed, want: "istanbul"},
		{name: "jest without a test file", pkg: `{"scripts":{"test":"jest"},"devDependencies":{"jest":"29"}}`, tests: []testrun.Result{{ID: "fails"}}},
		{name: "vitest", pkg: `{"scripts":{"test":"vitest"},"devDependencies":{"vitest":"1"}}`, tests: failed, want: "istanbul"},
		{name: "mocha", pkg: `{"scripts":{"test":"mocha"},"devDependencies":{"mocha":"10"}}`, tests: failed, want: "v8"},
		{name: "mocha with ts-node in the script", pkg: `{"scripts":{"test":"mocha -r ts-node/register"},"devDependencies":{"mocha":"10","ts-node":"10"}}`, tests: failed, want: "c8"},
		{name: "mocha with @babel/register in .mocharc", pkg: `{"scripts":{"test":"mocha"},"devDependencies":{"mocha":"10"}}`, extra: map[string]string{".mocharc.yml": "require:\n  - '@babel/register'\n"}, tests: failed, want: "c8"},
		{name: "mocha with tsx as a loader", pkg: `{"scripts":{"test":"mocha"},"devDependencies":{"mocha":"10"},"mocha":{"node-option":["import=tsx"]}}`, tests: failed, want: "c8"},
		{name: "mocha's failing hook", pkg: `{"scripts":{"test":"mocha"},"devDependencies":{"mocha":"10"}}`, tests: []testrun.Result{{ID: `t.js > s "before each" hook for "x"`, Package: "t.js", Status: testrun.StatusError}}},
		{name: "ava", pkg: `{"scripts":{"test":"ava"},"devDependencies":{"ava":"6"}}`, tests: []testrun.Result{{ID: "math › adds", Name: "math › adds"}}, want: "v8"},
		{name: "tape", pkg: `{"scripts":{"test":"tape test/*.js"}}`, tests: failed, want: "step"},
		{name: "unknown script", pkg: `{"scripts":{"test":"ts-scripts test"}}`, tests: failed},
		{name: "composed node --test", pkg: `{"scripts":{"test":"node --test | tap-spec"}}`, tests: failed},
		{name: "nyc around mocha", pkg: `{"scripts":{"test":"nyc mocha"},"devDependencies":{"mocha":"10","nyc":"15"}}`, tests: failed, want: "step"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			files := map[string]string{"package.json": tt.pkg}
			for k, v := range tt.extra {
				files[k] = v
			}
			r := nodeRunner([]byte(tt.pkg))
			got, ok := Language{}.TraceTests(langtest.SnapOf(files), r, tt.tests)
			if ok != (tt.want != "") {
				t.Fatalf("TraceTests(%q) ok = %v, want %v", r.Args, ok, tt.want != "")
			}
			if !ok {
				if got.TracePath != "" || !slices.Equal(got.Args, r.Args) {
					t.Errorf("TraceTests(%q) = %q with trace %q, want r unchanged", r.Args, got.Args, got.TracePath)
				}
				return
			}
			sel, narrowed := Language{}.SelectTests(r, tt.tests)
			if !narrowed {
				sel = r
			}
			var wantArgs []string
			switch tt.want {
			case "step":
				if got.TracePath != lang.TracePath || !slices.Contains(got.Args, stepExec) || got.ReportPath != "" {
					t.Errorf("TraceTests(%q) = %q, want the script's runner step run through stepExec, traced", r.Args, got.Args)
				}
				return
			case "v8", "v8 all":
				list := `["test/a.test.js"]`
				if !nodeTestRunner(r) || tt.want == "v8 all" {
					list = "[]" // ava's TAP names no file; mocha runs all in one process
				}
				wantArgs = append([]string{"sh", "-c", coverageWrap, "sh", mergeScript, lang.TracePath, list}, sel.Args...)
			case "istanbul":
				wantArgs = append([]string{"sh", "-c", istanbulWrap, "sh", r.Name, lang.TracePath, istanbulStore}, sel.Args...)
			case "c8":
				wantArgs = append([]string{"sh", "-c", c8OrV8, "sh", istanbulWrap, istanbulStore, coverageWrap, mergeScript, lang.TracePath, "[]"}, sel.Args...)
			}
			if got.TracePath != lang.TracePath || !slices.Equal(got.Args, wantArgs) ||
				!slices.Equal(got.Env, r.Env) || got.ReportPath != r.ReportPath {
				t.Errorf("TraceTests(%q) = %q, want %q, with r's env and report", r.Args, got.Args, wantArgs)
			}
		})
	}
}

// mergeScript keeps only what it can map: file:// scripts under the
// working directory, outside node_modules, whose top-level range spans
// the file on disk exactly (a transformed or wrapped source does not),
// from processes that loaded a listed test file; called functions only.
func TestMergeScript(t *testing.T) {
	sandboxtest.RequireCommand(t, "node")
	root := t.TempDir()
	outside := t.TempDir()
	write := func(dir, rel, text string) {
		t.Helper()
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	lib := "function a() {}\nfunction b() {}\n" // a at 0, b at 16; 32 long
	write(root, "lib.js", lib)
	write(root, "ts.ts", lib) // its coverage claims a longer (transpiled) text
	write(root, "node_modules/dep/i.js", lib)
	write(root, "test/t.test.js", "x\n")
	write(root, "test/other.test.js", "x\n")
	write(outside, "o.js", lib)
	script := func(p string, end int, fns ...[3]int) map[string]any {
		list := []any{map[string]any{"functionName": "", "ranges": []any{map[string]any{"startOffset": 0, "endOffset": end, "count": 1}}}}
		for _, f := range fns {
			list = append(list, map[string]any{"functionName": "f", "ranges": []any{map[string]any{"startOffset": f[0], "endOffset": f[1], "count": f[2]}}})
		}
		return map[string]any{"url": "file://" + p, "functions": list}
	}
	cov := t.TempDir()
	dump := func(name string, scripts ...map[string]any) {
		t.Helper()
		data, err := json.Marshal(map[string]any{"result": scripts})
		if err != nil {
			t.Fatal(err)
		}
		write(cov, name, string(data))
	}
	dump("coverage-1-1-0.json",
		script(filepath.Join(root, "test/t.test.js"), 2),
		script(filepath.Join(root, "lib.js"), len(lib), [3]int{0, 15, 2}, [3]int{16, 31, 0}, [3]int{-5, 3, 1}, [3]int{900, 901, 1}),
		script(filepath.Join(root, "ts.ts"), len(lib)+40, [3]int{0, 15, 1}),
		script(filepath.Join(root, "node_modules/dep/i.js"), len(lib), [3]int{0, 15, 1}),
		script(filepath.Join(outside, "o.js"), len(lib), [3]int{0, 15, 1}),
		map[string]any{"url": "node:internal/x", "functions": []any{}},
		map[string]any{"url": 42})
	dump("coverage-2-1-0.json", // a passing file's process
		script(filepath.Join(root, "test/other.test.js"), 2),
		script(filepath.Join(root, "lib.js"), len(lib), [3]int{16, 31, 5}))
	dump("coverage-3-1-0.json", script(filepath.Join(root, "test/t.test.js"), 2), script(filepath.Join(root, "lib.js"), len(lib), [3]int{0, 15, 1}))
	write(cov, "coverage-4-1-0.json", "{not json")
	write(cov, "other.json", `{"result":[]}`)
	cmd := exec.CommandContext(t.Context(), "node", "-e", mergeScript, cov, lang.TracePath, `["test/t.test.js"]`)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil || len(out) > 0 {
		t.Fatalf("merge: %v, printed %q", err, out)
	}
	data, err := os.ReadFile(filepath.Join(root, lang.TracePath))
	if err != nil {
		t.Fatal(err)
	}
	const want = `{"files":{"lib.js":[[1,1,3]]}}`
	if string(data) != want {
		t.Errorf("merged trace = %s, want %s", data, want)
	}
}

package node

import (
	"cmp"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/langtest"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// npmFixture is node_modules with pkgs installed (exact versions), from
// the npm registry into a cache directory the first time and reused after
// (npm install --ignore-scripts: no package code runs on the host). The
// snapshot holds the tree's regular files with their modes and its
// symlinks (node_modules/.bin).
func npmFixture(t *testing.T, pkgs ...string) map[string]sandbox.File {
	t.Helper()
	npm := sandboxtest.RequireCommand(t, "npm")
	base, err := os.UserCacheDir()
	if err != nil {
		base = os.TempDir()
	}
	dir := filepath.Join(base, "fixpoint-test", fmt.Sprintf("npm-%x", sha256.Sum256([]byte(strings.Join(pkgs, " "))))[:len("npm-")+16])
	done := filepath.Join(dir, ".installed")
	if _, err := os.Stat(done); err != nil {
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"name":"fixture","version":"1.0.0","private":true}`), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(t.Context(), npm, append([]string{"install", "--ignore-scripts", "--no-audit", "--no-fund", "--no-package-lock", "--no-save"}, pkgs...)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("npm install %s in %s (the fixture's packages, from the npm registry): %v\n%s", pkgs, dir, err, out)
		}
		if err := os.WriteFile(done, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]sandbox.File{}
	root := filepath.Join(dir, "node_modules")
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		rel = filepath.ToSlash(rel)
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			files[rel] = sandbox.File{Link: target}
		case d.Type().IsRegular():
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			info, err := d.Info()
			if err != nil {
				return err
			}
			files[rel] = sandbox.File{Data: data, Mode: info.Mode().Perm()}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// chainJS: a failing test calls outer (lib/outer.js), which calls inner
// (lib/inner.js, line 3, body line 4); unusedInner (lines 7-8) never
// runs; lib/other.js runs only in a passing test.
var chainJS = map[string]string{
	"lib/inner.js": "'use strict';\n\nfunction inner(x) {\n  return x * 2;\n}\n\nfunction unusedInner() {\n  return 0;\n}\nmodule.exports = { inner, unusedInner };\n",
	"lib/outer.js": "'use strict';\nconst { inner } = require('./inner');\nfunction outer(x) {\n  return inner(x) + 1;\n}\nmodule.exports = { outer };\n",
	"lib/other.js": "'use strict';\nfunction other() {\n  return 42;\n}\nmodule.exports = { other };\n",
}

// chainESM is chainJS as ES modules (vitest).
var chainESM = map[string]string{
	"lib/inner.js": "\n\nexport function inner(x) {\n  return x * 2;\n}\n\nexport function unusedInner() {\n  return 0;\n}\n",
	"lib/outer.js": "import { inner } from './inner.js';\n\nexport function outer(x) {\n  return inner(x) + 1;\n}\n",
	"lib/other.js": "\nexport function other() {\n  return 42;\n}\n",
}

// chainTS is chainJS in TypeScript (mocha through tsx), lines alike.
var chainTS = map[string]string{
	"lib/inner.ts": "// inner doubles\n\nexport function inner(x: number): number {\n  return x * 2;\n}\n\nexport function unusedInner(): number {\n  return 0;\n}\n",
	"lib/outer.ts": "import { inner } from './inner';\n\nexport function outer(x: number): number {\n  return inner(x) + 1;\n}\n",
	"lib/other.ts": "\nexport function other(): number {\n  return 42;\n}\n",
}

// durations are output lines that differ from run to run with the
// machine's load, traced or not: jest's and vitest's timings, and the
// slow tests they time.
const durations = `^\s*Time:|[0-9] ?m?s\b|[0-9]ms\)`

// TestTraceRunners runs jest, vitest and mocha (installed from the npm
// registry into a test cache) on chainJS in the sandboxes: the trace
// names the file the failing test reaches through a call chain, with the
// called function's lines, and not the function that did not run nor the
// file only a passing test runs.
func TestTraceRunners(t *testing.T) {
	for _, tt := range []struct {
		name, variant string
		ext           string // of the sources and tests: ".js" unless set
		pkgs          []string
		pkg           string
		lib           map[string]string
		// test files: a fails, b passes
		a, b string
		// coverage settings (thresholds, reporters) a traced run must not
		// trip over
		extra     map[string]string
		noise     string // lines the traced run adds (langtest.RunTracedSnap)
		bwrapOnly bool   // bwrap only, to keep the test's cost down
	}{
		{
			name: "jest", pkgs: []string{"jest@29.7.0"},
			pkg: `{"name":"p","version":"1.0.0","scripts":{"test":"jest"},"devDependencies":{"jest":"29.7.0"},"jest":{"coverageThreshold":{"global":{"lines":100}},"coverageReporters":["text","html"]}}`,
			lib: chainJS,
			a:   "const { outer } = require('../lib/outer');\ndescribe('outer', () => {\n  test('doubles', () => {\n    expect(outer(2)).toBe(4);\n  });\n});\n",
			b:   "const { other } = require('../lib/other');\ntest('other', () => {\n  expect(other()).toBe(42);\n});\n",
			// jest adds ", estimated N s" to its time once its cache has a
			// run's timing, traced or not; durations come and go with load
			noise: durations,
		},
		{
			// jest's V8 coverage (v8-to-istanbul's line maps) instead of babel's
			name: "jest", variant: "coverageProvider v8", pkgs: []string{"jest@29.7.0"},
			pkg:       `{"name":"p","version":"1.0.0","scripts":{"test":"jest"},"devDependencies":{"jest":"29.7.0"},"jest":{"coverageProvider":"v8"}}`,
			lib:       chainJS,
			a:         "const { outer } = require('../lib/outer');\ndescribe('outer', () => {\n  test('doubles', () => {\n    expect(outer(2)).toBe(4);\n  });\n});\n",
			b:         "const { other } = require('../lib/other');\ntest('other', () => {\n  expect(other()).toBe(42);\n});\n",
			noise:     durations,
			bwrapOnly: true,
		},
		{
			// jest 27's v8 coverage maps through source-map 0.7 (0.7.3 as
			// lockfiles of its time pin it), which fails on node 18+
			// unless fetch is off (istanbulWrap)
			name: "jest", variant: "27 coverageProvider v8", pkgs: []string{"jest@27.5.1", "source-map@0.7.3"},
			pkg:   `{"name":"p","version":"1.0.0","scripts":{"test":"jest"},"devDependencies":{"jest":"27.5.1"},"jest":{"coverageProvider":"v8","testEnvironment":"node"}}`,
			lib:   chainJS,
			a:     "const { outer } = require('../lib/outer');\ndescribe('outer', () => {\n  test('doubles', () => {\n    expect(outer(2)).toBe(4);\n  });\n});\n",
			b:     "const { other } = require('../lib/other');\ntest('other', () => {\n  expect(other()).toBe(42);\n});\n",
			noise: durations,
		},
		{
			name: "vitest", pkgs: []string{"vitest@1.6.1", "@vitest/coverage-v8@1.6.1"},
			pkg:   `{"name":"p","version":"1.0.0","type":"module","scripts":{"test":"vitest"},"devDependencies":{"vitest":"1.6.1","@vitest/coverage-v8":"1.6.1"}}`,
			lib:   chainESM,
			a:     "import { test, expect, describe } from 'vitest';\nimport { outer } from '../lib/outer.js';\ndescribe('outer', () => {\n  test('doubles', () => {\n    expect(outer(2)).toBe(4);\n  });\n});\n",
			b:     "import { test, expect } from 'vitest';\nimport { other } from '../lib/other.js';\ntest('other', () => {\n  expect(other()).toBe(42);\n});\n",
			extra: map[string]string{"vitest.config.js": "export default { test: { coverage: { reporter: ['text'], thresholds: { lines: 100 } } } };\n"},
			noise: durations + `|^\s*$|Coverage enabled with|Coverage report from|does not meet (global )?threshold`,
		},
		{
			name: "mocha", pkgs: []string{"mocha@10.8.2"},
			pkg: `{"name":"p","version":"1.0.0","scripts":{"test":"mocha"},"devDependencies":{"mocha":"10.8.2"}}`,
			lib: chainJS,
			a:   "const assert = require('assert');\nconst { outer } = require('../lib/outer');\ndescribe('outer', () => {\n  it('doubles', () => {\n    assert.strictEqual(outer(2), 4);\n  });\n  it('is a number', () => {\n    assert.strictEqual(typeof outer(1), 'number');\n  });\n});\n",
			b:   "const assert = require('assert');\nconst { other } = require('../lib/other');\nit('other', () => {\n  assert.strictEqual(other(), 42);\n});\n",
		},
		{
			// a transform: traced through the project's c8, which maps
			// V8's coverage back through tsx's source maps
			name: "mocha", variant: "tsx with c8", ext: ".ts", pkgs: []string{"mocha@10.8.2", "c8@10.1.3", "tsx@4.19.2"},
			pkg:   `{"name":"p","version":"1.0.0","scripts":{"test":"mocha"},"devDependencies":{"mocha":"10.8.2","c8":"10.1.3","tsx":"4.19.2"}}`,
			lib:   chainTS,
			a:     "import assert from 'assert';\nimport { outer } from '../lib/outer';\ndescribe('outer', () => {\n  it('doubles', () => {\n    assert.strictEqual(outer(2), 4);\n  });\n  it('is a number', () => {\n    assert.strictEqual(typeof outer(1), 'number');\n  });\n});\n",
			b:     "import assert from 'assert';\nimport { other } from '../lib/other';\nit('other', () => {\n  assert.strictEqual(other(), 42);\n});\n",
			extra: map[string]string{".mocharc.json": `{"require": ["tsx/cjs"], "extension": ["ts"], "spec": ["test/**/*.test.ts"]}`},
		},
	} {
		t.Run(strings.TrimSpace(tt.name+" "+tt.variant), func(t *testing.T) {
			ext := cmp.Or(tt.ext, ".js")
			files := map[string]string{"package.json": tt.pkg, "test/a.test" + ext: tt.a, "test/b.test" + ext: tt.b}
			for k, v := range tt.lib {
				files[k] = v
			}
			for k, v := range tt.extra {
				files[k] = v
			}
			snap := langtest.SnapOf(files)
			for k, f := range npmFixture(t, tt.pkgs...) {
				snap.Files[k] = f
			}
			r := Language{}.TestCommand(snap)
			if r.Name != tt.name {
				t.Fatalf("TestCommand = %q %q, want runner %q", r.Name, r.Args, tt.name)
			}
			backends := langtest.Backends("fixpoint-sandbox-node")
			if tt.bwrapOnly {
				backends = backends[:1]
			}
			for _, b := range backends {
				t.Run(b.Name, func(t *testing.T) {
					var noise *regexp.Regexp
					if tt.noise != "" {
						noise = regexp.MustCompile(tt.noise)
					}
					got := langtest.RunTracedSnap(t, b, Language{}, snap, r, noise)
					if f := got.Baseline.Failures(); len(f) != 1 || f[0].Package != "test/a.test"+ext {
						t.Fatalf("baseline failures = %+v, want the one of test/a.test.js", f)
					}
					if !langtest.HasLine(got.Trace["lib/inner"+ext], 3) && !langtest.HasLine(got.Trace["lib/inner"+ext], 4) {
						t.Errorf("trace of lib/inner.js = %v, want inner's lines (3-4); trace %v", got.Trace["lib/inner"+ext], got.Trace)
					}
					for _, l := range []int{7, 8} {
						if langtest.HasLine(got.Trace["lib/inner"+ext], l) {
							t.Errorf("trace of lib/inner.js = %v, want nothing at line %d (unusedInner never runs)", got.Trace["lib/inner"+ext], l)
						}
					}
					if !langtest.HasLine(got.Trace["lib/outer"+ext], 3) && !langtest.HasLine(got.Trace["lib/outer"+ext], 4) {
						t.Errorf("trace of lib/outer.js = %v, want outer's lines", got.Trace["lib/outer"+ext])
					}
					if tt.name == "mocha" && langtest.HasLine(got.Trace["test/a.test"+ext], 7) {
						t.Errorf("trace of test/a.test.js = %v, want nothing at line 7 (a passing test of the failing file, left out by --grep)", got.Trace["test/a.test"+ext])
					}
					if s, ok := got.Trace["lib/other"+ext]; ok {
						t.Errorf("trace holds lib/other.js %v, which only a passing test runs", s)
					}
					for f := range got.Trace {
						if strings.HasPrefix(f, "node_modules/") {
							t.Errorf("trace holds %s", f)
						}
					}
					for _, f := range got.Workspace {
						if _, ok := snap.Files[f]; !ok && f != lang.TracePath && f != r.ReportPath && !strings.HasPrefix(f, "node_modules/") {
							t.Errorf("the traced run left %s in the workspace", f)
						}
					}
					t.Logf("trace %v; selected run %v, traced %v", got.Trace, got.Untraced, got.TracedWall)
				})
			}
		})
	}
}

// vitest's coverage needs a provider package: without one installed the
// traced runner runs the failing test file as it is (same results) and
// writes no trace, and nothing is installed.
func TestTraceVitestWithoutProvider(t *testing.T) {
	files := map[string]string{
		"package.json":   `{"name":"p","version":"1.0.0","type":"module","scripts":{"test":"vitest"},"devDependencies":{"vitest":"1.6.1"}}`,
		"test/a.test.js": "import { test, expect } from 'vitest';\nimport { outer } from '../lib/outer.js';\ntest('doubles', () => {\n  expect(outer(2)).toBe(4);\n});\n",
	}
	for k, v := range chainESM {
		files[k] = v
	}
	snap := langtest.SnapOf(files)
	for k, f := range npmFixture(t, "vitest@1.6.1", "@vitest/coverage-v8@1.6.1") {
		if !strings.HasPrefix(k, "node_modules/@vitest/coverage-") {
			snap.Files[k] = f
		}
	}
	r := Language{}.TestCommand(snap)
	sess := langtest.Backends("fixpoint-sandbox-node")[0].Start(t)
	if _, err := sess.Sync(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	run := func(r testrun.Runner) *testrun.Report {
		t.Helper()
		rep, err := testrun.Run(t.Context(), sess, r, sandbox.Limits{Timeout: 5 * time.Minute}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return rep
	}
	base := run(r)
	failed := base.Failures()
	if len(failed) != 1 {
		t.Fatalf("baseline failures = %+v, want one; output:\n%s", failed, base.Output)
	}
	traced, ok := Language{}.TraceTests(snap, r, failed)
	if !ok {
		t.Fatalf("TraceTests(%q) = false, want the wrapped runner (the provider is looked for in the sandbox)", r.Args)
	}
	got := run(traced)
	if got.Trace != nil {
		t.Errorf("traced run without a coverage provider wrote a trace: %.200s", got.Trace.Data)
	}
	if f := got.Failures(); len(f) != 1 || f[0].ID != failed[0].ID || got.ExitCode != base.ExitCode {
		t.Errorf("traced run: exit %d, failures %+v; want exit %d and %q", got.ExitCode, f, base.ExitCode, failed[0].ID)
	}
	if strings.Contains(got.Output, "coverage") {
		t.Errorf("traced run without a provider mentions coverage:\n%s", got.Output)
	}
}

// TestTraceSteps runs composed test scripts (a linter or another npm
// script around the runner, the runner first) on real runners installed
// from the npm registry: the baseline runs the whole script, and the
// traced run only its runner step (step.go), narrowed to the failing test
// where the runner narrows, and traces the code that test reaches.
func TestTraceSteps(t *testing.T) {
	tapeTest := func(body string) string {
		return "'use strict';\nconst test = require('tape');\n" + body
	}
	for _, tt := range []struct {
		name  string
		pkgs  []string
		pkg   string
		ext   string
		lib   map[string]string
		a, b  string
		extra map[string]string
		// narrowed: the traced run runs the failing test alone; else
		// every test of the step runs (tape: lib/other's test too)
		narrowed bool
	}{
		{
			name: "tape after a linter", pkgs: []string{"tape@5.9.0"},
			pkg: `{"name":"p","version":"1.0.0","scripts":{"test":"node -e 0 && tape test/*.js"},"devDependencies":{"tape":"5.9.0"}}`,
			lib: chainJS,
			a:   tapeTest("const { outer } = require('../lib/outer');\ntest('doubles', (t) => {\n  t.equal(outer(2), 4);\n  t.end();\n});\n"),
			b:   tapeTest("const { other } = require('../lib/other');\ntest('other', (t) => {\n  t.equal(other(), 42);\n  t.end();\n});\n"),
		},
		{
			// the transform's source maps, without c8 (mergeScript)
			name: "mocha through npm run, tsx without c8", pkgs: []string{"mocha@10.8.2", "tsx@4.19.2"}, ext: ".ts",
			pkg:      `{"name":"p","version":"1.0.0","scripts":{"test":"npm run unit && npm run lint","unit":"mocha","lint":"node -e 0"},"devDependencies":{"mocha":"10.8.2","tsx":"4.19.2"}}`,
			lib:      chainTS,
			a:        "import assert from 'assert';\nimport { outer } from '../lib/outer';\ndescribe('outer', () => {\n  it('doubles', () => {\n    assert.strictEqual(outer(2), 4);\n  });\n  it('is a number', () => {\n    assert.strictEqual(typeof outer(1), 'number');\n  });\n});\n",
			b:        "import assert from 'assert';\nimport { other } from '../lib/other';\nit('other', () => {\n  assert.strictEqual(other(), 42);\n});\n",
			extra:    map[string]string{".mocharc.json": `{"require": ["tsx/cjs"], "extension": ["ts"], "spec": ["test/**/*.test.ts"]}`},
			narrowed: true,
		},
		{
			name: "jest through npm run", pkgs: []string{"jest@29.7.0"},
			pkg:      `{"name":"p","version":"1.0.0","scripts":{"test":"npm run test:jest && npm run lint","test:jest":"jest","lint":"node -e 0"},"devDependencies":{"jest":"29.7.0"}}`,
			lib:      chainJS,
			a:        "const { outer } = require('../lib/outer');\ndescribe('outer', () => {\n  test('doubles', () => {\n    expect(outer(2)).toBe(4);\n  });\n});\n",
			b:        "const { other } = require('../lib/other');\ntest('other', () => {\n  expect(other()).toBe(42);\n});\n",
			narrowed: true,
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ext := cmp.Or(tt.ext, ".js")
			files := map[string]string{"package.json": tt.pkg, "test/a.test" + ext: tt.a, "test/b.test" + ext: tt.b}
			for k, v := range tt.lib {
				files[k] = v
			}
			for k, v := range tt.extra {
				files[k] = v
			}
			snap := langtest.SnapOf(files)
			for k, f := range npmFixture(t, tt.pkgs...) {
				snap.Files[k] = f
			}
			r := Language{}.TestCommand(snap)
			if r.Name != testrun.RunnerNPM {
				t.Fatalf("TestCommand = %q %q, want the composed script through npm", r.Name, r.Args)
			}
			for _, b := range langtest.Backends("fixpoint-sandbox-node") {
				t.Run(b.Name, func(t *testing.T) {
					sess := b.Start(t)
					if _, err := sess.Sync(t.Context(), snap); err != nil {
						t.Fatal(err)
					}
					run := func(r testrun.Runner) *testrun.Report {
						t.Helper()
						rep, err := testrun.Run(t.Context(), sess, r, sandbox.Limits{Timeout: 5 * time.Minute}, nil)
						if err != nil {
							t.Fatalf("run %q: %v", r.Args, err)
						}
						return rep
					}
					base := run(r)
					failed := base.Failures()
					if len(failed) != 1 {
						t.Fatalf("baseline failures = %+v, want one; output:\n%s", failed, base.Output)
					}
					traced, ok := Language{}.TraceTests(snap, r, failed)
					if !ok || traced.TracePath != lang.TracePath {
						t.Fatalf("TraceTests(%q) = %q, %v; want a traced runner of the script's runner step", r.Args, traced.Args, ok)
					}
					got := run(traced)
					if got.Trace == nil {
						t.Fatalf("traced run %q wrote no trace; output:\n%s", traced.Args, got.Output)
					}
					if f := got.Failures(); len(f) != 1 || tt.narrowed && got.Passed != 0 {
						t.Errorf("traced run: %d passed, failures %+v; want the failing test (alone: %v); output:\n%s", got.Passed, f, tt.narrowed, got.Output)
					}
					trace, err := Language{}.ParseTrace(snap, got.Trace.Root, got.Trace.Data)
					if err != nil {
						t.Fatalf("ParseTrace(%.300s): %v", got.Trace.Data, err)
					}
					inner, outer := trace["lib/inner"+ext], trace["lib/outer"+ext]
					if !langtest.HasLine(inner, 3) && !langtest.HasLine(inner, 4) {
						t.Errorf("trace of lib/inner = %v, want inner's lines (3-4); trace %v", inner, trace)
					}
					for _, l := range []int{7, 8} {
						if langtest.HasLine(inner, l) {
							t.Errorf("trace of lib/inner = %v, want nothing at line %d (unusedInner never runs)", inner, l)
						}
					}
					if !langtest.HasLine(outer, 3) && !langtest.HasLine(outer, 4) {
						t.Errorf("trace of lib/outer = %v, want outer's lines", outer)
					}
					if s, ok := trace["lib/other"+ext]; ok && tt.narrowed {
						t.Errorf("trace holds lib/other %v, which only a passing test runs", s)
					}
					for f := range trace {
						if _, ok := snap.Files[f]; !ok || strings.HasPrefix(f, "node_modules/") {
							t.Errorf("trace holds %s", f)
						}
					}
					t.Logf("trace %v", trace)
				})
			}
		})
	}
}

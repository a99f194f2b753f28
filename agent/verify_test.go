package agent

import (
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

func TestIsTestFile(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"stats/stats_test.go", true},
		{"stats/stats.go", false},
		{"tests/helpers.py", true},
		{"pkg/test_x.py", true},
		{"pkg/x_test.py", true},
		{"pkg/testing.py", false},
		{"src/a.test.js", true},
		{"src/a.spec.ts", true},
		{"src/__tests__/a.js", true},
		{"src/contest.js", false},
		// JavaScript test directories count whatever the file is called.
		{"test/helpers.js", true},
		{"test/clamp.js", true},
		{"tests/util.mjs", true},
		{"packages/core/test/setup.ts", true},
		{"src/latest/x.js", false},
		{"src/contest/x.js", false},
	}
	for _, tt := range tests {
		if got := IsTestFile(tt.path); got != tt.want {
			t.Errorf("IsTestFile(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestWeakened(t *testing.T) {
	goTest := "func TestA(t *testing.T) {\n\tif f() != 1 {\n\t\tt.Errorf(\"bad\")\n\t}\n}\n"
	pyTest := "def test_a():\n    assert f() == 1\n"
	jsTest := "test('a', () => {\n  assert.strictEqual(f(), 1);\n});\n"
	tests := []struct {
		name, before, after, want string
		deleted                   bool
	}{
		{name: "go unchanged", before: goTest, after: goTest},
		{name: "go assert removed", before: goTest, after: "func TestA(t *testing.T) {\n\t_ = f()\n}\n", want: "removes 1 assertion"},
		{name: "go test deleted", before: goTest + "func TestB(t *testing.T) {}\n", after: goTest, want: "removes 1 test function"},
		{name: "go skip added", before: goTest, after: strings.Replace(goTest, "{\n\tif", "{\n\tt.Skip()\n\tif", 1), want: "adds 1 skip"},
		{name: "py skip added", before: pyTest, after: "@pytest.mark.skip\n" + pyTest, want: "adds 1 skip"},
		{name: "py assert added", before: pyTest, after: pyTest + "    assert f() > 0\n"},
		{name: "js test.skip", before: jsTest, after: strings.Replace(jsTest, "test(", "test.skip(", 1), want: "adds 1 skip"},
		{name: "file deleted", before: goTest, deleted: true, want: "deletes a test file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var after []byte
			if !tt.deleted {
				after = []byte(tt.after)
			}
			got := weakened("x_test", []byte(tt.before), after)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("weakened = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestVerdict(t *testing.T) {
	r := func(exit int, tests ...testrun.Result) *testrun.Report {
		rep := &testrun.Report{ExitCode: exit, Tests: tests}
		rep.Count()
		return rep
	}
	pass := func(id string) testrun.Result { return testrun.Result{ID: id, Status: testrun.StatusPass} }
	fail := func(id string) testrun.Result { return testrun.Result{ID: id, Status: testrun.StatusFail} }
	skip := func(id string) testrun.Result { return testrun.Result{ID: id, Status: testrun.StatusSkip} }
	errored := func(id string) testrun.Result { return testrun.Result{ID: id, Status: testrun.StatusError} }
	inPkg := func(t testrun.Result, pkg string) testrun.Result { t.Package = pkg; return t }
	mismatch := func(rep *testrun.Report, why string) *testrun.Report { rep.Mismatch = []string{why}; return rep }
	tests := []struct {
		name            string
		mode            Mode
		baseline, final *testrun.Report
		want            string // substring of the joined reasons; "" = verified
	}{
		{name: "fix verified", mode: ModeFix, baseline: r(1, pass("a"), fail("b")), final: r(0, pass("a"), pass("b"))},
		{name: "fix still failing", mode: ModeFix, baseline: r(1, fail("b")), final: r(1, fail("b")), want: "1 test(s) fail"},
		{name: "passing test vanished", mode: ModeFix, baseline: r(1, pass("a"), fail("b")), final: r(0, pass("b")), want: "a passed before the run and has vanished"},
		{name: "failing test vanished", mode: ModeFix, baseline: r(1, pass("a"), fail("b")), final: r(0, pass("a")), want: "b failed before the run and has vanished"},
		{name: "exit code without failures", mode: ModeFix, baseline: r(1, fail("b")), final: r(2, pass("b")), want: "exited with code 2"},
		{name: "solve with new test", mode: ModeSolve, baseline: r(0, pass("a")), final: r(0, pass("a"), pass("n"))},
		{name: "solve without new test", mode: ModeSolve, baseline: r(0, pass("a")), final: r(0, pass("a")), want: "needs new tests"},
		{name: "solve regression", mode: ModeSolve, baseline: r(0, pass("a")), final: r(1, fail("a"), pass("n")), want: "a passed before the run and now is fail"},
		{name: "passing test now skipped", mode: ModeFix, baseline: r(1, pass("a"), fail("b")), final: r(0, skip("a"), pass("b")), want: "a passed before the run and now is skip"},
		{name: "passing test now skipped in solve", mode: ModeSolve, baseline: r(0, pass("a")), final: r(0, skip("a"), pass("n")), want: "a passed before the run and now is skip"},
		{name: "failing test now xfail (skip)", mode: ModeFix, baseline: r(1, pass("a"), fail("b")), final: r(0, pass("a"), skip("b")), want: "b failed before the run and now is skip"},
		{name: "erroring test now skipped", mode: ModeFix, baseline: r(1, pass("a"), errored("b")), final: r(0, pass("a"), skip("b")), want: "b failed before the run and now is skip"},
		{name: "every test vanished, exit 0", mode: ModeFix, baseline: r(1, pass("a"), fail("b")), final: r(0), want: "a passed before the run and has vanished"},
		// issue 20: absence is not a pass, for errors too (a Go package
		// whose binary exits 0 from init before its tests run).
		{name: "erroring test vanished", mode: ModeFix, baseline: r(1, inPkg(pass("a"), "p"), inPkg(errored("p.TestB"), "p")), final: r(0, inPkg(pass("a"), "p")), want: "p.TestB failed before the run and has vanished"},
		{name: "a run's exit entry goes with its exit status", mode: ModeFix, baseline: r(1, errored(testrun.ExitID)), final: r(0, pass("a"))},
		{name: "a package's build error gives way to its tests", mode: ModeFix, baseline: r(1, inPkg(errored("p"), "p")), final: r(0, inPkg(pass("p.TestA"), "p"))},
		{name: "a crate's build error gives way to no tests", mode: ModeFix, baseline: r(1, testrun.Result{ID: "c (build)", Name: "build failed", Package: "c", Status: testrun.StatusError}), final: r(0)},
		{name: "results disagree with the runner", mode: ModeFix, baseline: r(1, fail("b")), final: mismatch(r(0, pass("b")), "pytest's summary line reports 1 failure(s)"), want: "disagree with the test runner's own output: pytest's summary"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(verdict(tt.mode, tt.baseline, tt.final), "; ")
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("verdict = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestCheckEditsTestInfrastructure(t *testing.T) {
	const (
		xfailAll   = "import pytest\n\ndef pytest_collection_modifyitems(items):\n    for item in items:\n        item.add_marker(pytest.mark.xfail)\n"
		goTest     = "package p\n\nimport \"testing\"\n\nfunc TestA(t *testing.T) {}\n"
		testMain   = "package p\n\nimport (\n\t\"os\"\n\t\"testing\"\n)\n\nfunc TestMain(m *testing.M) { os.Exit(0) }\n"
		pkgJSON    = "{\n  \"name\": \"x\",\n  \"scripts\": {\"test\": \"node --test\", \"build\": \"tsc\"},\n  \"dependencies\": {}\n}\n"
		setupCfg   = "[metadata]\nname = x\n\n[tool:pytest]\naddopts = -q\n"
		pyproject  = "[project]\nname = \"x\"\n\n[tool.pytest.ini_options]\naddopts = \"-q\"\n"
		toxIni     = "[tox]\nenvlist = py3\n\n[pytest]\naddopts = -q\n"
		viteConfig = "export default { test: { include: ['test/**'] } }\n"
	)
	tests := []struct {
		name          string
		path          string
		before, after *string // nil: did not exist / deleted
		mode          Mode
		allow         bool
		want          string // substring of the joined problems; "" = allowed
	}{
		{name: "new conftest.py", path: "conftest.py", after: ptr(xfailAll), want: "conftest.py is a pytest plugin"},
		{name: "new nested conftest.py", path: "pkg/conftest.py", after: ptr(xfailAll), want: "pytest plugin"},
		{name: "new conftest.py with allow_test_edits", path: "conftest.py", after: ptr(xfailAll), allow: true},
		{name: "new conftest.py in solve mode", path: "conftest.py", after: ptr(xfailAll), mode: ModeSolve},
		{name: "new pytest.ini", path: "pytest.ini", after: ptr("[pytest]\naddopts = --deselect t.py::test_a\n"), want: "configures pytest"},
		{name: "deleted pytest.ini", path: "pytest.ini", before: ptr("[pytest]\naddopts = -x\n"), want: "configures pytest"},
		{name: "sitecustomize.py", path: "sitecustomize.py", after: ptr("import os\n"), want: "runs when Python starts"},
		{name: "setup.cfg pytest section", path: "setup.cfg", before: ptr(setupCfg), after: ptr(strings.Replace(setupCfg, "-q", "-q -p no:python", 1)), want: "[tool:pytest]"},
		{name: "setup.cfg other section", path: "setup.cfg", before: ptr(setupCfg), after: ptr(strings.Replace(setupCfg, "name = x", "name = y", 1))},
		{name: "pyproject pytest section", path: "pyproject.toml", before: ptr(pyproject), after: ptr(pyproject + "python_files = [\"nothing.py\"]\n"), want: "[tool.pytest]"},
		{name: "pyproject new pytest section", path: "pyproject.toml", before: ptr("[project]\nname = \"x\"\n"), after: ptr(pyproject), want: "[tool.pytest]"},
		{name: "pyproject dependencies", path: "pyproject.toml", before: ptr(pyproject), after: ptr(strings.Replace(pyproject, "name = \"x\"", "name = \"x\"\nversion = \"2\"", 1))},
		{name: "tox.ini pytest section", path: "tox.ini", before: ptr(toxIni), after: ptr(strings.Replace(toxIni, "-q", "-q --co", 1)), want: "[pytest]"},
		{name: "package.json scripts.test", path: "package.json", before: ptr(pkgJSON), after: ptr(strings.Replace(pkgJSON, "node --test", "true", 1)), want: "npm runs the tests"},
		{name: "package.json pretest", path: "package.json", before: ptr(pkgJSON), after: ptr(strings.Replace(pkgJSON, `"build"`, `"pretest": "x", "build"`, 1)), want: "npm runs the tests"},
		{name: "package.json jest key", path: "package.json", before: ptr(pkgJSON), after: ptr(strings.Replace(pkgJSON, `"dependencies"`, `"jest": {"testMatch": []}, "dependencies"`, 1)), want: "npm runs the tests"},
		{name: "package.json other script", path: "package.json", before: ptr(pkgJSON), after: ptr(strings.Replace(pkgJSON, "tsc", "tsc -p .", 1))},
		{name: "jest.config.js", path: "jest.config.js", after: ptr("module.exports = {testMatch: []}\n"), want: "JavaScript test runner"},
		{name: "vitest.config.mts", path: "web/vitest.config.mts", after: ptr("export default {}\n"), want: "JavaScript test runner"},
		{name: ".mocharc.yml", path: ".mocharc.yml", after: ptr("spec: none\n"), want: "JavaScript test runner"},
		{name: "vite.config with a test section", path: "vite.config.ts", before: ptr(viteConfig), after: ptr(strings.Replace(viteConfig, "test/**", "none/**", 1)), want: "vitest"},
		{name: "vite.config without tests", path: "vite.config.ts", before: ptr("export default { base: '/' }\n"), after: ptr("export default { base: '/app/' }\n")},
		{name: "new _test.go with TestMain", path: "p/main_test.go", after: ptr(testMain), want: "TestMain"},
		{name: "new _test.go without TestMain", path: "p/new_test.go", after: ptr(goTest), want: "is a new test file"},
		{name: "new _test.go in solve mode", path: "p/new_test.go", after: ptr(goTest), mode: ModeSolve},
		{name: "new test module patching assertions", path: "tests/test_000.py", after: ptr("import unittest\nunittest.TestCase.assertEqual = lambda *a, **k: None\n"), want: "is a new test file"},
		{name: "new test file with allow_test_edits", path: "tests/test_000.py", after: ptr("def test_x():\n    assert True\n"), allow: true},
		{name: "changed _test.go", path: "p/a_test.go", before: ptr(goTest), after: ptr(goTest + "func TestB(t *testing.T) {}\n"), want: "is a test file"},
		{name: "testdata file", path: "p/testdata/golden.txt", before: ptr("want\n"), after: ptr("got\n"), want: "test data"},
		{name: "new testdata file", path: "testdata/case.json", after: ptr("{}\n"), want: "test data"},
		{name: "JS test directory helper", path: "test/helpers.js", before: ptr("exports.eq = require('node:assert').strictEqual\n"), after: ptr("exports.eq = () => {}\n"), want: "is a test file"},
		{name: "source file", path: "src/clamp.js", before: ptr("a\n"), after: ptr("b\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			mode := tt.mode
			if mode == "" {
				mode = ModeFix
			}
			orig := map[string][]byte{tt.path: bytesOf(tt.before)}
			changed := map[string][]byte{tt.path: bytesOf(tt.after)}
			got := strings.Join(checkEdits(mode, tt.allow, orig, changed), "; ")
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("checkEdits = %q, want %q", got, tt.want)
			}
		})
	}
}

func ptr(s string) *string { return &s }

func bytesOf(s *string) []byte {
	if s == nil {
		return nil
	}
	return []byte(*s)
}

func TestIgnorer(t *testing.T) {
	snap := goBugSnapshot(t)
	snap.Files[".gitignore"] = snapFile("build/\n*.log\n/root.txt\n!keep.log\nsub/**/gen.go\n")
	ig := newIgnorer(snap)
	tests := []struct {
		path string
		want bool
	}{
		{"build/out.go", true},
		{"a/b.log", true},
		{"keep.log", false},
		{"root.txt", true},
		{"x/root.txt", false},
		{"sub/a/b/gen.go", true},
		{"stats/stats.go", false},
	}
	for _, tt := range tests {
		if got := ig.Ignored(tt.path); got != tt.want {
			t.Errorf("Ignored(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

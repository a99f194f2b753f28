package registry

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// nodeStarted is lang/node's inline reporter of started tests.
const nodeStarted = "data:text/javascript,export default async function*(s){for await(const e of s){" +
	"if(e.type==='test:dequeue')yield 'fixpoint-started '+JSON.stringify({n:e.data.name,f:e.data.file,l:e.data.nesting})+String.fromCharCode(10);" +
	"else yield ''}}"

func TestTestCommand(t *testing.T) {
	pytest := []string{"python3", "-m", "pytest", "-v", "-rA", "--junitxml=.fixpoint/junit.xml", "-p", "no:cacheprovider"}
	unittest := []string{"python3", "-m", "unittest", "discover", "-v"}
	// TAP on stdout, and on stderr the reporter that names each test as it
	// starts (so that a suite stopped at its time limit names the test that hung).
	reporters := []string{"--test-reporter=tap", "--test-reporter-destination=stdout", "--test-reporter=" + nodeStarted, "--test-reporter-destination=stderr"}
	nodeTAP := append([]string{"node", "--test"}, reporters...)
	jest := []string{"npm", "test", "--silent", "--", "--json", "--outputFile=.fixpoint/jest.json"}
	mocha := []string{"npm", "test", "--silent", "--", "--reporter", "json", "--reporter-option", "output=.fixpoint/mocha.json"}
	vitest := func(run ...string) []string {
		return append(append([]string{"npm", "test", "--silent", "--"}, run...), "--reporter=default", "--reporter=json", "--outputFile=.fixpoint/vitest.json")
	}
	tests := []struct {
		name     string
		files    map[string]string
		override string
		want     testrun.Runner
		module   string // Go: the module path the format resolves packages under
		composed string // npm: the runner of a composed script, read from its default output
	}{
		{
			name:  "go module",
			files: map[string]string{"go.mod": "// comment\nmodule \"example.com/m\" // the module\n\ngo 1.22\n", "a.go": "package m"},
			want:  testrun.Runner{Name: testrun.RunnerGo, Args: []string{"go", "test", "-json", "./..."}}, module: "example.com/m",
		},
		{
			name:  "go wins over python helpers",
			files: map[string]string{"go.mod": "module m\n", "scripts/test_gen.py": ""},
			want:  testrun.Runner{Name: testrun.RunnerGo, Args: []string{"go", "test", "-json", "./..."}}, module: "m",
		},
		{name: "pytest.ini", files: map[string]string{"pytest.ini": "", "a.py": ""}, want: testrun.Runner{Name: testrun.RunnerPytest, Args: pytest, ReportPath: testrun.JUnitPath}},
		{name: "conftest", files: map[string]string{"sub/conftest.py": "", "a.py": ""}, want: testrun.Runner{Name: testrun.RunnerPytest, Args: pytest, ReportPath: testrun.JUnitPath}},
		{name: "pyproject tool.pytest", files: map[string]string{"pyproject.toml": "[tool.pytest.ini_options]\n", "a.py": ""}, want: testrun.Runner{Name: testrun.RunnerPytest, Args: pytest, ReportPath: testrun.JUnitPath}},
		{name: "setup.cfg tool:pytest", files: map[string]string{"setup.cfg": "[tool:pytest]\n"}, want: testrun.Runner{Name: testrun.RunnerPytest, Args: pytest, ReportPath: testrun.JUnitPath}},
		{name: "tests/test_x.py", files: map[string]string{"tests/test_x.py": "", "x.py": ""}, want: testrun.Runner{Name: testrun.RunnerPytest, Args: pytest, ReportPath: testrun.JUnitPath}},
		{name: "x_test.py", files: map[string]string{"x_test.py": ""}, want: testrun.Runner{Name: testrun.RunnerPytest, Args: pytest, ReportPath: testrun.JUnitPath}},
		{name: "plain python", files: map[string]string{"pyproject.toml": "[project]\nname='x'\n", "calc.py": "", "tests.py": ""}, want: testrun.Runner{Name: testrun.RunnerUnittest, Args: unittest}},
		{name: "package.json without scripts", files: map[string]string{"package.json": `{"name":"x"}`}, want: testrun.Runner{Name: testrun.RunnerNode, Args: nodeTAP}},
		{name: "no test script, jest declared", files: map[string]string{"package.json": `{"devDependencies":{"jest":"29"}}`}, want: testrun.Runner{Name: testrun.RunnerJest, Args: []string{"npx", "--no", "--", "jest", "--json", "--outputFile=.fixpoint/jest.json"}, ReportPath: testrun.JestReportPath}},
		{name: "default test script, mocha declared", files: map[string]string{"package.json": `{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"},"devDependencies":{"mocha":"10"}}`}, want: testrun.Runner{Name: testrun.RunnerMocha, Args: []string{"npx", "--no", "--", "mocha", "--reporter", "json", "--reporter-option", "output=.fixpoint/mocha.json"}, ReportPath: testrun.MochaReportPath}},
		{name: "npm default test script", files: map[string]string{"package.json": `{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}`}, want: testrun.Runner{Name: testrun.RunnerNode, Args: nodeTAP}},
		{name: "broken package.json", files: map[string]string{"package.json": `{"scripts":`}, want: testrun.Runner{Name: testrun.RunnerNode, Args: nodeTAP}},
		{name: "npm script node --test", files: map[string]string{"package.json": `{"scripts":{"test":"node --test"}}`}, want: testrun.Runner{Name: testrun.RunnerNPM, Args: append([]string{"npm", "test", "--silent", "--"}, reporters...)}},
		{name: "npm script node --test with files", files: map[string]string{"package.json": `{"scripts":{"test":"node --test test/"}}`}, want: testrun.Runner{Name: testrun.RunnerNPM, Args: []string{"npm", "test", "--silent"}}},
		{name: "npm script jest without the dependency", files: map[string]string{"package.json": `{"scripts":{"test":"jest"}}`}, want: testrun.Runner{Name: testrun.RunnerNPM, Args: []string{"npm", "test", "--silent"}}},
		{name: "npm script jest", files: map[string]string{"package.json": `{"scripts":{"test":"jest"},"devDependencies":{"jest":"^27","ts-jest":"^27"}}`}, want: testrun.Runner{Name: testrun.RunnerJest, Args: jest, ReportPath: testrun.JestReportPath}},
		{name: "jest after a build step", files: map[string]string{"package.json": `{"scripts":{"test":"tsc -p . && NODE_ENV=test npx jest --coverage"},"devDependencies":{"jest":"29"}}`}, want: testrun.Runner{Name: testrun.RunnerJest, Args: jest, ReportPath: testrun.JestReportPath}},
		{name: "jest in watch mode", files: map[string]string{"package.json": `{"scripts":{"test":"jest --watchAll"},"devDependencies":{"jest":"29"}}`}, want: testrun.Runner{Name: testrun.RunnerNPM, Args: []string{"npm", "test", "--silent"}}},
		{name: "jest before a lint step", files: map[string]string{"package.json": `{"scripts":{"test":"jest && eslint ."},"devDependencies":{"jest":"29","eslint":"8"}}`}, want: testrun.Runner{Name: testrun.RunnerNPM, Args: []string{"npm", "test", "--silent"}}, composed: testrun.RunnerJest},
		{name: "jest then tsc", files: map[string]string{"package.json": `{"scripts":{"test":"jest --ci && tsc --noEmit"},"devDependencies":{"jest":"29","typescript":"5"}}`}, want: testrun.Runner{Name: testrun.RunnerNPM, Args: []string{"npm", "test", "--silent"}}, composed: testrun.RunnerJest},
		{name: "mocha then npm run lint", files: map[string]string{"package.json": `{"scripts":{"test":"mocha test/ && npm run lint"},"devDependencies":{"mocha":"10"}}`}, want: testrun.Runner{Name: testrun.RunnerNPM, Args: []string{"npm", "test", "--silent"}}, composed: testrun.RunnerMocha},
		{name: "vitest then size", files: map[string]string{"package.json": `{"scripts":{"test":"vitest run; size-limit"},"devDependencies":{"vitest":"1","size-limit":"9"}}`}, want: testrun.Runner{Name: testrun.RunnerNPM, Args: []string{"npm", "test", "--silent"}}, composed: testrun.RunnerVitest},
		{name: "undeclared jest before lint", files: map[string]string{"package.json": `{"scripts":{"test":"jest && eslint ."},"devDependencies":{"eslint":"8"}}`}, want: testrun.Runner{Name: testrun.RunnerNPM, Args: []string{"npm", "test", "--silent"}}},
		{name: "jest piped", files: map[string]string{"package.json": `{"scripts":{"test":"jest | tee log"},"devDependencies":{"jest":"29"}}`}, want: testrun.Runner{Name: testrun.RunnerNPM, Args: []string{"npm", "test", "--silent"}}, composed: testrun.RunnerJest},
		{name: "vitest", files: map[string]string{"package.json": `{"scripts":{"test":"vitest"},"devDependencies":{"vitest":"2"}}`}, want: testrun.Runner{Name: testrun.RunnerVitest, Args: vitest("--run"), ReportPath: testrun.VitestReportPath}},
		{name: "vitest --run", files: map[string]string{"package.json": `{"scripts":{"test":"vitest --run --coverage"},"devDependencies":{"vitest":"2"}}`}, want: testrun.Runner{Name: testrun.RunnerVitest, Args: vitest(), ReportPath: testrun.VitestReportPath}},
		{name: "vitest run", files: map[string]string{"package.json": `{"scripts":{"test":"cross-env TZ=UTC vitest run"},"devDependencies":{"vitest":"2"}}`}, want: testrun.Runner{Name: testrun.RunnerVitest, Args: vitest(), ReportPath: testrun.VitestReportPath}},
		{name: "mocha", files: map[string]string{"package.json": `{"scripts":{"test":"mocha --check-leaks --reporter spec"},"devDependencies":{"mocha":"9.2.0"}}`}, want: testrun.Runner{Name: testrun.RunnerMocha, Args: mocha, ReportPath: testrun.MochaReportPath}},
		{name: "mocha by path", files: map[string]string{"package.json": `{"scripts":{"test":"./node_modules/.bin/mocha test/"},"dependencies":{"mocha":"10"}}`}, want: testrun.Runner{Name: testrun.RunnerMocha, Args: mocha, ReportPath: testrun.MochaReportPath}},
		{name: "npm script ava", files: map[string]string{"package.json": `{"scripts":{"test":"ava"},"devDependencies":{"ava":"6"}}`}, want: testrun.Runner{Name: "ava", Args: []string{"npm", "test", "--silent", "--", "--tap"}}},
		{name: "lint then ava with files", files: map[string]string{"package.json": `{"scripts":{"test":"xo && ava test/ --timeout=1m"},"devDependencies":{"ava":"^3","xo":"1"}}`}, want: testrun.Runner{Name: "ava", Args: []string{"npm", "test", "--silent", "--", "--tap"}}},
		{name: "ava with --tap already", files: map[string]string{"package.json": `{"scripts":{"test":"ava --tap"},"devDependencies":{"ava":"6"}}`}, want: testrun.Runner{Name: "ava", Args: []string{"npm", "test", "--silent", "--"}}},
		{name: "ava in watch mode", files: map[string]string{"package.json": `{"scripts":{"test":"ava --watch"},"devDependencies":{"ava":"6"}}`}, want: testrun.Runner{Name: testrun.RunnerNPM, Args: []string{"npm", "test", "--silent"}}},
		{name: "no test script, ava declared", files: map[string]string{"package.json": `{"devDependencies":{"ava":"6"}}`}, want: testrun.Runner{Name: "ava", Args: []string{"npx", "--no", "--", "ava", "--tap"}}},
		{name: "lint then node --test", files: map[string]string{"package.json": `{"scripts":{"test":"eslint . && node --test"}}`}, want: testrun.Runner{Name: testrun.RunnerNPM, Args: append([]string{"npm", "test", "--silent", "--"}, reporters...)}},
		{name: "npm script with a reporter already", files: map[string]string{"package.json": `{"scripts":{"test":"node --test --test-reporter=spec"}}`}, want: testrun.Runner{Name: testrun.RunnerNPM, Args: []string{"npm", "test", "--silent"}}},
		{name: "nothing", files: map[string]string{"README": "hi"}, want: testrun.Runner{Name: testrun.RunnerCustom}},
		{name: "override wins", files: map[string]string{"go.mod": "module m\n"}, override: `make test ARGS="-run 'Test A'"`, want: testrun.Runner{Name: testrun.RunnerCustom, Args: []string{"make", "test", "ARGS=-run 'Test A'"}}},
		{name: "override with pipe uses sh", files: map[string]string{}, override: "go test ./... | tee out.txt", want: testrun.Runner{Name: testrun.RunnerCustom, Args: []string{"sh", "-c", "go test ./... | tee out.txt"}}},
		{name: "override with junit report", override: "pytest -x --junitxml=out/r.xml tests", want: testrun.Runner{Name: testrun.RunnerCustom, Args: []string{"pytest", "-x", "--junitxml=out/r.xml", "tests"}, ReportPath: "out/r.xml"}},
		{name: "override jest with a report", override: "npx jest --json --outputFile=out/j.json", want: testrun.Runner{Name: testrun.RunnerCustom, Args: []string{"npx", "jest", "--json", "--outputFile=out/j.json"}, ReportPath: "out/j.json"}},
		{name: "override mocha with a report", override: "mocha --reporter json --reporter-option output=m.json", want: testrun.Runner{Name: testrun.RunnerCustom, Args: []string{"mocha", "--reporter", "json", "--reporter-option", "output=m.json"}, ReportPath: "m.json"}},
		{name: "override with absolute report", override: "pytest --junit-xml /tmp/r.xml", want: testrun.Runner{Name: testrun.RunnerCustom, Args: []string{"pytest", "--junit-xml", "/tmp/r.xml"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := TestCommand(snap(tt.files), tt.override)
			checkFormat(t, got, tt.module, tt.composed)
			got.Env = nil                      // checked below
			got.Format, got.Formats = nil, nil // checked by checkFormat
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("TestCommand(%v, %q) = %+v, want %+v", keys(tt.files), tt.override, got, tt.want)
			}
		})
	}
}

// checkFormat checks how r's output is read: a detected runner by the
// format of its name, a configured command by sniffing every language's
// formats. module is the Go module the format resolves packages under,
// composed the runner whose default output an npm script's format reads.
func checkFormat(t *testing.T, r testrun.Runner, module, composed string) {
	t.Helper()
	if r.Name == testrun.RunnerCustom {
		if r.Format != nil || len(r.Formats) != len(Formats()) {
			t.Errorf("custom runner: Format %v, %d Formats; want nil and every language's %d", r.Format, len(r.Formats), len(Formats()))
		}
		return
	}
	if r.Format == nil || r.Format.Name != r.Name {
		t.Fatalf("runner %s: Format = %+v, want one named %s", r.Name, r.Format, r.Name)
	}
	if module != "" {
		out := `{"Action":"output","Package":"` + module + `/sub","Test":"TestX","Output":"    a_test.go:7: boom\n"}` + "\n" +
			`{"Action":"fail","Package":"` + module + `/sub","Test":"TestX","Elapsed":0}` + "\n"
		rep := testrun.Parse(r, &sandbox.Result{ExitCode: 1, Stdout: []byte(out)}, nil)
		if f := rep.Failures(); len(f) != 1 || f[0].File != "sub/a_test.go" {
			t.Errorf("module %s: failures = %+v, want one at sub/a_test.go", module, f)
		}
	}
	if composed != "" {
		// Mocha's spec summary with a test name jest's parser would not see.
		outs := map[string]string{
			testrun.RunnerJest:   "PASS src/a.test.js\n  ✓ adds (2 ms)\n\nTest Suites: 1 passed, 1 total\nTests:       1 passed, 1 total\n",
			testrun.RunnerMocha:  "  adds\n    ✔ works\n\n  1 passing (3ms)\n",
			testrun.RunnerVitest: " ✓ src/a.test.ts (1)\n\n Test Files  1 passed (1)\n      Tests  1 passed (1)\n",
		}
		rep := testrun.Parse(r, &sandbox.Result{ExitCode: 2, Stdout: []byte(outs[composed] + "lint: 3 problems\n")}, nil)
		if rep.Passed != 1 {
			t.Errorf("composed %s: passed = %d, want 1 from its default output: %+v", composed, rep.Passed, rep.Tests)
		}
	}
}

// TestTestCommandEnv: detection adds only what keeps the workspace clean, never
// variables that change how tests behave or print (colour, CI, terminal).
func TestTestCommandEnv(t *testing.T) {
	r := TestCommand(snap(map[string]string{"tests/test_a.py": ""}), "")
	if !contains(r.Env, "PYTHONDONTWRITEBYTECODE=1") {
		t.Errorf("pytest Env = %q, want PYTHONDONTWRITEBYTECODE=1 (no __pycache__ in the workspace)", r.Env)
	}
	// node --test with files takes its reporter from NODE_OPTIONS: after a
	// file node reads a flag as another file.
	want := `NODE_OPTIONS=--test-reporter=tap --test-reporter-destination=stdout --test-reporter="` + nodeStarted + `" --test-reporter-destination=stderr`
	if r := TestCommand(snap(map[string]string{"package.json": `{"scripts":{"test":"node --test test/"}}`}), ""); !contains(r.Env, want) {
		t.Errorf("node --test test/: Env = %q, want %s", r.Env, want)
	}
	for _, files := range []map[string]string{
		{"package.json": "{}"},
		{"package.json": `{"scripts":{"test":"jest"},"devDependencies":{"jest":"27"}}`},
		{"package.json": `{"scripts":{"test":"mocha"},"devDependencies":{"mocha":"9"}}`},
		{"go.mod": "module m\n"},
		{"tests/test_a.py": ""},
	} {
		r := TestCommand(snap(files), "")
		for _, e := range r.Env {
			switch k, _, _ := strings.Cut(e, "="); k {
			case "NO_COLOR", "FORCE_COLOR", "CI", "TERM", "COLORTERM":
				t.Errorf("TestCommand(%v).Env = %q: %s changes test behaviour and is not configured", keys(files), r.Env, k)
			}
		}
	}
}

// TestTestCommandProjects runs TestCommand on sandbox/testrun's real example projects.
func TestTestCommandProjects(t *testing.T) {
	tests := map[string]string{"gofail": testrun.RunnerGo, "pyfail": testrun.RunnerPytest, "pycollect": testrun.RunnerPytest, "nodefail": testrun.RunnerNode, "npmfail": testrun.RunnerNPM, "nodepass": testrun.RunnerNode}
	for dir, want := range tests {
		got := TestCommand(snapshot(t, filepath.Join("..", "..", "sandbox", "testrun", "testdata", "projects", dir)), "")
		if got.Name != want {
			t.Errorf("TestCommand(projects/%s).Name = %q, want %q", dir, got.Name, want)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func keys(m map[string]string) string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return strings.Join(out, ",")
}

func snapshot(t testing.TB, dir string) *sandbox.Snapshot {
	t.Helper()
	s, err := sandbox.SnapshotDir(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

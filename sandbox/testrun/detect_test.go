package testrun

import (
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

func snap(files map[string]string) *sandbox.Snapshot {
	s := &sandbox.Snapshot{Root: "/src", Files: map[string]sandbox.File{}}
	for k, v := range files {
		s.Files[k] = sandbox.File{Data: []byte(v)}
	}
	return s
}

func TestDetect(t *testing.T) {
	pytest := []string{"python3", "-m", "pytest", "-q", "-rA", "--junitxml=.fixpoint/junit.xml", "-p", "no:cacheprovider"}
	unittest := []string{"python3", "-m", "unittest", "discover", "-v"}
	nodeTAP := []string{"node", "--test", "--test-reporter=tap"}
	jest := []string{"npm", "test", "--silent", "--", "--json", "--outputFile=.fixpoint/jest.json"}
	mocha := []string{"npm", "test", "--silent", "--", "--reporter", "json", "--reporter-option", "output=.fixpoint/mocha.json"}
	vitest := func(run ...string) []string {
		return append(append([]string{"npm", "test", "--silent", "--"}, run...), "--reporter=default", "--reporter=json", "--outputFile=.fixpoint/vitest.json")
	}
	tests := []struct {
		name     string
		files    map[string]string
		override string
		want     Runner
	}{
		{
			name:  "go module",
			files: map[string]string{"go.mod": "// comment\nmodule \"example.com/m\" // the module\n\ngo 1.22\n", "a.go": "package m"},
			want:  Runner{Name: RunnerGo, Args: []string{"go", "test", "-json", "./..."}, Module: "example.com/m"},
		},
		{
			name:  "go wins over python helpers",
			files: map[string]string{"go.mod": "module m\n", "scripts/test_gen.py": ""},
			want:  Runner{Name: RunnerGo, Args: []string{"go", "test", "-json", "./..."}, Module: "m"},
		},
		{name: "pytest.ini", files: map[string]string{"pytest.ini": "", "a.py": ""}, want: Runner{Name: RunnerPytest, Args: pytest, ReportPath: JUnitPath}},
		{name: "conftest", files: map[string]string{"sub/conftest.py": "", "a.py": ""}, want: Runner{Name: RunnerPytest, Args: pytest, ReportPath: JUnitPath}},
		{name: "pyproject tool.pytest", files: map[string]string{"pyproject.toml": "[tool.pytest.ini_options]\n", "a.py": ""}, want: Runner{Name: RunnerPytest, Args: pytest, ReportPath: JUnitPath}},
		{name: "setup.cfg tool:pytest", files: map[string]string{"setup.cfg": "[tool:pytest]\n"}, want: Runner{Name: RunnerPytest, Args: pytest, ReportPath: JUnitPath}},
		{name: "tests/test_x.py", files: map[string]string{"tests/test_x.py": "", "x.py": ""}, want: Runner{Name: RunnerPytest, Args: pytest, ReportPath: JUnitPath}},
		{name: "x_test.py", files: map[string]string{"x_test.py": ""}, want: Runner{Name: RunnerPytest, Args: pytest, ReportPath: JUnitPath}},
		{name: "plain python", files: map[string]string{"pyproject.toml": "[project]\nname='x'\n", "calc.py": "", "tests.py": ""}, want: Runner{Name: RunnerUnittest, Args: unittest}},
		{name: "package.json without scripts", files: map[string]string{"package.json": `{"name":"x"}`}, want: Runner{Name: RunnerNode, Args: nodeTAP}},
		{name: "no test script, jest declared", files: map[string]string{"package.json": `{"devDependencies":{"jest":"29"}}`}, want: Runner{Name: RunnerJest, Args: []string{"npx", "--no", "--", "jest", "--json", "--outputFile=.fixpoint/jest.json"}, ReportPath: JestReportPath}},
		{name: "default test script, mocha declared", files: map[string]string{"package.json": `{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"},"devDependencies":{"mocha":"10"}}`}, want: Runner{Name: RunnerMocha, Args: []string{"npx", "--no", "--", "mocha", "--reporter", "json", "--reporter-option", "output=.fixpoint/mocha.json"}, ReportPath: MochaReportPath}},
		{name: "npm default test script", files: map[string]string{"package.json": `{"scripts":{"test":"echo \"Error: no test specified\" && exit 1"}}`}, want: Runner{Name: RunnerNode, Args: nodeTAP}},
		{name: "broken package.json", files: map[string]string{"package.json": `{"scripts":`}, want: Runner{Name: RunnerNode, Args: nodeTAP}},
		{name: "npm script node --test", files: map[string]string{"package.json": `{"scripts":{"test":"node --test test/"}}`}, want: Runner{Name: RunnerNPM, Args: []string{"npm", "test", "--silent", "--", "--test-reporter=tap"}}},
		{name: "npm script jest without the dependency", files: map[string]string{"package.json": `{"scripts":{"test":"jest"}}`}, want: Runner{Name: RunnerNPM, Args: []string{"npm", "test", "--silent"}}},
		{name: "npm script jest", files: map[string]string{"package.json": `{"scripts":{"test":"jest"},"devDependencies":{"jest":"^27","ts-jest":"^27"}}`}, want: Runner{Name: RunnerJest, Args: jest, ReportPath: JestReportPath}},
		{name: "jest after a build step", files: map[string]string{"package.json": `{"scripts":{"test":"tsc -p . && NODE_ENV=test npx jest --coverage"},"devDependencies":{"jest":"29"}}`}, want: Runner{Name: RunnerJest, Args: jest, ReportPath: JestReportPath}},
		{name: "jest in watch mode", files: map[string]string{"package.json": `{"scripts":{"test":"jest --watchAll"},"devDependencies":{"jest":"29"}}`}, want: Runner{Name: RunnerNPM, Args: []string{"npm", "test", "--silent"}}},
		{name: "jest before a lint step", files: map[string]string{"package.json": `{"scripts":{"test":"jest && eslint ."},"devDependencies":{"jest":"29","eslint":"8"}}`}, want: Runner{Name: RunnerNPM, Args: []string{"npm", "test", "--silent"}}},
		{name: "jest piped", files: map[string]string{"package.json": `{"scripts":{"test":"jest | tee log"},"devDependencies":{"jest":"29"}}`}, want: Runner{Name: RunnerNPM, Args: []string{"npm", "test", "--silent"}}},
		{name: "vitest", files: map[string]string{"package.json": `{"scripts":{"test":"vitest"},"devDependencies":{"vitest":"2"}}`}, want: Runner{Name: RunnerVitest, Args: vitest("--run"), ReportPath: VitestReportPath}},
		{name: "vitest --run", files: map[string]string{"package.json": `{"scripts":{"test":"vitest --run --coverage"},"devDependencies":{"vitest":"2"}}`}, want: Runner{Name: RunnerVitest, Args: vitest(), ReportPath: VitestReportPath}},
		{name: "vitest run", files: map[string]string{"package.json": `{"scripts":{"test":"cross-env TZ=UTC vitest run"},"devDependencies":{"vitest":"2"}}`}, want: Runner{Name: RunnerVitest, Args: vitest(), ReportPath: VitestReportPath}},
		{name: "mocha", files: map[string]string{"package.json": `{"scripts":{"test":"mocha --check-leaks --reporter spec"},"devDependencies":{"mocha":"9.2.0"}}`}, want: Runner{Name: RunnerMocha, Args: mocha, ReportPath: MochaReportPath}},
		{name: "mocha by path", files: map[string]string{"package.json": `{"scripts":{"test":"./node_modules/.bin/mocha test/"},"dependencies":{"mocha":"10"}}`}, want: Runner{Name: RunnerMocha, Args: mocha, ReportPath: MochaReportPath}},
		{name: "lint then node --test", files: map[string]string{"package.json": `{"scripts":{"test":"eslint . && node --test"}}`}, want: Runner{Name: RunnerNPM, Args: []string{"npm", "test", "--silent", "--", "--test-reporter=tap"}}},
		{name: "npm script with a reporter already", files: map[string]string{"package.json": `{"scripts":{"test":"node --test --test-reporter=spec"}}`}, want: Runner{Name: RunnerNPM, Args: []string{"npm", "test", "--silent"}}},
		{name: "nothing", files: map[string]string{"README": "hi"}, want: Runner{Name: RunnerCustom}},
		{name: "override wins", files: map[string]string{"go.mod": "module m\n"}, override: `make test ARGS="-run 'Test A'"`, want: Runner{Name: RunnerCustom, Args: []string{"make", "test", "ARGS=-run 'Test A'"}}},
		{name: "override with pipe uses sh", files: map[string]string{}, override: "go test ./... | tee out.txt", want: Runner{Name: RunnerCustom, Args: []string{"sh", "-c", "go test ./... | tee out.txt"}}},
		{name: "override with junit report", override: "pytest -x --junitxml=out/r.xml tests", want: Runner{Name: RunnerCustom, Args: []string{"pytest", "-x", "--junitxml=out/r.xml", "tests"}, ReportPath: "out/r.xml"}},
		{name: "override jest with a report", override: "npx jest --json --outputFile=out/j.json", want: Runner{Name: RunnerCustom, Args: []string{"npx", "jest", "--json", "--outputFile=out/j.json"}, ReportPath: "out/j.json"}},
		{name: "override mocha with a report", override: "mocha --reporter json --reporter-option output=m.json", want: Runner{Name: RunnerCustom, Args: []string{"mocha", "--reporter", "json", "--reporter-option", "output=m.json"}, ReportPath: "m.json"}},
		{name: "override with absolute report", override: "pytest --junit-xml /tmp/r.xml", want: Runner{Name: RunnerCustom, Args: []string{"pytest", "--junit-xml", "/tmp/r.xml"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Detect(snap(tt.files), tt.override)
			got.Env = nil // checked below
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Detect(%v, %q) = %+v, want %+v", keys(tt.files), tt.override, got, tt.want)
			}
		})
	}
}

// TestDetectEnv: detection adds only what keeps the workspace clean, never
// variables that change how tests behave or print (colour, CI, terminal).
func TestDetectEnv(t *testing.T) {
	r := Detect(snap(map[string]string{"tests/test_a.py": ""}), "")
	if !contains(r.Env, "PYTHONDONTWRITEBYTECODE=1") {
		t.Errorf("pytest Env = %q, want PYTHONDONTWRITEBYTECODE=1 (no __pycache__ in the workspace)", r.Env)
	}
	for _, files := range []map[string]string{
		{"package.json": "{}"},
		{"package.json": `{"scripts":{"test":"jest"},"devDependencies":{"jest":"27"}}`},
		{"package.json": `{"scripts":{"test":"mocha"},"devDependencies":{"mocha":"9"}}`},
		{"go.mod": "module m\n"},
		{"tests/test_a.py": ""},
	} {
		r := Detect(snap(files), "")
		for _, e := range r.Env {
			switch k, _, _ := strings.Cut(e, "="); k {
			case "NO_COLOR", "FORCE_COLOR", "CI", "TERM", "COLORTERM":
				t.Errorf("Detect(%v).Env = %q: %s changes test behaviour and is not configured", keys(files), r.Env, k)
			}
		}
	}
}

// TestDetectProjects runs Detect on the real example projects.
func TestDetectProjects(t *testing.T) {
	tests := map[string]string{"gofail": RunnerGo, "pyfail": RunnerPytest, "pycollect": RunnerPytest, "nodefail": RunnerNode, "npmfail": RunnerNPM, "nodepass": RunnerNode}
	for dir, want := range tests {
		got := Detect(snapshot(t, filepath.Join("testdata", "projects", dir)), "")
		if got.Name != want {
			t.Errorf("Detect(projects/%s).Name = %q, want %q", dir, got.Name, want)
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

func TestSplitWords(t *testing.T) {
	tests := []struct {
		in      string
		want    []string
		wantErr bool
	}{
		{in: "", want: nil},
		{in: "  go   test  ./... ", want: []string{"go", "test", "./..."}},
		{in: `pytest -k 'a and not b' tests`, want: []string{"pytest", "-k", "a and not b", "tests"}},
		{in: `echo "a \"quoted\" \$HOME" x`, want: []string{"echo", `a "quoted" $HOME`, "x"}},
		{in: `a\ b c`, want: []string{"a b", "c"}},
		{in: `x'' ""`, want: []string{"x", ""}},
		{in: `it's`, wantErr: true},
		{in: `"open`, wantErr: true},
	}
	for _, tt := range tests {
		got, err := SplitWords(tt.in)
		if (err != nil) != tt.wantErr {
			t.Errorf("SplitWords(%q) error = %v, want error %v", tt.in, err, tt.wantErr)
			continue
		}
		if !tt.wantErr && !reflect.DeepEqual(got, tt.want) {
			t.Errorf("SplitWords(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestRunnerWithEnv(t *testing.T) {
	tests := []struct {
		name string
		env  []string
		add  map[string]string
		want []string
	}{
		{name: "nothing configured", env: []string{"PYTHONDONTWRITEBYTECODE=1"}, want: []string{"PYTHONDONTWRITEBYTECODE=1"}},
		{name: "added in key order", add: map[string]string{"TZ": "UTC", "CI": "true"}, want: []string{"CI=true", "TZ=UTC"}},
		{name: "configured wins", env: []string{"PYTHONDONTWRITEBYTECODE=1", "X=1"}, add: map[string]string{"PYTHONDONTWRITEBYTECODE": ""}, want: []string{"X=1", "PYTHONDONTWRITEBYTECODE="}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Runner{Name: RunnerCustom, Env: tt.env}
			got := r.WithEnv(tt.add)
			if !reflect.DeepEqual(got.Env, tt.want) && !(len(got.Env) == 0 && len(tt.want) == 0) {
				t.Errorf("WithEnv(%v) on %q = %q, want %q", tt.add, tt.env, got.Env, tt.want)
			}
			if len(tt.env) > 0 && &r.Env[0] == &got.Env[0] {
				t.Error("WithEnv changed the receiver's slice")
			}
		})
	}
}

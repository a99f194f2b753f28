package registry

import (
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/node"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

func snap(files map[string]string) *sandbox.Snapshot {
	s := &sandbox.Snapshot{Files: map[string]sandbox.File{}}
	for k, v := range files {
		s.Files[k] = sandbox.File{Data: []byte(v)}
	}
	return s
}

func TestRequirement(t *testing.T) {
	tests := []struct {
		name       string
		files      map[string]string
		lang       string
		constraint string
		source     string
	}{
		{"go line", map[string]string{"go.mod": "module m\n\ngo 1.22\n"}, "go", ">= 1.22", "go.mod (go 1.22)"},
		{"toolchain raises", map[string]string{"go.mod": "module m\n\ngo 1.22\n\ntoolchain go1.22.5\n"}, "go", ">= 1.22.5", "go.mod (toolchain go1.22.5)"},
		{"engines", map[string]string{"package.json": `{"engines":{"node":">=20"}}`}, "node", ">=20", "package.json (engines.node)"},
		{"nvmrc first", map[string]string{"package.json": `{"engines":{"node":">=20"}}`, ".nvmrc": "v22.12.0\n"}, "node", "v22.12.0", ".nvmrc"},
		{"node-version", map[string]string{"package.json": `{}`, ".node-version": "20\n"}, "node", "20", ".node-version"},
		{"lts alias falls through", map[string]string{"package.json": `{"engines":{"node":"^20"}}`, ".nvmrc": "lts/*"}, "node", "^20", "package.json (engines.node)"},
		{"requires-python", map[string]string{"pyproject.toml": "[project]\nname='x'\nrequires-python = \">=3.12\"\n"}, "python", ">=3.12", "pyproject.toml (requires-python)"},
		{"python-version", map[string]string{"pyproject.toml": "[project]\nrequires-python = \">=3.8\"\n", ".python-version": "3.11\n"}, "python", "3.11", ".python-version"},
		{"setup.cfg", map[string]string{"setup.cfg": "[options]\npython_requires = >=3.7\n"}, "python", ">=3.7", "setup.cfg (python_requires)"},
		{"none", map[string]string{"package.json": `{"name":"x"}`}, "node", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := snap(tt.files)
			l := Detect(s)
			if l == nil || l.Name() != tt.lang {
				t.Fatalf("Detect = %v, want %s", l, tt.lang)
			}
			req, err := l.Requirement(s)
			if err != nil {
				t.Fatal(err)
			}
			if tt.constraint == "" {
				if req != nil {
					t.Fatalf("Requirement = %v, want none", req)
				}
				return
			}
			if req == nil || req.Constraint != tt.constraint || req.Source != tt.source || req.Runtime != tt.lang {
				t.Fatalf("Requirement = %+v, want %q from %q", req, tt.constraint, tt.source)
			}
		})
	}
}

func TestRequirementErrorNamesFile(t *testing.T) {
	s := snap(map[string]string{"package.json": `{"engines":{"node":"banana"}}`})
	_, err := Detect(s).Requirement(s)
	if err == nil || !strings.Contains(err.Error(), "package.json") {
		t.Fatalf("Requirement error = %v, want one naming package.json", err)
	}
}

func TestSetupStep(t *testing.T) {
	tests := []struct {
		name   string
		files  map[string]string
		want   string // Setup.Name; "" = no step
		cache  string
		inputs string
	}{
		{"go no deps", map[string]string{"go.mod": "module m\n\ngo 1.22\n"}, "", "", ""},
		{"go deps", map[string]string{"go.mod": "module m\n\ngo 1.22\n\nrequire github.com/x/y v1.0.0\n", "go.sum": ""}, "go mod download", "/gomodcache", "go.mod,go.sum"},
		{"npm ci", map[string]string{"package.json": `{"devDependencies":{"jest":"1"}}`, "package-lock.json": "{}"}, "npm ci", "/workspace/node_modules", "package-lock.json,package.json"},
		{"npm install", map[string]string{"package.json": `{"dependencies":{"a":"1"}}`}, "npm install", "/workspace/node_modules", "package.json"},
		{"yarn", map[string]string{"package.json": `{"dependencies":{"a":"1"}}`, "yarn.lock": ""}, "yarn install", "/workspace/node_modules", "package.json,yarn.lock"},
		{"node no deps", map[string]string{"package.json": `{"scripts":{"test":"node --test"}}`}, "", "", ""},
		{"pip requirements", map[string]string{"requirements.txt": "x", "requirements-dev.txt": "y", "a.py": ""}, "pip install -r requirements-dev.txt -r requirements.txt", "/deps/venv", "requirements-dev.txt,requirements.txt"},
		{"pip extra", map[string]string{"pyproject.toml": "[project]\nname='x'\n[project.optional-dependencies]\ntest = ['pytest']\n"}, "pip install -e .[test]", "/deps/venv", "pyproject.toml"},
		{"setup.cfg extra", map[string]string{"setup.cfg": "[options.extras_require]\ndev =\n  pytest\n"}, "pip install -e .[dev]", "/deps/venv", "setup.cfg"},
		{"python nothing", map[string]string{"pyproject.toml": "[project]\nname='x'\n"}, "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := snap(tt.files)
			st := Detect(s).SetupStep(s)
			if tt.want == "" {
				if st != nil && st.Script != "" {
					t.Fatalf("SetupStep = %+v, want none", st)
				}
				return
			}
			if st == nil || st.Name != tt.want {
				t.Fatalf("SetupStep = %+v, want %q", st, tt.want)
			}
			if len(st.Caches) != 1 || st.Caches[0].Path != tt.cache {
				t.Errorf("caches = %+v, want %s", st.Caches, tt.cache)
			}
			in := append([]string(nil), st.Inputs...)
			if got := strings.Join(sortStrings(in), ","); got != tt.inputs {
				t.Errorf("inputs = %s, want %s", got, tt.inputs)
			}
			k1 := st.Key(s, "img")
			s2 := snap(tt.files)
			f := s2.Files[st.Inputs[0]]
			f.Data = append(f.Data, ' ')
			s2.Files[st.Inputs[0]] = f
			if k1 == st.Key(s2, "img") || k1 == st.Key(s, "other") || k1 != st.Key(snap(tt.files), "img") {
				t.Errorf("Key does not follow the inputs and the image")
			}
		})
	}
}

func TestSrcLayoutGetsPythonpath(t *testing.T) {
	s := snap(map[string]string{"pyproject.toml": "[project]\nname='x'\n", "src/pkg/__init__.py": "", "tests/test_a.py": ""})
	st := Detect(s).SetupStep(s)
	if st == nil || st.Script != "" || len(st.TestEnv) != 1 || st.TestEnv[0] != "PYTHONPATH=src" {
		t.Fatalf("SetupStep = %+v, want only PYTHONPATH=src", st)
	}
}

func sortStrings(s []string) []string {
	for i := range s {
		for j := i + 1; j < len(s); j++ {
			if s[j] < s[i] {
				s[i], s[j] = s[j], s[i]
			}
		}
	}
	return s
}

func TestPickRelease(t *testing.T) {
	vs := func(ss ...string) []lang.Version {
		var out []lang.Version
		for _, s := range ss {
			v, _ := lang.ParseVersion(s)
			out = append(out, v)
		}
		return out
	}
	tests := []struct {
		lang, rng string
		published []lang.Version
		want      string
	}{
		{"node", "^20.19.0 || ^22.12.0 || >=24.0.0", vs("18.20.4", "20.18.0", "20.19.5", "20.20.2", "22.23.3", "25.1.0", "26.10.0"), "20.20.2"},
		{"node", ">=21", vs("20.20.2", "21.7.3", "22.23.3", "23.1.0"), "22.23.3"},
		{"node", ">=23 <24", vs("22.23.3", "23.1.0", "23.2.0"), "23.2.0"},
		{"go", ">= 1.27", vs("1.26.8", "1.27.0", "1.27.4", "1.28.1"), "1.27.4"},
	}
	for _, tt := range tests {
		l := ByName(tt.lang).(lang.ReleasePicker)
		r, err := node.ParseRange(tt.rng)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := l.PickRelease(r, tt.published)
		if !ok || got.String() != tt.want {
			t.Errorf("%s PickRelease(%q) = %v %v, want %s", tt.lang, tt.rng, got, ok, tt.want)
		}
	}
}

// A project in a sub-directory is found only when no language claims the
// root: a Node repository with a Go tool in tools/ stays a Node project.
func TestDetectNested(t *testing.T) {
	if got := Name(snap(map[string]string{"README.md": "x", "v5/go.mod": "module m/v5\n"})); got != "go" {
		t.Errorf("Name(v5/go.mod only) = %q, want go", got)
	}
	if got := Name(snap(map[string]string{"package.json": "{}", "tools/go.mod": "module tools\n"})); got != "node" {
		t.Errorf("Name(package.json + tools/go.mod) = %q, want node", got)
	}
}

// TestConfiguredGoRunner: a configured `go test` command, with or without
// environment assignments in front (`env FOO=1`, `FOO=1`), is still Go's
// runner, read per test (-json added), the assignments in its Env; one
// with shell syntax or env options stays a custom command.
func TestConfiguredGoRunner(t *testing.T) {
	s := snap(map[string]string{"go.mod": "module example.com/m\n\ngo 1.22\n", "m_test.go": "package m\n"})
	tests := []struct {
		cmd  string
		args string // "" = a custom command
		env  string
	}{
		// CGO_ENABLED empty is go's default, over the image's 0 (as the
		// detected command); a CGO_ENABLED=0 of the command's replaces it.
		{"go test ./...", "go test -json ./...", "CGO_ENABLED="},
		{"env FOO=1 go test ./...", "go test -json ./...", "CGO_ENABLED=,FOO=1"},
		{"FOO=1 BAR='a b' go test -run TestX ./pkg", "go test -json -run TestX ./pkg", "CGO_ENABLED=,FOO=1,BAR=a b"},
		{"CGO_ENABLED=0 go test ./...", "go test -json ./...", "CGO_ENABLED=0"},
		{"go test -json -v ./...", "go test -json -v ./...", "CGO_ENABLED="},
		{"go test ./... -args -json", "go test -json ./... -args -json", "CGO_ENABLED="},
		{"go -C v5 test ./...", "go -C v5 test -json ./...", "CGO_ENABLED="},
		{"env -i go test ./...", "", ""},
		{"go test ./... | tee out.txt", "", ""},
		{"go vet ./...", "", ""},
		{"make test", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			r := TestCommand(s, tt.cmd)
			if tt.args == "" {
				if r.Name != testrun.RunnerCustom {
					t.Fatalf("runner = %s %q, want a custom command", r.Name, r.Args)
				}
				return
			}
			if r.Name != testrun.RunnerGo || strings.Join(r.Args, " ") != tt.args || r.Format == nil {
				t.Fatalf("runner = %s %q (format %v), want go %q", r.Name, r.Args, r.Format != nil, tt.args)
			}
			if got := strings.Join(r.Env, ","); got != tt.env {
				t.Errorf("Env = %q, want %q", got, tt.env)
			}
			// Its output is read per test, as the detected command's is.
			out := `{"Action":"pass","Package":"example.com/m","Test":"TestA"}` + "\n" + `{"Action":"fail","Package":"example.com/m","Test":"TestB"}` + "\n"
			rep := testrun.Parse(r, &sandbox.Result{ExitCode: 1, Stdout: []byte(out)}, nil)
			if rep.Passed != 1 || rep.Failed != 1 {
				t.Errorf("parsed %d passed, %d failed; want 1 and 1", rep.Passed, rep.Failed)
			}
		})
	}
}

// TestConfiguredNodeRunner: a configured jest, vitest, mocha or ava that
// package.json declares runs as the detected runner does, from
// node_modules/.bin with fixpoint's report, so it is read per test (and
// narrowed and traced); one that picks its own reporter, a runner the
// package does not declare, or another program of that name stays a
// custom command.
func TestConfiguredNodeRunner(t *testing.T) {
	s := snap(map[string]string{"package.json": `{"devDependencies":{"jest":"29","vitest":"1","mocha":"10","ava":"6"}}`, "a.test.js": ""})
	tests := []struct {
		cmd  string
		name string // "" = a custom command
		args string
		env  string
	}{
		{"npx jest --json", testrun.RunnerJest, "npx --no -- jest --json --outputFile=" + testrun.JestReportPath, ""},
		{"CI=1 jest src", testrun.RunnerJest, "npx --no -- jest src --json --outputFile=" + testrun.JestReportPath, "CI=1"},
		{"npx --no-install vitest", testrun.RunnerVitest, "npx --no -- vitest --run --reporter=default --reporter=json --outputFile=" + testrun.VitestReportPath, ""},
		{"node_modules/.bin/mocha test", testrun.RunnerMocha, "npx --no -- mocha test --reporter json --reporter-option output=" + testrun.MochaReportPath, ""},
		{"npx ava --tap", "ava", "npx --no -- ava --tap", ""},
		{"npx mocha --reporter tap --compilers js:babel-register", "", "", ""},
		{"jest --outputFile=r.json", "", "", ""},
		{"jest --watch", "", "", ""},
		{"/tmp/bin/jest", "", "", ""},
		{"npx tap test/*.js", "", "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			r := TestCommand(s, tt.cmd)
			if tt.name == "" {
				if r.Name != testrun.RunnerCustom {
					t.Fatalf("runner = %s %q, want a custom command", r.Name, r.Args)
				}
				return
			}
			if r.Name != tt.name || strings.Join(r.Args, " ") != tt.args || r.Format == nil {
				t.Fatalf("runner = %s %q (format %v), want %s %q", r.Name, r.Args, r.Format != nil, tt.name, tt.args)
			}
			if got := strings.Join(r.Env, ","); got != tt.env {
				t.Errorf("Env = %q, want %q", got, tt.env)
			}
		})
	}
	// Not declared: a global install the sandbox does not have.
	bare := snap(map[string]string{"package.json": `{"devDependencies":{"mocha":"10"}}`})
	if r := TestCommand(bare, "npx jest"); r.Name != testrun.RunnerCustom {
		t.Errorf("an undeclared jest: runner = %s %q, want a custom command", r.Name, r.Args)
	}
}

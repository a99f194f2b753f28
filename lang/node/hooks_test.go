package node

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// TestNPMHooks: the hooks a run of `npm test` reaches, as npm runs them:
// pretest and posttest; preX and postX of an `npm run X` in the test
// script or in a hook (browserify/resolve: "test": "npm run --silent
// tests-only" with a pretests-only, "pretest": "npm run lint"); none
// for a script run with --ignore-scripts, nor when .npmrc turns scripts
// off or sets its own script-shell; hooks of scripts never reached are
// left out.
func TestNPMHooks(t *testing.T) {
	resolve := map[string]string{
		"lint":           "eslint .",
		"prelint":        "echo pre",
		"pretests-only":  "cd ./test/resolver/nested_symlinks && node mylib/sync",
		"tests-only":     "tape test/*.js",
		"pretest":        "npm run lint",
		"test":           "npm run --silent tests-only",
		"posttest":       "npm run test:multirepo && npx npm@'>= 10.2' audit --production",
		"test:multirepo": "cd ./test/resolver/multirepo && npm install && npm test",
		"prebuild":       "never reached",
		"build":          "tsc",
	}
	cases := []struct {
		name    string
		scripts map[string]string
		npmrc   string
		want    []string
	}{
		{"resolve", resolve, "", []string{"pretest", "posttest", "pretests-only", "prelint"}},
		{"no hooks", map[string]string{"test": "jest", "prebuild": "x", "build": "tsc"}, "", nil},
		{"run-script and t", map[string]string{"test": "npm run-script unit && npm t", "preunit": "gen", "unit": "mocha"}, "", []string{"preunit"}},
		{"ignore-scripts flag", map[string]string{"test": "npm run --ignore-scripts unit", "preunit": "gen", "unit": "mocha"}, "", nil},
		{"ignore-scripts once", map[string]string{"test": "npm run --ignore-scripts unit && npm run unit", "preunit": "gen", "unit": "mocha"}, "", []string{"preunit"}},
		{"npmrc ignore-scripts", map[string]string{"test": "mocha", "pretest": "lint"}, "ignore-scripts=true\n", nil},
		{"npmrc script-shell", map[string]string{"test": "mocha", "pretest": "lint"}, "script-shell = /bin/bash\n", nil},
		{"npmrc other", map[string]string{"test": "mocha", "posttest": "lint"}, "; comment\nfund=false\n", []string{"posttest"}},
	}
	for _, c := range cases {
		got := npmHooks(c.scripts, c.npmrc)
		if !slices.Equal(got, c.want) {
			t.Errorf("%s: hooks %q, want %q", c.name, got, c.want)
		}
	}
}

// TestNPMHooksRunner: TestCommand sets the step shell as npm's
// script-shell for a package whose test run reaches a hook, and leaves
// the command alone otherwise.
func TestNPMHooksRunner(t *testing.T) {
	snap := func(files map[string]string) *sandbox.Snapshot {
		s := &sandbox.Snapshot{Files: map[string]sandbox.File{}}
		for k, v := range files {
			s.Files[k] = sandbox.File{Data: []byte(v)}
		}
		return s
	}
	r := Language{}.TestCommand(snap(map[string]string{"package.json": `{"scripts":{"pretest":"node lint.js","test":"node --test"}}`}))
	if r.StepShell == nil || r.StepShell.Env != "npm_config_script_shell" || !strings.Contains(r.StepShell.Script, "'pretest')") {
		t.Errorf("with a pretest: step shell %+v", r.StepShell)
	}
	if r.Args[0] != "npm" || r.Format == nil {
		t.Errorf("runner %+v, want npm test read per test", r)
	}
	if r := (Language{}).TestCommand(snap(map[string]string{"package.json": `{"scripts":{"test":"node --test"}}`})); r.StepShell != nil {
		t.Errorf("without hooks: step shell set")
	}
	if r := (Language{}).TestCommand(snap(map[string]string{"package.json": `{"scripts":{"pretest":"x","test":"node --test"}}`, ".npmrc": "ignore-scripts=true"})); r.StepShell != nil {
		t.Errorf("with ignore-scripts: step shell set")
	}
}

// TestStepShellScript runs the step shell as npm does (sh -c, with
// npm_lifecycle_event): a hook, even one whose command holds quotes,
// percent signs and newlines, is marked with its exit status and its
// output goes to stderr; any other script runs untouched, its output on
// stdout and its exit status its own.
func TestStepShellScript(t *testing.T) {
	scripts := map[string]string{"pretest": `printf '%s 100%%\n' "it's"; exit 3`, "test": "echo tests; exit 0", "post'x": "y"}
	sh := stepShell(scripts, []string{"post'x", "pretest"})
	path := filepath.Join(t.TempDir(), "step-shell")
	if err := os.WriteFile(path, []byte(sh.Script), 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(event, cmd string) (stdout, stderr string, code int) {
		c := exec.Command(path, "-c", cmd)
		c.Env = append(os.Environ(), "npm_lifecycle_event="+event)
		var o, e strings.Builder
		c.Stdout, c.Stderr = &o, &e
		err := c.Run()
		if x, ok := err.(*exec.ExitError); ok {
			code = x.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return o.String(), e.String(), code
	}
	out, errOut, code := run("pretest", scripts["pretest"])
	if code != 3 || out != "" {
		t.Errorf("hook: exit %d stdout %q, want 3 and its output on stderr", code, out)
	}
	rep := testrun.Parse(testrun.Runner{Name: testrun.RunnerNPM, Format: testrun.NPM("")}, &sandbox.Result{ExitCode: code, Stderr: []byte(errOut)}, nil)
	if len(rep.Steps) != 1 || rep.Steps[0].Exit != 3 || rep.Steps[0].Command != scripts["pretest"] || !strings.Contains(rep.Steps[0].Output, "it's 100%") {
		t.Errorf("hook steps %+v from stderr %q", rep.Steps, errOut)
	}
	out, errOut, code = run("test", scripts["test"])
	if code != 0 || out != "tests\n" || errOut != "" {
		t.Errorf("test script: exit %d stdout %q stderr %q, want it untouched", code, out, errOut)
	}
	if strings.Contains(sh.Script, "post'x") {
		t.Errorf("a script name with a quote reached the shell:\n%s", sh.Script)
	}
}

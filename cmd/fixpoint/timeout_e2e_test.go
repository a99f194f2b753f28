package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// hangingSuites are real suites in which one test passes, one fails, one
// never finishes and one would come after it: Go, pytest, node --test
// (through npm test, as a package's "test" script runs it).
var hangingSuites = []struct {
	lang, image string
	files       map[string]string
	passed      []string // ids that finished before the time limit
	failed      []string
	running     string
	notRun      string // an id that must not appear: it never started
	// warm, when set, replaces files for a first run under the default
	// limit, so that a cold build cache (Go compiles the standard library
	// on a fresh project) does not use up the short limit of the real run.
	warm map[string]string
}{
	{lang: "go", image: "fixpoint-sandbox-go", files: map[string]string{
		"go.mod":       "module example.com/hang\n\ngo 1.21\n",
		"hang_test.go": "package hang\n\nimport \"testing\"\n\nfunc TestPasses(t *testing.T) {}\nfunc TestFails(t *testing.T)  { t.Fatal(\"boom\") }\nfunc TestHangs(t *testing.T)  { select {} }\nfunc TestAfter(t *testing.T)  {}\n",
	}, passed: []string{"example.com/hang.TestPasses"}, failed: []string{"example.com/hang.TestFails"}, running: "example.com/hang.TestHangs", notRun: "example.com/hang.TestAfter",
		warm: map[string]string{"hang_test.go": "package hang\n\nimport \"testing\"\n\nfunc TestPasses(t *testing.T) {}\n"}},
	{lang: "python", image: "fixpoint-sandbox-python", files: map[string]string{
		"test_hang.py": "import time\n\n\ndef test_passes():\n    pass\n\n\ndef test_fails():\n    assert 1 == 2\n\n\ndef test_hangs():\n    time.sleep(3600)\n\n\ndef test_after():\n    pass\n",
	}, passed: []string{"test_hang.py::test_passes"}, failed: []string{"test_hang.py::test_fails"}, running: "test_hang.py::test_hangs", notRun: "test_hang.py::test_after"},
	{lang: "node", image: "fixpoint-sandbox-node", files: map[string]string{
		"package.json": `{"name":"hang","version":"1.0.0","scripts":{"test":"node --test"}}`,
		"test/hang.test.js": "const { test, describe } = require('node:test');\nconst assert = require('node:assert');\n" +
			"test('passes', () => {});\ntest('fails', () => { assert.strictEqual(1, 2); });\n" +
			"describe('group', () => {\n  test('hangs', () => new Promise(() => { setInterval(() => {}, 1000); }));\n});\ntest('after', () => {});\n",
	}, passed: []string{"passes"}, failed: []string{"fails"}, running: "group > hangs", notRun: "after"},
}

// TestTestCommandTimeoutKeepsResults: `fixpoint test --json` on a suite
// that hangs, on bwrap and docker, reports what finished before the time
// limit, names the test that was running, and names sandbox.timeout with
// the value it had (set here with --timeout).
func TestTestCommandTimeoutKeepsResults(t *testing.T) {
	for _, backend := range []string{"bwrap", "docker"} {
		t.Run(backend, func(t *testing.T) {
			if backend == "docker" {
				cli := sandboxtest.RequireDocker(t)
				for _, s := range hangingSuites {
					sandboxtest.RequireImage(t, cli, s.image)
				}
			} else {
				sandboxtest.RequireCommand(t, "bwrap")
			}
			for _, s := range hangingSuites {
				t.Run(s.lang, func(t *testing.T) {
					if backend == "bwrap" {
						sandboxtest.RequireCommand(t, map[string]string{"go": "go", "python": "python3", "node": "node"}[s.lang])
					}
					dir := t.TempDir()
					write := func(files map[string]string) {
						for name, text := range files {
							p := filepath.Join(dir, name)
							if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
								t.Fatal(err)
							}
							if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
								t.Fatal(err)
							}
						}
					}
					write(s.files)
					c := newLoopCLI(t)
					if s.warm != nil {
						write(s.warm)
						if code, out, stderr := c.run(t.Context(), "test", "--dir", dir, "--sandbox", backend); code != exitOK {
							t.Fatalf("warm-up run = %d\n%s\n%s", code, out, stderr)
						}
						write(s.files)
					}
					code, out, stderr := c.run(t.Context(), "test", "--dir", dir, "--sandbox", backend, "--timeout", "25s", "--json")
					if code != exitNotReached {
						t.Fatalf("fixpoint test = %d, want %d\nstdout:\n%s\nstderr:\n%s", code, exitNotReached, out, stderr)
					}
					var rep testrun.Report
					if err := json.Unmarshal([]byte(out), &rep); err != nil {
						t.Fatalf("--json: %v\n%s", err, out)
					}
					if !rep.TimedOut || rep.Timeout == nil {
						t.Fatalf("timed_out %v, timeout %+v; want the run stopped at its limit\n%s\nstderr:\n%s", rep.TimedOut, rep.Timeout, out, stderr)
					}
					t.Cleanup(func() {
						if t.Failed() {
							t.Logf("stderr:\n%s\noutput:\n%s", stderr, rep.Output)
						}
					})
					status := map[string]testrun.Status{}
					for _, r := range rep.Tests {
						status[r.ID] = r.Status
					}
					for _, id := range s.passed {
						if status[id] != testrun.StatusPass {
							t.Errorf("%s: status %q, want pass (finished before the limit); tests %v", id, status[id], status)
						}
					}
					for _, id := range s.failed {
						if status[id] != testrun.StatusFail {
							t.Errorf("%s: status %q, want fail; tests %v", id, status[id], status)
						}
					}
					if status[s.running] != testrun.StatusError {
						t.Errorf("%s: status %q, want error (running at the limit); tests %v", s.running, status[s.running], status)
					}
					if _, ok := status[s.notRun]; ok {
						t.Errorf("%s never started but is reported: %v", s.notRun, status)
					}
					if rep.Passed != len(s.passed) || rep.Failed != len(s.failed)+1 {
						t.Errorf("passed/failed = %d/%d, want %d/%d", rep.Passed, rep.Failed, len(s.passed), len(s.failed)+1)
					}
					to := rep.Timeout
					if to.Setting != "sandbox.timeout" || to.Limit.String() != "25s" || len(to.Running) != 1 || to.Running[0] != s.running {
						t.Errorf("timeout = %+v, want sandbox.timeout, 25s, %q running", to, s.running)
					}
					for _, w := range []string{"still running: " + s.running, `raise sandbox.timeout (now "25s")`, "--timeout", "results read before it are kept (1 passed, 1 failed)"} {
						if !strings.Contains(to.Note, w) {
							t.Errorf("note %q lacks %q", to.Note, w)
						}
					}
				})
			}
		})
	}
}

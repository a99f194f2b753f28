package main

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// loopCLI runs fixpoint commands with a private data dir and environment.
type loopCLI struct {
	t    *testing.T
	env  map[string]string
	data string
}

func newLoopCLI(t *testing.T) *loopCLI {
	c := &loopCLI{t: t, data: t.TempDir()}
	c.env = map[string]string{"FIXPOINT_DATA_DIR": c.data, "HOME": t.TempDir()}
	if b := os.Getenv("FIXPOINT_SANDBOX"); b != "" {
		c.env["FIXPOINT_SANDBOX"] = b
	}
	return c
}

// trust records the user's trust in dir's .fixpoint.toml (its user-only
// keys apply), as `fixpoint trust dir` does, in this CLI's HOME.
func (c *loopCLI) trust(dir string) {
	c.t.Helper()
	store := config.TrustStore{Dir: config.DefaultTrustDir(func(k string) string { return c.env[k] })}
	if _, err := store.TrustConfig(dir); err != nil {
		c.t.Fatal(err)
	}
}

func (c *loopCLI) run(ctx context.Context, args ...string) (code int, stdout, stderr string) {
	c.t.Helper()
	var out, errb bytes.Buffer
	a := &app{
		stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv: func(k string) string { return c.env[k] },
		logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	code = run(ctx, a, args)
	return code, out.String(), errb.String()
}

// goBugCopy copies examples/go-bug with a generous sandbox timeout (a cold
// Go build cache on a loaded machine is slow; tests never assert time).
func goBugCopy(t *testing.T) string {
	t.Helper()
	dst := sandboxtest.CopyTree(t, filepath.Join("..", "..", "examples", "go-bug"))
	os.WriteFile(filepath.Join(dst, ".fixpoint.toml"), []byte("[sandbox]\ntimeout = \"10m\"\n"), 0o644)
	return dst
}

func TestLoopCommandsUsage(t *testing.T) {
	c := newLoopCLI(t)
	badPolicy := t.TempDir()
	if err := os.WriteFile(filepath.Join(badPolicy, ".fixpoint.toml"), []byte("[policy.rules]\n\"python.nope\" = \"block\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		args []string
		want string
	}{
		{"unknown policy rule", []string{"fix", "--dir", badPolicy}, "policy.rules.python.nope: unknown rule"},
		{"solve without goal", []string{"solve", "--dir", t.TempDir()}, "solve needs a goal"},
		{"bad dir", []string{"fix", "--dir", "/nonexistent/x"}, "--dir /nonexistent/x"},
		{"negative iterations", []string{"solve", "--max-iterations", "-1", "goal"}, "--max-iterations -1"},
		{"dry-run and commit", []string{"fix", "--dry-run", "--commit"}, "exclude each other"},
		{"solve without model", []string{"solve", "--dir", t.TempDir(), "do it"}, "no model configured"},
		{"test with argument", []string{"test", "extra"}, "test takes no arguments"},
		{"history bad argument", []string{"history", "frob"}, "unknown argument"},
		{"history show unknown", []string{"history", "show", "nope"}, `run "nope": run not found`},
		{"bad flag", []string{"fix", "--frob"}, "flag provided but not defined"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, _, stderr := c.run(t.Context(), tt.args...)
			if code != exitUsage || !strings.Contains(stderr, tt.want) {
				t.Errorf("fixpoint %v = %d, stderr %q; want 2 and %q", tt.args, code, stderr, tt.want)
			}
		})
	}
}

// TestFixDemoEndToEnd: no model configured → the bundled demo model fixes
// examples/go-bug in the real sandbox; --dry-run writes nothing, a real run
// writes the verified file and --commit commits it; history lists the runs.
func TestFixDemoEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real sandbox")
	}
	c := newLoopCLI(t)
	root := goBugCopy(t)
	c.trust(root) // sandbox.timeout is a user-only key
	orig, _ := os.ReadFile(filepath.Join(root, "stats/stats.go"))

	code, out, stderr := c.run(t.Context(), "fix", "--dir", root, "--dry-run")
	if code != exitOK {
		t.Fatalf("fix --dry-run = %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	if !strings.Contains(stderr, demo.Banner) {
		t.Errorf("demo banner missing from stderr:\n%s", stderr)
	}
	if !strings.Contains(out, "VERIFIED") || !strings.Contains(out, "+\t\treturn (s[mid-1] + s[mid]) / 2, nil") {
		t.Errorf("summary lacks the verdict or the diff:\n%s", out)
	}
	if now, _ := os.ReadFile(filepath.Join(root, "stats/stats.go")); !bytes.Equal(now, orig) {
		t.Error("--dry-run wrote the workspace")
	}

	git := func(args ...string) {
		cmd := exec.Command("git", append([]string{"-C", root, "-c", "user.name=t", "-c", "user.email=t@t"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_AUTHOR_NAME=t", "GIT_AUTHOR_EMAIL=t@t", "GIT_COMMITTER_NAME=t", "GIT_COMMITTER_EMAIL=t@t")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v: %s", args, err, out)
		}
	}
	git("init", "-q")
	git("add", ".")
	git("commit", "-q", "-m", "init")
	for k, v := range map[string]string{"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"} {
		t.Setenv(k, v) // --commit runs the real git
	}
	code, out, stderr = c.run(t.Context(), "fix", "--dir", root, "--commit")
	if code != exitOK {
		t.Fatalf("fix --commit = %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	now, _ := os.ReadFile(filepath.Join(root, "stats/stats.go"))
	if !strings.Contains(string(now), "(s[mid-1] + s[mid]) / 2") {
		t.Errorf("fix did not write the verified change:\n%s", now)
	}
	logOut, _ := exec.Command("git", "-C", root, "log", "-1", "--format=%s%n%b").Output()
	if !strings.Contains(string(logOut), "fixpoint: fix failing tests") || !strings.Contains(string(logOut), "Verified in the sandbox") {
		t.Errorf("commit message = %q", logOut)
	}

	code, out, _ = c.run(t.Context(), "history")
	if code != exitOK || strings.Count(out, "verified") != 2 {
		t.Errorf("history = %d:\n%s", code, out)
	}
	id := strings.Fields(out)[0]
	code, out, _ = c.run(t.Context(), "history", "show", id)
	if code != exitOK || !strings.Contains(out, "VERIFIED") || !strings.Contains(out, "iteration 1:") || !strings.Contains(out, "stats/stats.go") {
		t.Errorf("history show = %d:\n%s", code, out)
	}

	// The tests now pass: fixpoint test exits 0 and prints JSON.
	code, out, stderr = c.run(t.Context(), "test", "--dir", root, "--json")
	if code != exitOK || !strings.Contains(out, `"runner": "go"`) || !strings.Contains(out, `"passed": `) {
		t.Errorf("test --json = %d\n%s\n%s", code, out, stderr)
	}
}

// TestFixDemoOtherProject: the demo model cannot help elsewhere; the run
// ends unverified with its explanation and exit code 1, nothing written.
func TestFixDemoOtherProject(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real sandbox")
	}
	c := newLoopCLI(t)
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "test_x.py"), []byte("import unittest\n\nclass T(unittest.TestCase):\n    def test_x(self):\n        self.assertEqual(1, 2)\n"), 0o644)
	code, out, stderr := c.run(t.Context(), "fix", "--dir", root)
	if code != exitNotReached {
		t.Fatalf("fix = %d, want 1\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(out, "NOT VERIFIED") || !strings.Contains(out, "only know how to fix examples/go-bug") {
		t.Errorf("summary does not explain:\n%s", out)
	}
}

func TestWriteChangesRefusesChangedFiles(t *testing.T) {
	root := t.TempDir()
	p := filepath.Join(root, "a.txt")
	os.WriteFile(p, []byte("edited by the user\n"), 0o644)
	err := agent.WriteChanges(root, []agent.FileChange{{Path: "a.txt", Before: []byte("old\n"), After: []byte("new\n")}})
	if err == nil || !strings.Contains(err.Error(), "changed on disk") {
		t.Fatalf("WriteChanges = %v, want changed on disk", err)
	}
	if b, _ := os.ReadFile(p); string(b) != "edited by the user\n" {
		t.Errorf("file overwritten: %q", b)
	}
}

package server

import (
	"bufio"
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestEglotE2E drives `fixpoint serve` from Emacs 28 with eglot 1.9
// (Debian elpa-eglot) in batch mode with testdata/eglot/e2e.el: runTests
// → diagnostics (eglot--diagnostics, what flymake shows); the quickfix code action; eglot's own applyEdit
// handler changes the buffer; the diagnostics clear.
func TestEglotE2E(t *testing.T) {
	emacs := sandboxtest.RequireCommand(t, "emacs")
	requireE2E(t)
	bin := fixpointBinary(t)
	model := llmtest.NewServer(calcModel())
	defer model.Close()
	root := calcProject(t, false, "")
	outFile := filepath.Join(t.TempDir(), "out.tsv")
	script, _ := filepath.Abs("testdata/eglot/e2e.el")
	ctx, cancel := contextWithTimeout(t, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, emacs, "--batch", "-Q", "-L", "/usr/share/emacs/site-lisp/elpa/eglot-1.9",
		"-L", "/usr/share/emacs/site-lisp/elpa/project-0.8.1", "-L", "/usr/share/emacs/site-lisp/elpa/xref-1.6.0",
		"-L", "/usr/share/emacs/site-lisp/elpa/seq-2.23", "-l", script)
	cmd.Dir = root
	cmd.Env = append(serveEnv(t, model.URL()), "FIXPOINT_BIN="+bin, "E2E_ROOT="+root, "E2E_OUT="+outFile, "FIXPOINT_LOG=warn")
	trustFolder(t, cmd.Env, root)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	err := cmd.Run()
	out, _ := os.ReadFile(outFile)
	t.Logf("emacs results:\n%s", out)
	if err != nil {
		t.Fatalf("emacs: %v\n%s", err, stderr.String())
	}
	got := map[string]json.RawMessage{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "\t")
		got[k] = json.RawMessage(v)
	}
	if e, ok := got["error"]; ok {
		t.Fatalf("eglot script failed: %s\n%s", e, stderr.String())
	}
	var diag struct {
		Line int    `json:"line"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(got["diagnostic"], &diag)
	if diag.Line != 7 || !strings.Contains(diag.Text, "test_add") {
		t.Errorf("diagnostic = %+v, want line 7 naming test_add", diag)
	}
	var titles []string
	_ = json.Unmarshal(got["titles"], &titles)
	if len(titles) == 0 || titles[0] != "Fix until tests pass" {
		t.Errorf("code action titles = %q", titles)
	}
	var fixed string
	_ = json.Unmarshal(got["fixed"], &fixed)
	if fixed != "def add(a, b):\n    return a + b\n" {
		t.Errorf("calc.py buffer after the fix = %q", fixed)
	}
	if string(got["cleared"]) != "t" && string(got["cleared"]) != "true" {
		t.Errorf("diagnostics were not cleared (cleared = %s)", got["cleared"])
	}
}

// goModeDir is Debian's elpa-go-mode (.ci/setup installs it): the plugin
// test runs eglot in a real major mode.
func goModeDir(t *testing.T) string {
	t.Helper()
	dirs, _ := filepath.Glob("/usr/share/emacs/site-lisp/elpa/go-mode-*")
	if len(dirs) == 0 {
		t.Fatal("go-mode for Emacs is missing: apt-get install elpa-go-mode (.ci/setup installs it)")
	}
	return dirs[0]
}

// TestEglotPluginE2E drives the real `fixpoint serve` through the shipped
// fixpoint.el (eglot-fixpoint) in Emacs 28 + eglot 1.9, batch mode, on the
// Go table project with the Docker sandbox (testdata/eglot/plugin_e2e.el),
// in go-mode: imenu (eglot's documentSymbol) works without an error; both failing cases are diagnostics on their shared line; Run Tests ends
// "tests-failing"; the progress reaches the mode-line variable although
// eglot 1.9 announces no work-done progress; the verified solve is shown
// in the diff buffer and asked with y/n before it lands, the file it
// creates included.
func TestEglotPluginE2E(t *testing.T) {
	emacs := sandboxtest.RequireCommand(t, "emacs")
	requireE2E(t)
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, "fixpoint-sandbox-go")
	bin := fixpointBinary(t)
	model := llmtest.NewServer(goTableModel())
	defer model.Close()
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS("testdata/nvim/gotable")); err != nil {
		t.Fatal(err)
	}
	outFile := filepath.Join(t.TempDir(), "out.tsv")
	script, _ := filepath.Abs("testdata/eglot/plugin_e2e.el")
	plugin, _ := filepath.Abs("../editors/emacs")
	ctx, cancel := contextWithTimeout(t, 10*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, emacs, "--batch", "-Q", "-L", "/usr/share/emacs/site-lisp/elpa/eglot-1.9",
		"-L", "/usr/share/emacs/site-lisp/elpa/project-0.8.1", "-L", "/usr/share/emacs/site-lisp/elpa/xref-1.6.0",
		"-L", "/usr/share/emacs/site-lisp/elpa/seq-2.23", "-L", goModeDir(t), "-L", plugin, "-l", script)
	cmd.Dir = root
	cmd.Env = append(serveEnv(t, model.URL()), "FIXPOINT_IMAGE=fixpoint-sandbox-go",
		"FIXPOINT_BIN="+bin, "E2E_ROOT="+root, "E2E_OUT="+outFile, "FIXPOINT_LOG=warn")
	trustFolder(t, cmd.Env, root)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stderr, &stderr
	err := cmd.Run()
	out, _ := os.ReadFile(outFile)
	t.Logf("emacs results:\n%s", out)
	if err != nil {
		t.Fatalf("emacs: %v\n%s", err, stderr.String())
	}
	got := map[string]json.RawMessage{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "\t")
		got[k] = json.RawMessage(v)
	}
	if e, ok := got["error"]; ok {
		t.Fatalf("eglot plugin script failed: %s\n%s", e, stderr.String())
	}
	var imenu struct {
		OK    bool     `json:"ok"`
		Mode  string   `json:"mode"`
		Error string   `json:"error"`
		Names []string `json:"names"`
	}
	_ = json.Unmarshal(got["imenu"], &imenu)
	if !imenu.OK || imenu.Mode != "go-mode" {
		t.Errorf("imenu in the go-mode buffer = %+v, want no error in go-mode (eglot asks documentSymbol first)", imenu)
	}
	if s := stderr.String(); strings.Contains(s, "method not found") || strings.Contains(s, "-32601") {
		t.Errorf("a request eglot sent was refused:\n%s", s)
	}
	var diags []struct {
		Line int    `json:"line"`
		Text string `json:"text"`
	}
	_ = json.Unmarshal(got["diagnostics"], &diags)
	var texts []string
	for _, d := range diags {
		if d.Line != 15 {
			t.Errorf("diagnostic %+v, want line 15 (0-based)", d)
		}
		texts = append(texts, d.Text)
	}
	all := strings.Join(texts, "\n")
	if len(diags) != 2 || !strings.Contains(all, "Median([4 1 3 2]) = 3, want 2.5") || !strings.Contains(all, "Median([1 2]) = 2, want 1.5") {
		t.Errorf("diagnostics = %q, want both failing cases", texts)
	}
	var testStatus string
	_ = json.Unmarshal(got["test_status"], &testStatus)
	if testStatus != "fixpoint: 1 failing" {
		t.Errorf("fixpoint-status after run-tests = %q, want \"fixpoint: 1 failing\"", testStatus)
	}
	var asked struct {
		Prompt string `json:"prompt"`
		Diff   string `json:"diff"`
	}
	_ = json.Unmarshal(got["asked"], &asked)
	if !strings.Contains(asked.Prompt, "mean.go (+10 −0)") || !strings.Contains(asked.Prompt, "stats.go (+3 −0)") {
		t.Errorf("y-or-n-p prompt = %q, want the files with their line counts", asked.Prompt)
	}
	if !strings.Contains(asked.Diff, "+func Mean(xs []float64) float64 {") || !strings.Contains(asked.Diff, "verified: 1 iteration") {
		t.Errorf("*fixpoint diff* = %q, want the diff and the verification", asked.Diff)
	}
	var mean, stats string
	_ = json.Unmarshal(got["mean"], &mean)
	_ = json.Unmarshal(got["stats"], &stats)
	if mean != goTableMean {
		t.Errorf("mean.go buffer = %q, want %q", mean, goTableMean)
	}
	if !strings.Contains(stats, "return (s[mid-1] + s[mid]) / 2") {
		t.Errorf("stats.go buffer = %q, want the fix", stats)
	}
	var statuses []string
	_ = json.Unmarshal(got["statuses"], &statuses)
	sawIteration := false
	for _, s := range statuses {
		if strings.HasPrefix(s, "fixpoint 1/") {
			sawIteration = true
		}
	}
	if !sawIteration || len(statuses) == 0 || statuses[len(statuses)-1] != "fixpoint: applied" {
		t.Errorf("fixpoint-status values = %q, want progress with the iteration, ending \"fixpoint: applied\"", statuses)
	}
	if string(got["mode_line"]) != "true" {
		t.Errorf("fixpoint-status is not in the mode line (mode_line = %s)", got["mode_line"])
	}
}

// TestEglotFirstRunMessages drives the real `fixpoint serve` through
// fixpoint.el in Emacs 28 + eglot 1.9 (batch, go-mode) as a first-time
// user meets it (testdata/eglot/firstrun.el), and checks what the echo
// area shows: with no model and no Docker engine, the demo-model banner
// (where the settings and the key go) and the no-Docker notice (the fix
// for the user's system), each once; with the Docker sandbox chosen and no
// engine, the Docker error once and whole, not cut to a line nor repeated
// by the run's final status.
func TestEglotFirstRunMessages(t *testing.T) {
	emacs := sandboxtest.RequireCommand(t, "emacs")
	sandboxtest.RequireCommand(t, "bwrap")
	bin := fixpointBinary(t)
	noDocker := "DOCKER_HOST=unix:///nonexistent/docker.sock"
	cases := []struct {
		name, action string
		env          []string
		want         []string // regexps: each shown exactly once
	}{
		{
			name: "no model, no Docker", action: "fix",
			env:  []string{"FIXPOINT_SANDBOX=", noDocker},
			want: []string{"no model configured: running the bundled scripted demo model.*FIXPOINT_API_KEY", "no Docker engine answers.*apt-get install docker.io"},
		},
		{
			name: "Docker chosen, no engine", action: "test",
			env:  []string{"FIXPOINT_SANDBOX=docker", noDocker},
			want: []string{"Cannot connect to the Docker daemon at unix:///nonexistent/docker.sock. Is the docker daemon running\\?"},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			root := t.TempDir()
			if err := os.CopyFS(root, os.DirFS("testdata/nvim/gotable")); err != nil {
				t.Fatal(err)
			}
			outFile := filepath.Join(t.TempDir(), "out.tsv")
			script, _ := filepath.Abs("testdata/eglot/firstrun.el")
			plugin, _ := filepath.Abs("../editors/emacs")
			ctx, cancel := contextWithTimeout(t, 5*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, emacs, "--batch", "-Q", "-L", "/usr/share/emacs/site-lisp/elpa/eglot-1.9",
				"-L", "/usr/share/emacs/site-lisp/elpa/project-0.8.1", "-L", "/usr/share/emacs/site-lisp/elpa/xref-1.6.0",
				"-L", "/usr/share/emacs/site-lisp/elpa/seq-2.23", "-L", goModeDir(t), "-L", plugin, "-l", script)
			cmd.Dir = root
			var env []string
			for _, kv := range serveEnv(t, "") {
				if !strings.HasPrefix(kv, "FIXPOINT_BASE_URL=") && !strings.HasPrefix(kv, "FIXPOINT_MODEL=") && !strings.HasPrefix(kv, "OPENAI_") && !strings.HasPrefix(kv, "DOCKER_HOST=") {
					env = append(env, kv)
				}
			}
			cmd.Env = append(append(env, tc.env...), "FIXPOINT_BIN="+bin, "E2E_ROOT="+root, "E2E_OUT="+outFile,
				"E2E_ACTION="+tc.action, "E2E_WANT="+strings.Join(tc.want, "|||"), "FIXPOINT_LOG=warn")
			trustFolder(t, cmd.Env, root)
			var stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stderr, &stderr
			err := cmd.Run()
			out, _ := os.ReadFile(outFile)
			t.Logf("emacs results:\n%s", out)
			if err != nil {
				t.Fatalf("emacs: %v\n%s", err, stderr.String())
			}
			got := map[string]json.RawMessage{}
			for _, line := range strings.Split(string(out), "\n") {
				k, v, _ := strings.Cut(line, "\t")
				got[k] = json.RawMessage(v)
			}
			if e, ok := got["error"]; ok {
				t.Fatalf("firstrun.el failed: %s\n%s", e, stderr.String())
			}
			var msgs []string
			_ = json.Unmarshal(got["messages"], &msgs)
			for _, w := range tc.want {
				re := regexp.MustCompile("(?s)" + w)
				n := 0
				for _, m := range msgs {
					if re.MatchString(m) {
						n++
					}
				}
				if n != 1 {
					t.Errorf("%d messages match %q, want exactly one; messages:\n%s", n, w, strings.Join(msgs, "\n---\n"))
				}
			}
			for _, m := range msgs {
				if strings.Contains(m, "Server reports") {
					t.Errorf("a message with eglot's prefix (not fixpoint.el's): %q", m)
				}
			}
			if tc.action == "test" {
				var status string
				_ = json.Unmarshal(got["status"], &status)
				if status != "fixpoint: failed" {
					t.Errorf("fixpoint-status = %q, want \"fixpoint: failed\"", status)
				}
				// The error is one message: the reason was not echoed again.
				n := 0
				for _, m := range msgs {
					if strings.Contains(m, "Cannot connect to the Docker daemon") {
						n++
					}
				}
				if n != 1 {
					t.Errorf("the Docker error was shown %d times", n)
				}
			}
		})
	}
}

//go:build vscode_e2e

package editors

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// The scripted model for e2e/testdata/gostats: it plans, then averages the
// two middle values in Median; the goal "wait forever" hangs until the run
// is cancelled.
const (
	gostatsPlan = "1. TestMedian fails: Median ignores even-length samples.\n2. In stats.go, average the two middle values.\n3. Rerun the tests."
	gostatsFix  = "stats.go\n<<<<<<< SEARCH\n\tmid := len(s) / 2\n\treturn s[mid]\n=======\n\tmid := len(s) / 2\n\tif len(s)%2 == 0 {\n\t\treturn (s[mid-1] + s[mid]) / 2\n\t}\n\treturn s[mid]\n>>>>>>> REPLACE\n"
)

func gostatsModel() *llmtest.Script {
	return &llmtest.Script{
		Rules: []llmtest.Rule{
			{Contains: "wait forever", Reply: &llmtest.Reply{Fault: "hang"}},
			{Contains: "## Task: write a plan", Reply: &llmtest.Reply{Content: gostatsPlan}},
			{Contains: "## Task: write the edits", Reply: &llmtest.Reply{Content: gostatsFix}},
		},
		Default: &llmtest.Reply{Content: demo.CannotHelp},
		Models:  []string{"llmtest", "other-model"},
	}
}

// TestVSCodeEndToEnd installs the packaged extension in a real VS Code
// (code-server) and drives it from headless Chromium with playwright-core
// (e2e/run.mjs) against the real `fixpoint serve`, built here, with a
// scripted model and the Docker sandbox (fixpoint-sandbox-go): activation,
// the palette's when-clauses, Run Tests, Fix Until Tests Pass landing its
// verified edit with a cancellable progress notification and one status
// item, cancelling a run, and the model picker. It is compiled only with
// -tags vscode_e2e: `make vscode-e2e` installs code-server and
// playwright-core (e2e/install.sh) and sets CODE_SERVER and
// PLAYWRIGHT_CORE. Without them it fails under CI=true and skips otherwise.
func TestVSCodeEndToEnd(t *testing.T) {
	model := llmtest.NewServer(gostatsModel())
	defer model.Close()
	vscodeE2E(t, "", "FIXPOINT_BASE_URL="+model.URL(), "FIXPOINT_MODEL=llmtest", "FIXPOINT_SANDBOX=docker", "FIXPOINT_IMAGE=fixpoint-sandbox-go")
}

// TestVSCodeFirstRun is the first run of a user with no model configured
// and no Docker engine (e2e/run.mjs with E2E_MODE=firstrun): Fix Until
// Tests Pass shows the demo-model banner (where the settings and the key
// go) and the no-Docker notice (the fix for the user's system), each
// exactly once, and the run's progress changes while the sandbox is
// prepared (bwrap compiles Go's standard library the first time).
func TestVSCodeFirstRun(t *testing.T) {
	sandboxtest.RequireCommand(t, "bwrap")
	vscodeE2E(t, "firstrun", "FIXPOINT_BASE_URL=", "FIXPOINT_MODEL=", "FIXPOINT_SANDBOX=", "DOCKER_HOST=unix:///nonexistent/docker.sock")
}

// vscodeE2E packages the extension, builds fixpoint and runs e2e/run.mjs
// in mode ("" = the main flow) with extra environment.
func vscodeE2E(t *testing.T, mode string, extra ...string) {
	codeServer, playwright := os.Getenv("CODE_SERVER"), os.Getenv("PLAYWRIGHT_CORE")
	if codeServer == "" || playwright == "" {
		msg := "CODE_SERVER and PLAYWRIGHT_CORE are not set: run `make vscode-e2e`, which installs code-server and playwright-core with editors/vscode/e2e/install.sh"
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	node := sandboxtest.RequireCommand(t, "node")
	npm := sandboxtest.RequireCommand(t, "npm")
	sandboxtest.RequireCommand(t, "chromium")
	if mode == "" {
		cli := sandboxtest.RequireDocker(t)
		sandboxtest.RequireImage(t, cli, "fixpoint-sandbox-go")
	}

	dir := abs(t, "vscode")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err != nil {
		run(t, 10*time.Minute, dir, nil, npm, "ci", "--no-audit", "--no-fund")
	}
	tmp := t.TempDir()
	vsix := filepath.Join(tmp, "fixpoint-e2e.vsix")
	run(t, 5*time.Minute, dir, nil, npm, "run", "package", "--", "--out", vsix)
	bin := filepath.Join(tmp, "fixpoint")
	run(t, 5*time.Minute, abs(t, ".."), nil, "go", "build", "-o", bin, "./cmd/fixpoint")

	project := filepath.Join(tmp, "gostats")
	if err := os.CopyFS(project, os.DirFS(filepath.Join(dir, "e2e", "testdata", "gostats"))); err != nil {
		t.Fatal(err)
	}

	home := filepath.Join(tmp, "home")
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "FIXPOINT_") && !strings.HasPrefix(kv, "OPENAI_") {
			env = append(env, kv)
		}
	}
	env = append(env,
		"CODE_SERVER="+codeServer, "PLAYWRIGHT_CORE="+playwright, "FIXPOINT_BIN="+bin, "E2E_PROJECT="+project, "E2E_MODE="+mode,
		"TMPDIR="+tmp, "HOME="+home, "XDG_CONFIG_HOME="+filepath.Join(home, ".config"), "XDG_DATA_HOME="+filepath.Join(home, ".local"),
		"FIXPOINT_DATA_DIR="+filepath.Join(home, "fixpoint"), "FIXPOINT_API_KEY=", "FIXPOINT_LOG=debug")
	env = append(env, extra...)
	if d := os.Getenv("E2E_SCREENS"); d != "" {
		env = append(env, "E2E_SCREENS="+d)
	}
	// run.mjs starts code-server in a process group of its own and writes its id here.
	pidFile := filepath.Join(tmp, "code-server.pid")
	env = append(env, "E2E_PIDFILE="+pidFile)
	out, err := runGroup(t, 10*time.Minute, dir, env, node, "e2e/run.mjs", vsix)
	if data, rerr := os.ReadFile(pidFile); rerr == nil {
		if pgid, perr := strconv.Atoi(strings.TrimSpace(string(data))); perr == nil && pgid > 1 {
			killGroup(t, pgid)
		}
	}
	t.Log(out)
	if err != nil || !strings.Contains(out, "all end-to-end checks passed") || strings.Contains(out, "FAIL ") {
		t.Fatalf("e2e/run.mjs: %v", err)
	}
}

// runGroup runs a command in its own process group and, however it ends
// (exit, timeout), terminates the whole group: code-server, its extension
// host, fixpoint serve and Chromium never outlive the test.
func runGroup(t *testing.T, timeout time.Duration, dir string, env []string, name string, args ...string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM) }
	cmd.WaitDelay = 15 * time.Second
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	if err := cmd.Start(); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	err := cmd.Wait()
	killGroup(t, cmd.Process.Pid)
	if ctx.Err() != nil {
		err = errors.Join(err, ctx.Err())
	}
	return buf.String(), err
}

// killGroup ends what is left of process group pgid: TERM first (fixpoint
// serve removes its containers), then KILL.
func killGroup(t *testing.T, pgid int) {
	t.Helper()
	if syscall.Kill(-pgid, syscall.SIGTERM) != nil {
		return // no process left in the group
	}
	// Wait for the group to exit (it removes its containers first), at
	// most a few seconds, checking every few milliseconds.
	for deadline := time.Now().Add(3 * time.Second); time.Now().Before(deadline); {
		if syscall.Kill(-pgid, 0) != nil {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	if syscall.Kill(-pgid, syscall.SIGKILL) == nil {
		t.Logf("killed processes left in group %d", pgid)
	}
}

package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"

	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/engine"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// The end-to-end tests run the real `fixpoint serve` binary with the real
// agent engine and Docker sandbox; only the model is scripted (llmtest).

var buildOnce struct {
	sync.Once
	bin string
	err error
	out []byte
}

// fixpointBinary builds cmd/fixpoint once per test process.
func fixpointBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		dir, err := os.MkdirTemp("", "fixpoint-bin-")
		if err != nil {
			buildOnce.err = err
			return
		}
		buildOnce.bin = filepath.Join(dir, "fixpoint")
		buildOnce.out, buildOnce.err = exec.Command("go", "build", "-o", buildOnce.bin, "../cmd/fixpoint").CombinedOutput()
	})
	if buildOnce.err != nil {
		t.Fatalf("go build ../cmd/fixpoint: %v\n%s", buildOnce.err, buildOnce.out)
	}
	return buildOnce.bin
}

// The calc project is Python. It was chosen when the Go sandbox image had
// no warm build cache (a Go test run took minutes); fixpoint-sandbox-go now
// ships one, and TestNeovimE2E also runs a Go project (testdata/nvim/gostats).
const (
	calcPy     = "def add(a, b):\n    return a - b\n"
	calcTestPy = "import unittest\n\nfrom calc import add\n\n\nclass TestAdd(unittest.TestCase):\n    def test_add(self):\n        self.assertEqual(add(2, 3), 5)\n\n\nif __name__ == \"__main__\":\n    unittest.main()\n"
	calcPlan   = "1. test_add fails: add subtracts.\n2. In calc.py, return a + b.\n3. Rerun the tests."
	calcFix    = "calc.py\n<<<<<<< SEARCH\n    return a - b\n=======\n    return a + b\n>>>>>>> REPLACE\n"
	mulSolve   = "calc.py\n<<<<<<< SEARCH\ndef add(a, b):\n=======\ndef mul(a, b):\n    return a * b\n\n\ndef add(a, b):\n>>>>>>> REPLACE\n\n" +
		"test_calc.py\n<<<<<<< SEARCH\nclass TestAdd(unittest.TestCase):\n=======\nclass TestMul(unittest.TestCase):\n    def test_mul(self):\n        from calc import mul\n        self.assertEqual(mul(2, 3), 6)\n\n\nclass TestAdd(unittest.TestCase):\n>>>>>>> REPLACE\n"
)

// calcProject writes the e2e project: add is wrong unless fixed is set;
// header is prepended to calc.py (a goal comment).
func calcProject(t testing.TB, fixed bool, header string) string {
	t.Helper()
	root := t.TempDir()
	calc := calcPy
	if fixed {
		calc = strings.Replace(calc, "a - b", "a + b", 1)
	}
	for name, data := range map[string]string{"calc.py": header + calc, "test_calc.py": calcTestPy} {
		if err := os.WriteFile(filepath.Join(root, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// calcModel scripts the model: a plan, the fix for add, and for the goal
// "add a mul function" the new function with its test.
func calcModel() *llmtest.Script {
	return &llmtest.Script{
		Rules: []llmtest.Rule{
			{Contains: "## Task: write a plan", Reply: &llmtest.Reply{Content: calcPlan}},
			{Contains: "add a mul function", Last: true, Reply: &llmtest.Reply{Content: mulSolve}},
			{Contains: "## Task: write the edits", Reply: &llmtest.Reply{Content: calcFix}},
		},
		Default: &llmtest.Reply{Content: demo.CannotHelp},
	}
}

// serveEnv is the environment of a fixpoint serve process under test.
func serveEnv(t testing.TB, modelURL string) []string {
	home := t.TempDir()
	return append(os.Environ(),
		"HOME="+home, "XDG_CONFIG_HOME="+home, "FIXPOINT_DATA_DIR="+filepath.Join(home, "data"),
		"FIXPOINT_BASE_URL="+modelURL, "FIXPOINT_MODEL=llmtest", "FIXPOINT_SANDBOX=docker", "FIXPOINT_IMAGE=fixpoint-sandbox-python", "FIXPOINT_LOG=debug",
		"FIXPOINT_API_KEY=")
}

// trustFolder records the user's trust in root under env's
// XDG_CONFIG_HOME, as `fixpoint trust` or the editor's trust question
// would: the server prepares and runs only trusted folders.
func trustFolder(t testing.TB, env []string, root string) {
	t.Helper()
	store := config.TrustStore{Dir: filepath.Join(envValue(env, "XDG_CONFIG_HOME"), "fixpoint", "trust")}
	if _, err := store.TrustFolder(root); err != nil {
		t.Fatal(err)
	}
}

// procConn is a process's stdin/stdout as one connection.
type procConn struct {
	io.Reader
	io.WriteCloser
}

func requireE2E(t *testing.T) {
	t.Helper()
	if testing.Short() {
		t.Skip("end-to-end: builds fixpoint and runs Docker")
	}
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, "fixpoint-sandbox-python")
}

// TestE2EFixTestsRealEngine: fixpoint.fixTests on the calc project through
// the real binary, engine and Docker sandbox: baseline diagnostics at the
// failing assertion, then ONE versioned applyEdit with the fix, then the
// diagnostics cleared; shutdown/exit ends the process with code 0.
func TestE2EFixTestsRealEngine(t *testing.T) {
	requireE2E(t)
	bin := fixpointBinary(t)
	model := llmtest.NewServer(calcModel())
	defer model.Close()
	root := calcProject(t, false, "")
	var stderr bytes.Buffer
	e := newFakeEditor(t, editorOptions{root: root, timeout: 3 * time.Minute, connect: func(root string) (io.ReadWriteCloser, func() error) {
		cmd := exec.Command(bin, "serve")
		cmd.Dir = root
		cmd.Env = serveEnv(t, model.URL())
		trustFolder(t, cmd.Env, root)
		cmd.Stderr = &stderr
		in, _ := cmd.StdinPipe()
		out, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill() })
		return procConn{out, in}, cmd.Wait
	}})
	defer func() {
		if t.Failed() {
			t.Logf("fixpoint serve stderr:\n%s", stderr.String())
		}
	}()
	e.initialize(vscodeCaps)
	e.wait("workspace/configuration", "")
	e.open("calc.py", 7)
	res := e.mustCall("workspace/executeCommand", map[string]any{"command": cmdFixTests, "arguments": []any{map[string]any{"uri": e.uri("test_calc.py")}}})
	if !strings.Contains(string(res), `"started":true`) {
		t.Fatalf("fixTests = %s", res)
	}
	diag := e.wait("textDocument/publishDiagnostics", "test_calc.py")
	if !strings.Contains(string(diag), `"source":"fixpoint"`) || !strings.Contains(string(diag), "test_add") || !strings.Contains(string(diag), `"line":7`) {
		t.Errorf("baseline diagnostics = %s", diag)
	}
	edit := e.wait("workspace/applyEdit", "")
	var p struct {
		Edit workspaceEdit `json:"edit"`
	}
	if err := json.Unmarshal(edit, &struct {
		Params any `json:"params"`
	}{&p}); err != nil {
		t.Fatal(err)
	}
	if len(p.Edit.DocumentChanges) != 1 {
		t.Fatalf("applyEdit = %s, want one TextDocumentEdit", edit)
	}
	s := string(edit)
	if !strings.Contains(s, `"version":7`) || !strings.Contains(s, `"newText":"    return a + b\n"`) || !strings.Contains(s, "calc.py") {
		t.Errorf("applyEdit = %s, want a versioned edit (7) of calc.py with the fix", edit)
	}
	if strings.Contains(s, "def add") {
		t.Errorf("applyEdit replaces the whole file, want minimal line edits: %s", edit)
	}
	// VS Code announces change annotations: the edit asks for confirmation.
	if !strings.Contains(s, `"annotationId":"fixpoint"`) || !strings.Contains(s, `"needsConfirmation":true`) || !strings.Contains(s, `"description":"verified: 1 iteration, 1 test passing"`) {
		t.Errorf("applyEdit = %s, want every edit under the fixpoint annotation that needs confirmation", edit)
	}
	final := e.wait(methodStatus, `"state":"applied"`)
	var st struct {
		Params statusParams `json:"params"`
	}
	_ = json.Unmarshal(final, &st)
	if st.Params.Kind != "fix" || len(st.Params.Files) != 1 || st.Params.Files[0] != (statusFile{Path: "calc.py", Added: 1, Removed: 1}) ||
		!strings.Contains(st.Params.Diff, "+    return a + b") || st.Params.Passing != 1 {
		t.Errorf("final $/fixpoint/status = %+v, want fix applied to calc.py (+1 -1) with the diff, 1 passing", st.Params)
	}
	e.transcriptHas(t, `"diagnostics":[],"uri":"$ROOT/test_calc.py"`)
	before, _ := os.ReadFile(filepath.Join(root, "calc.py"))
	if strings.Contains(string(before), "a + b") {
		t.Error("the server wrote the file itself; only the editor may")
	}
	e.mustCall("shutdown", nil)
	e.notify("exit", nil)
	select {
	case err := <-e.serveCh:
		e.serveCh <- err
		if err != nil {
			t.Errorf("fixpoint serve exit: %v, want exit code 0", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("fixpoint serve did not exit after shutdown/exit")
	}
}

// transcriptHas fails when no message in the canonical transcript
// (sorted keys, workspace as $ROOT) contains s.
func (e *fakeEditor) transcriptHas(t *testing.T, s string) {
	t.Helper()
	if !strings.Contains(e.transcript(), s) {
		t.Errorf("no message contains %s; transcript:\n%s", s, e.transcript())
	}
}

func contextWithTimeout(t *testing.T, d time.Duration) (context.Context, context.CancelFunc) {
	return context.WithTimeout(t.Context(), d)
}

// TestE2EDisconnectMidRun is issue 9's "LSP client disconnect mid-run"
// row with the real binary and Docker: the editor's end of stdio closes
// while the model hangs; the run is cancelled, the sandbox container is
// removed and the process exits (code 1: no shutdown).
func TestE2EDisconnectMidRun(t *testing.T) {
	requireE2E(t)
	cli := sandboxtest.RequireDocker(t)
	bin := fixpointBinary(t)
	model := llmtest.NewServer(&llmtest.Script{Default: &llmtest.Reply{Fault: "hang"}})
	defer model.Close()
	root := calcProject(t, false, "")
	cmd := exec.Command(bin, "serve")
	cmd.Dir = root
	cmd.Env = serveEnv(t, model.URL())
	trustFolder(t, cmd.Env, root)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	e := newFakeEditor(t, editorOptions{root: root, timeout: 3 * time.Minute, connect: func(string) (io.ReadWriteCloser, func() error) {
		return procConn{out, in}, cmd.Wait
	}})
	e.initialize(`{"window":{"workDoneProgress":true}}`)
	e.mustCall("workspace/executeCommand", map[string]any{"command": cmdFixTests})
	e.wait("$/progress", "asking the model for edits") // the sandbox is up; the model hangs
	label := filters.NewArgs(filters.Arg("label", fmt.Sprintf("fixpoint.pid=%d", cmd.Process.Pid)))
	if list, err := engine.ListContainers(t.Context(), cli, container.ListOptions{All: true, Filters: label}); err != nil || len(list) == 0 {
		t.Fatalf("no sandbox container for the server during the run (%v)", err)
	}
	start := time.Now()
	in.Close() // the editor crashed
	var err error
	select {
	case err = <-e.serveCh:
		e.serveCh <- err
	case <-time.After(60 * time.Second):
		t.Fatalf("fixpoint serve did not exit after stdin closed; stderr:\n%s", stderr.String())
	}
	t.Logf("exited %v after stdin EOF: %v", time.Since(start), err)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 1 {
		t.Errorf("exit = %v, want exit code 1", err)
	}
	list, err := engine.ListContainers(t.Context(), cli, container.ListOptions{All: true, Filters: label})
	if err != nil || len(list) != 0 {
		t.Errorf("containers left after disconnect: %d (%v)", len(list), err)
	}
}

// TestServeListen: `fixpoint serve --listen 127.0.0.1:PORT` accepts an
// LSP connection over TCP that presents the token it wrote, and exits 0
// after shutdown/exit.
func TestServeListen(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the fixpoint binary")
	}
	bin := fixpointBinary(t)
	cmd := exec.Command(bin, "serve", "--listen", "127.0.0.1:0")
	cmd.Env = serveEnv(t, "http://127.0.0.1:9/v1")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer cmd.Process.Kill()
	sc := bufio.NewScanner(stderr)
	addr, tokenFile := "", ""
	for tokenFile == "" && sc.Scan() {
		if a, ok := strings.CutPrefix(sc.Text(), "fixpoint: listening on "); ok {
			addr = a
		}
		if f, ok := strings.CutPrefix(sc.Text(), "fixpoint: token in "); ok {
			tokenFile, _, _ = strings.Cut(f, ": ")
		}
	}
	go io.Copy(io.Discard, stderr)
	if addr == "" || tokenFile == "" {
		t.Fatal("no listening address or token file printed")
	}
	token, err := os.ReadFile(tokenFile)
	if err != nil {
		t.Fatal(err)
	}
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c := &rawClient{t: t, conn: conn, in: bufio.NewReader(conn)}
	// TCP needs the token (cmd/fixpoint/listen.go).
	c.send(strings.Replace(initBody, `"capabilities":{}`, `"capabilities":{},"initializationOptions":{"fixpointToken":"`+strings.TrimSpace(string(token))+`"}`, 1))
	if m := c.read(); m["result"] == nil {
		t.Fatalf("initialize over TCP = %v", m)
	}
	c.send(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`)
	c.read()
	c.send(`{"jsonrpc":"2.0","method":"exit"}`)
	if err := cmd.Wait(); err != nil {
		t.Fatalf("fixpoint serve --listen exit: %v, want 0", err)
	}
}

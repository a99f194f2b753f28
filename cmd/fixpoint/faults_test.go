package main

// Fault injection against the real binary (issue 9): signals during a CLI
// run, an LSP client that disconnects mid-run, and two runs racing on one
// project. Each builds fixpoint with `go build`, runs it as a child process
// against the docker sandbox and a scripted model (agent/llmtest), and
// checks exit codes, leftover containers (labelled fixpoint.pid=<child>)
// and the workspace bytes.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/memory"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/engine"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// faultCodeMark marks the code request, the first request of a run (there
// is no separate plan request).
const faultCodeMark = "## Task: write the edits"

// faultPyFix makes agent/testdata/py-bug pass.
var faultPyFix = llmtest.EditBlock("textkit/chunks.py",
	"    for i in range(0, len(seq) - size + 1, size):\n",
	"    for i in range(0, len(seq), size):\n")

// faultRequire needs the engine and the python sandbox image.
func faultRequire(t *testing.T) *client.Client {
	t.Helper()
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, "fixpoint-sandbox-python")
	return cli
}

// buildFixpoint builds this command into a temp dir.
func buildFixpoint(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "fixpoint")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// faultWorkspace copies agent/testdata/py-bug into a temp dir.
func faultWorkspace(t *testing.T) string {
	t.Helper()
	return sandboxtest.CopyTree(t, filepath.Join("..", "..", "agent", "testdata", "py-bug"))
}

// faultTree reads every file under root.
func faultTree(t *testing.T, root string) map[string]string {
	t.Helper()
	return sandboxtest.ReadTree(t, root)
}

func faultSameTree(t *testing.T, root string, before map[string]string) {
	t.Helper()
	after := faultTree(t, root)
	if len(after) != len(before) {
		t.Errorf("workspace has %d files, had %d", len(after), len(before))
	}
	for p, b := range before {
		if after[p] != b {
			t.Errorf("%s changed on disk", p)
		}
	}
}

// faultEnv is the child's environment: a private HOME and data dir, the
// docker sandbox and the scripted model.
func faultEnv(t *testing.T, baseURL, dataDir string) []string {
	t.Helper()
	return []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + t.TempDir(),
		"FIXPOINT_BASE_URL=" + baseURL,
		"FIXPOINT_MODEL=llmtest",
		"FIXPOINT_DATA_DIR=" + dataDir,
		"FIXPOINT_SANDBOX=docker",
	}
}

// trustFolderIn records folder trust for dir in the trust store of the
// child environment env (its HOME).
func trustFolderIn(t *testing.T, env []string, dir string) {
	t.Helper()
	getenv := func(k string) string {
		v := ""
		for _, kv := range env {
			if val, ok := strings.CutPrefix(kv, k+"="); ok {
				v = val
			}
		}
		return v
	}
	if _, err := (config.TrustStore{Dir: config.DefaultTrustDir(getenv)}).TrustFolder(dir); err != nil {
		t.Fatal(err)
	}
}

// child is a running fixpoint process.
type child struct {
	cmd    *exec.Cmd
	stderr *lockedBuffer
	done   chan struct{}
	code   int
}

type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

func startChild(t *testing.T, bin string, env []string, stdin io.Reader, stdout io.Writer, args ...string) *child {
	t.Helper()
	c := &child{cmd: exec.Command(bin, args...), stderr: &lockedBuffer{}, done: make(chan struct{})}
	c.cmd.Env = env
	c.cmd.Stdin = stdin
	c.cmd.Stdout = stdout
	c.cmd.Stderr = c.stderr
	c.cmd.WaitDelay = 5 * time.Second // stdin/stdout may be pipes the test holds
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		c.cmd.Wait()
		c.code = c.cmd.ProcessState.ExitCode()
		close(c.done)
	}()
	t.Cleanup(func() {
		select {
		case <-c.done:
		default:
			c.cmd.Process.Kill()
			<-c.done
		}
	})
	return c
}

// wait waits (bounded) for the child to exit and returns its exit code.
func (c *child) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-c.done:
		return c.code
	case <-time.After(d):
		c.cmd.Process.Kill()
		<-c.done
		t.Fatalf("fixpoint did not exit within %s; stderr:\n%s", d, c.stderr.String())
		return -1
	}
}

// containersOf lists the containers labelled fixpoint.pid=pid.
func containersOf(t *testing.T, cli *client.Client, pid int) []container.Summary {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	list, err := engine.ListContainers(ctx, cli, container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", docker.LabelPID+"="+strconv.Itoa(pid)))})
	if err != nil {
		t.Fatal(err)
	}
	return list
}

// waitFor polls cond (bounded) while the child runs.
func waitFor(t *testing.T, c *child, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for !cond() {
		select {
		case <-c.done:
			t.Fatalf("fixpoint exited (%d) before %s; stderr:\n%s", c.code, what, c.stderr.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s; stderr:\n%s", what, c.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// running reports whether a container of pid runs a process whose command
// line contains s.
func running(t *testing.T, cli *client.Client, pid int, s string) bool {
	for _, c := range containersOf(t, cli, pid) {
		top, err := cli.ContainerTop(context.Background(), c.ID, nil)
		if err != nil {
			continue
		}
		for _, p := range top.Processes {
			if strings.Contains(strings.Join(p, " "), s) {
				return true
			}
		}
	}
	return false
}

// TestFaultSignals stops `fixpoint fix` with SIGINT while it waits on a
// hanging model and with SIGTERM while the test command runs: exit 130 or
// 143, no container of the process left, the workspace byte for byte the
// same.
func TestFaultSignals(t *testing.T) {
	cli := faultRequire(t)
	bin := buildFixpoint(t)
	cases := []struct {
		name    string
		sig     syscall.Signal
		want    int
		testCmd string                                            // "" = detected
		ready   func(t *testing.T, c *child, srv *llmtest.Server) // in the phase to interrupt
	}{
		{"SIGINT waiting on the model", syscall.SIGINT, 130, "", func(t *testing.T, c *child, srv *llmtest.Server) {
			ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
			defer cancel()
			if err := srv.Wait(ctx, 1); err != nil {
				t.Fatalf("the model was never asked: %v; stderr:\n%s", err, c.stderr.String())
			}
		}},
		{"SIGTERM during the tests", syscall.SIGTERM, 143, "sh -c 'sleep 77; python3 -m unittest'", func(t *testing.T, c *child, srv *llmtest.Server) {
			waitFor(t, c, "the test command to run", func() bool { return running(t, cli, c.cmd.Process.Pid, "sleep 77") })
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(&llmtest.Script{Rules: []llmtest.Rule{
				{Contains: faultCodeMark, Role: "user", Reply: &llmtest.Reply{Fault: llmtest.FaultHang}},
			}})
			defer srv.Close()
			ws := faultWorkspace(t)
			before := faultTree(t, ws)
			args := []string{"fix", "--dir", ws}
			if tc.testCmd != "" {
				args = append(args, "--test-cmd", tc.testCmd)
			}
			c := startChild(t, bin, faultEnv(t, srv.URL(), t.TempDir()), nil, nil, args...)
			tc.ready(t, c, srv)
			pid := c.cmd.Process.Pid
			// While the tests run a container must exist (its removal is
			// what the case checks). While the model is asked there may be
			// none: the working session starts when an iteration first
			// runs tests (agent/prestart.go); then the case checks that the
			// interrupted run starts none and exits 130.
			if n := len(containersOf(t, cli, pid)); n == 0 && tc.testCmd != "" {
				t.Fatalf("no container labelled fixpoint.pid=%d while the run is active", pid)
			}
			c.cmd.Process.Signal(tc.sig)
			if code := c.wait(t, 60*time.Second); code != tc.want {
				t.Errorf("exit code %d after %s, want %d; stderr:\n%s", code, tc.sig, tc.want, c.stderr.String())
			}
			for _, ct := range containersOf(t, cli, pid) {
				t.Errorf("container %.12s (%s) of pid %d left behind", ct.ID, ct.State, pid)
				cli.ContainerRemove(context.Background(), ct.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
			}
			faultSameTree(t, ws, before)
		})
	}
}

// lspClient speaks LSP to a child's stdin/stdout and answers the server's
// own requests (progress creation, messages) with null.
type lspClient struct {
	t   *testing.T
	in  io.WriteCloser
	mu  sync.Mutex
	got chan map[string]any
}

func (l *lspClient) send(msg map[string]any) {
	msg["jsonrpc"] = "2.0"
	b, _ := json.Marshal(msg)
	l.mu.Lock()
	defer l.mu.Unlock()
	fmt.Fprintf(l.in, "Content-Length: %d\r\n\r\n%s", len(b), b)
}

func (l *lspClient) read(r io.Reader) {
	br := bufio.NewReader(r)
	defer close(l.got)
	for {
		n := -1
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				n, _ = strconv.Atoi(v)
			}
		}
		if n < 0 {
			return
		}
		body := make([]byte, n)
		if _, err := io.ReadFull(br, body); err != nil {
			return
		}
		var m map[string]any
		if json.Unmarshal(body, &m) != nil {
			continue
		}
		if _, isReq := m["method"]; isReq && m["id"] != nil {
			l.send(map[string]any{"id": m["id"], "result": nil})
		}
		select {
		case l.got <- m:
		default: // nobody listening: drop
		}
	}
}

// response waits (bounded) for the response to id.
func (l *lspClient) response(id int) map[string]any {
	l.t.Helper()
	timeout := time.After(60 * time.Second)
	for {
		select {
		case m, ok := <-l.got:
			if !ok {
				l.t.Fatalf("the server closed stdout before answering request %d", id)
			}
			if v, ok := m["id"].(float64); ok && int(v) == id && m["method"] == nil {
				return m
			}
		case <-timeout:
			l.t.Fatalf("no response to request %d", id)
		}
	}
}

// TestFaultLSPDisconnect starts `fixpoint serve`, runs fixpoint.fixTests and
// closes the server's stdin while the run waits on the model: the run is
// cancelled, its containers removed and the process exits.
func TestFaultLSPDisconnect(t *testing.T) {
	cli := faultRequire(t)
	bin := buildFixpoint(t)
	srv := llmtest.NewServer(&llmtest.Script{Rules: []llmtest.Rule{
		{Contains: faultCodeMark, Role: "user", Reply: &llmtest.Reply{Fault: llmtest.FaultHang}},
	}})
	defer srv.Close()
	ws := faultWorkspace(t)
	before := faultTree(t, ws)
	stdin, toServer := io.Pipe()
	fromServer, stdout := io.Pipe()
	env := faultEnv(t, srv.URL(), t.TempDir())
	// The user trusts the folder (`fixpoint trust`): the server would ask first.
	trustFolderIn(t, env, ws)
	c := startChild(t, bin, env, stdin, stdout, "serve")
	go func() { <-c.done; stdout.Close() }()
	l := &lspClient{t: t, in: toServer, got: make(chan map[string]any, 256)}
	go l.read(fromServer)

	rootURI := "file://" + ws
	l.send(map[string]any{"id": 1, "method": "initialize", "params": map[string]any{
		"processId": os.Getpid(), "rootUri": rootURI,
		"workspaceFolders": []map[string]any{{"uri": rootURI, "name": "ws"}},
		"capabilities":     map[string]any{"window": map[string]any{"workDoneProgress": true}},
	}})
	if r := l.response(1); r["error"] != nil {
		t.Fatalf("initialize: %v", r["error"])
	}
	l.send(map[string]any{"method": "initialized", "params": map[string]any{}})
	l.send(map[string]any{"id": 2, "method": "workspace/executeCommand", "params": map[string]any{
		"command": "fixpoint.fixTests", "arguments": []any{map[string]any{"uri": rootURI + "/textkit/chunks.py"}},
	}})
	if r := l.response(2); r["error"] != nil {
		t.Fatalf("fixpoint.fixTests: %v", r["error"])
	}
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	if err := srv.Wait(ctx, 1); err != nil {
		t.Fatalf("the run never reached the model: %v; stderr:\n%s", err, c.stderr.String())
	}
	pid := c.cmd.Process.Pid
	if len(containersOf(t, cli, pid)) == 0 {
		t.Fatalf("no container labelled fixpoint.pid=%d while the run is active", pid)
	}
	toServer.Close() // the editor went away
	code := c.wait(t, 60*time.Second)
	// serve documents 1 for an exit without shutdown; anything else (a
	// crash, a signal) is a failure.
	if code != 0 && code != 1 || strings.Contains(c.stderr.String(), "panic:") {
		t.Errorf("exit code %d after the client disconnected; stderr:\n%s", code, c.stderr.String())
	}
	for _, ct := range containersOf(t, cli, pid) {
		t.Errorf("container %.12s (%s) of pid %d left behind", ct.ID, ct.State, pid)
		cli.ContainerRemove(context.Background(), ct.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
	}
	faultSameTree(t, ws, before)
}

// TestFaultRacingRuns starts two `fixpoint fix` on one project and one data
// dir: the second is refused with a message naming the first's pid, the
// first verifies and writes its fix, and the failure memory opens cleanly
// afterwards with the first run's record.
func TestFaultRacingRuns(t *testing.T) {
	faultRequire(t)
	bin := buildFixpoint(t)
	srv := llmtest.NewServer(&llmtest.Script{Rules: []llmtest.Rule{
		// The first model request hangs until the second run is done.
		{Contains: faultCodeMark, Role: "user", MaxUses: 1, Reply: &llmtest.Reply{Fault: llmtest.FaultHang, Hang: llmtest.Duration(10 * time.Second)}},
		{Contains: faultCodeMark, Role: "user", Reply: &llmtest.Reply{Content: faultPyFix}},
	}})
	defer srv.Close()
	ws := faultWorkspace(t)
	data := t.TempDir()
	env := faultEnv(t, srv.URL(), data)
	first := startChild(t, bin, env, nil, nil, "fix", "--dir", ws)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()
	if err := srv.Wait(ctx, 1); err != nil {
		t.Fatalf("the first run never reached the model: %v; stderr:\n%s", err, first.stderr.String())
	}
	second := startChild(t, bin, env, nil, nil, "fix", "--dir", ws)
	code := second.wait(t, 60*time.Second)
	if code == 0 || !strings.Contains(second.stderr.String(), "pid "+strconv.Itoa(first.cmd.Process.Pid)) {
		t.Errorf("second run: exit %d, stderr:\n%s\nwant it refused naming pid %d", code, second.stderr.String(), first.cmd.Process.Pid)
	}
	if len(srv.Requests()) != 1 {
		t.Errorf("the model saw %d requests while the first run waited, want 1 (the second run must not start)", len(srv.Requests()))
	}
	if code := first.wait(t, 90*time.Second); code != 0 {
		t.Fatalf("first run: exit %d, want 0 (verified); stderr:\n%s", code, first.stderr.String())
	}
	b, _ := os.ReadFile(filepath.Join(ws, "textkit", "chunks.py"))
	if !strings.Contains(string(b), "range(0, len(seq), size)") {
		t.Errorf("the first run's verified fix was not written:\n%s", b)
	}
	st, err := memory.Open(t.Context(), data, &memory.Options{Root: ws})
	if err != nil {
		t.Fatalf("the failure memory does not open after the race: %v", err)
	}
	defer st.Close()
	ms, err := st.Recall(t.Context(), "test_remainder chunk", memory.RecallOptions{K: 5})
	if err != nil {
		t.Fatalf("Recall: %v", err)
	}
	if len(ms) == 0 {
		t.Error("the first run's failure is not in the memory")
	}
}

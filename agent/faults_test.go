package agent_test

// Fault injection against the real engine (issue 9, "Fault injection"):
// the Docker sandbox, the scripted model server (agent/llmtest) and the
// failure memory on disk. Each test injects one fault and checks that the
// run recovers and verifies, or ends with a clear reason, and that the
// user's files are never touched.

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/client"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/internal/dockerproxy"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/engine"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

const (
	markCode = "## Task: write the edits"
	pyImage  = "fixpoint-sandbox-python"
)

// pyFix is the edit that makes agent/testdata/py-bug pass.
var pyFix = llmtest.EditBlock("textkit/chunks.py",
	"    for i in range(0, len(seq) - size + 1, size):\n",
	"    for i in range(0, len(seq), size):\n")

// requirePython returns a Docker client when the engine and the python
// sandbox image are there (skips outside CI, fails under CI=true).
func requirePython(t *testing.T) *client.Client {
	t.Helper()
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, pyImage)
	return cli
}

// faultConfig is a docker-backed configuration whose model is srvURL.
func faultConfig(t *testing.T, srvURL string) *config.Config {
	t.Helper()
	cfg, err := config.Load(config.LoadOptions{Getenv: func(string) string { return "" }, UserFile: "-"})
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = t.TempDir()
	cfg.Sandbox.Backend = "docker"
	cfg.Sandbox.Timeout = config.Duration(2 * time.Minute)
	cfg.Model.BaseURL = srvURL
	cfg.Model.Name = "llmtest"
	cfg.Model.MaxRetries = 2
	cfg.Model.Timeout = config.Duration(2 * time.Second)
	cfg.Agent.MaxIterations = 2
	return cfg
}

// fastModel is the real client with short backoffs (Retry-After is still
// honoured as sent).
func fastModel(cfg *config.Config) *llm.Client {
	return llm.New(cfg.Model, &llm.Options{BaseDelay: 20 * time.Millisecond, MaxDelay: 100 * time.Millisecond})
}

// pyProject copies agent/testdata/py-bug into a temp dir.
func pyProject(t *testing.T) string {
	t.Helper()
	return sandboxtest.CopyTree(t, filepath.Join("testdata", "py-bug"))
}

// treeBytes reads every file under root (to prove a workspace untouched).
func treeBytes(t *testing.T, root string) map[string]string {
	t.Helper()
	return sandboxtest.ReadTree(t, root, "__pycache__")
}

func assertSameTree(t *testing.T, root string, before map[string]string) {
	t.Helper()
	after := treeBytes(t, root)
	if len(after) != len(before) {
		t.Errorf("workspace has %d files, had %d", len(after), len(before))
	}
	for p, b := range before {
		if after[p] != b {
			t.Errorf("%s changed on disk", p)
		}
	}
}

// runFix opens an engine on root (options may override parts) and runs
// fix mode with a bounded context. It returns the result, what the engine
// wrote to its warning stream, and the run error.
func runFix(t *testing.T, cfg *config.Config, root string, o *agent.OpenOptions) (*agent.Result, string, error) {
	t.Helper()
	var warn syncBuffer
	if o == nil {
		o = &agent.OpenOptions{}
	}
	if o.Model == nil {
		o.Model = fastModel(cfg)
	}
	o.Warn = &warn
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	e, err := agent.Open(ctx, cfg, root, o)
	if err != nil {
		t.Fatalf("agent.Open: %v", err)
	}
	defer func() {
		if err := e.Close(); err != nil {
			t.Logf("Close: %v", err)
		}
	}()
	res, err := e.Run(ctx, agent.Request{Mode: agent.ModeFix, Root: root}, nil)
	return res, warn.String(), err
}

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// planThen scripts the first code request (which carries the plan): first
// the given replies, then the fix.
func planThen(first ...llmtest.Reply) *llmtest.Script {
	return &llmtest.Script{
		Rules: []llmtest.Rule{
			{Contains: markCode, Role: "user", Replies: append(first, llmtest.Text(pyFix))},
		},
		Default: &llmtest.Reply{Content: "I give up"},
	}
}

// TestFaultModel injects each model fault into a real run: once (the client
// retries and the run verifies) and for good (the run ends, unverified, with
// a reason that names the problem).
func TestFaultModel(t *testing.T) {
	requirePython(t)
	faults := []struct {
		name  string
		reply llmtest.Reply
		want  string // in StopReason when the fault persists
	}{
		{"429", llmtest.Reply{Fault: llmtest.Fault429, RetryAfter: "1"}, "rate limiting (429)"},
		{"500", llmtest.Reply{Fault: llmtest.Fault500}, "failed (500)"},
		{"hang", llmtest.Reply{Fault: llmtest.FaultHang}, "did not answer within"},
		{"truncate", llmtest.Reply{Fault: llmtest.FaultTruncate, Content: strings.Repeat("a plan that is cut ", 20)}, "cut the reply stream short"},
		{"garbage", llmtest.Reply{Fault: llmtest.FaultGarbage}, "not OpenAI-compatible"},
		{"empty_choices", llmtest.Reply{Fault: llmtest.FaultEmptyChoices}, "no choices"},
	}
	for _, f := range faults {
		t.Run(f.name+"/recovers", func(t *testing.T) {
			t.Parallel() // containers mostly wait: overlap them
			srv := llmtest.NewServer(planThen(f.reply))
			defer srv.Close()
			root := pyProject(t)
			before := treeBytes(t, root)
			res, _, err := runFix(t, faultConfig(t, srv.URL()), root, nil)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if !res.Verified {
				t.Fatalf("Verified = false (%s), want the retry to recover", res.StopReason)
			}
			if n := len(srv.Requests()); n < 2 {
				t.Errorf("model saw %d requests, want the faulty one retried (>= 2)", n)
			}
			assertSameTree(t, root, before)
		})
		t.Run(f.name+"/persists", func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(&llmtest.Script{
				Rules: []llmtest.Rule{{Contains: markCode, Role: "user", Reply: &f.reply}},
			})
			defer srv.Close()
			root := pyProject(t)
			before := treeBytes(t, root)
			res, _, err := runFix(t, faultConfig(t, srv.URL()), root, nil)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if res.Verified {
				t.Fatal("Verified = true against a model that never answered")
			}
			if !strings.HasPrefix(res.StopReason, "model error: ") || !strings.Contains(res.StopReason, f.want) {
				t.Errorf("StopReason = %q, want a model error containing %q", res.StopReason, f.want)
			}
			if len(res.Changes) != 0 {
				t.Errorf("Changes = %d, want none", len(res.Changes))
			}
			assertSameTree(t, root, before)
		})
	}
}

// cutOnFirstChat cuts the Docker proxy when the model is first asked (the
// plan, right after the baseline test run), then answers normally.
type cutOnFirstChat struct {
	agent.Model
	once sync.Once
	cut  func()
}

func (m *cutOnFirstChat) Chat(ctx context.Context, req llm.Request, onDelta func(string)) (*llm.Response, error) {
	m.once.Do(m.cut)
	return m.Model.Chat(ctx, req, onDelta)
}

// ourContainers lists the containers this test process owns.
func ourContainers(t *testing.T, cli *client.Client) map[string]bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := engine.ListContainers(ctx, cli, container.ListOptions{All: true,
		Filters: filters.NewArgs(filters.Arg("label", docker.LabelPID+"="+strconv.Itoa(os.Getpid())))})
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]bool{}
	for _, c := range list {
		ids[c.ID] = true
	}
	return ids
}

// TestFaultDockerStopped cuts the engine (through a proxy; the real engine
// keeps serving other tests) after the baseline test run: the run ends with
// a sandbox error, unverified, nothing applied, and Close returns.
func TestFaultDockerStopped(t *testing.T) {
	cli := requirePython(t)
	p, err := dockerproxy.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	pcli, err := client.NewClientWithOpts(client.WithHost(p.Host()), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	defer pcli.Close()
	b, err := docker.New(t.Context(), &docker.Options{Client: pcli, NoReap: true})
	if err != nil {
		t.Fatalf("docker.New through the proxy: %v", err)
	}
	defer b.Close()
	had := ourContainers(t, cli)
	t.Cleanup(func() {
		// The engine was unreachable when the run ended: what it left is
		// removed here (Reap does it for a dead owner).
		for id := range ourContainers(t, cli) {
			if !had[id] {
				cli.ContainerRemove(context.Background(), id, container.RemoveOptions{Force: true, RemoveVolumes: true})
			}
		}
	})

	srv := llmtest.NewServer(planThen())
	defer srv.Close()
	cfg := faultConfig(t, srv.URL())
	root := pyProject(t)
	before := treeBytes(t, root)
	res, _, err := runFix(t, cfg, root, &agent.OpenOptions{Backend: b, Model: &cutOnFirstChat{Model: fastModel(cfg), cut: p.Cut}})
	if err != nil {
		t.Fatalf("Run: %v (want a Result whose StopReason names the sandbox)", err)
	}
	if res.Verified {
		t.Fatal("Verified = true with the engine gone")
	}
	if res.Baseline == nil || res.Baseline.OK() {
		t.Errorf("Baseline = %+v, want the failing baseline from before the cut", res.Baseline)
	}
	if !strings.HasPrefix(res.StopReason, "sandbox error during ") || !strings.Contains(res.StopReason, "Docker engine stopped answering") {
		t.Errorf("StopReason = %q, want a sandbox error saying the Docker engine stopped answering", res.StopReason)
	}
	t.Logf("StopReason: %s", res.StopReason)
	assertSameTree(t, root, before)
	p.Close()
	left := 0
	for id := range ourContainers(t, cli) {
		if !had[id] {
			left++
		}
	}
	t.Logf("containers left while the engine was unreachable: %d (removed by the cleanup; Reap removes them once the owner exits)", left)
}

// TestFaultOOM runs a project whose test allocates past the sandbox memory
// limit: the baseline is an out-of-memory failure the model is told about,
// not a crash, and the fix verifies.
func TestFaultOOM(t *testing.T) {
	requirePython(t)
	root := t.TempDir()
	files := map[string]string{
		"pyproject.toml":    "[project]\nname = \"memhog\"\nversion = \"0.1.0\"\n",
		"memhog.py":         "def build():\n    data = b\"x\" * (1024 * 1024 * 1024)\n    return [1, 2, 3]\n",
		"tests/__init__.py": "",
		"tests/test_memhog.py": "import unittest\n\nfrom memhog import build\n\n\nclass BuildTest(unittest.TestCase):\n" +
			"    def test_build(self):\n        self.assertEqual(build(), [1, 2, 3])\n",
	}
	for p, c := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755)
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	srv := llmtest.NewServer(&llmtest.Script{
		Rules: []llmtest.Rule{
			{Contains: markCode, Role: "user", Reply: &llmtest.Reply{Content: llmtest.EditBlock("memhog.py",
				"    data = b\"x\" * (1024 * 1024 * 1024)\n", "    data = b\"x\"\n")}},
		},
	})
	defer srv.Close()
	cfg := faultConfig(t, srv.URL())
	cfg.Sandbox.Memory = "128m"
	res, _, err := runFix(t, cfg, root, nil)
	if err != nil {
		t.Fatalf("Run: %v (an OOM kill must be a test failure, not a run error)", err)
	}
	if res.Baseline == nil || !res.Baseline.OOM || res.Baseline.OK() {
		t.Fatalf("Baseline = %+v, want an out-of-memory report", res.Baseline)
	}
	reqs := srv.Requests()
	if len(reqs) == 0 {
		t.Fatal("the model was never asked")
	}
	var told bool
	for _, m := range reqs[0].Messages {
		told = told || strings.Contains(strings.ToLower(m.Content), "out of memory")
	}
	if !told {
		t.Errorf("the first prompt does not say out of memory:\n%s", reqs[0].Messages[len(reqs[0].Messages)-1].Content)
	}
	if !res.Verified {
		t.Errorf("Verified = false (%s), want the fix verified", res.StopReason)
	}
}

// mountTmpfs mounts a tmpfs on dir with the given options (root only).
func mountTmpfs(t *testing.T, dir, opts string) {
	t.Helper()
	out, err := exec.Command("mount", "-t", "tmpfs", "-o", opts, "tmpfs", dir).CombinedOutput()
	if err != nil {
		why := "cannot mount a tmpfs (" + strings.TrimSpace(string(out)) + "): needs root"
		if sandboxtest.InCI() {
			t.Fatalf("CI=true and %s", why)
		}
		t.Skip("skipping outside CI: " + why)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", dir, err, out)
		}
	})
}

// TestFaultDataDir runs with a data dir that cannot be written: the failure
// memory and the run log degrade with a warning and the run verifies.
func TestFaultDataDir(t *testing.T) {
	requirePython(t)
	cases := []struct {
		name  string
		setup func(t *testing.T) string
	}{
		{"file where a dir is expected", func(t *testing.T) string {
			p := filepath.Join(t.TempDir(), "data")
			if err := os.WriteFile(p, []byte("not a directory"), 0o644); err != nil {
				t.Fatal(err)
			}
			return p
		}},
		{"read-only filesystem", func(t *testing.T) string {
			// chmod does not stop root: mount an empty read-only tmpfs.
			d := t.TempDir()
			mountTmpfs(t, d, "ro,size=64k")
			return d
		}},
		{"full filesystem", func(t *testing.T) string {
			d := t.TempDir()
			mountTmpfs(t, d, "size=64k")
			// Fill it to ENOSPC.
			f, err := os.Create(filepath.Join(d, "filler"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			buf := make([]byte, 4096)
			for {
				if _, err := f.Write(buf); err != nil {
					break
				}
			}
			if err := os.WriteFile(filepath.Join(d, "probe"), []byte("x"), 0o644); err == nil {
				t.Fatal("tmpfs is not full after filling it")
			}
			return d
		}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := llmtest.NewServer(planThen())
			defer srv.Close()
			cfg := faultConfig(t, srv.URL())
			cfg.DataDir = c.setup(t)
			root := pyProject(t)
			res, warn, err := runFix(t, cfg, root, nil)
			if err != nil {
				t.Fatalf("Run: %v (want the run to work without a data dir)", err)
			}
			if !res.Verified {
				t.Errorf("Verified = false (%s)", res.StopReason)
			}
			if !strings.Contains(warn, "warning") {
				t.Errorf("no warning about the data dir; warnings:\n%s", warn)
			}
			t.Logf("warnings:\n%s", warn)
		})
	}
}

// TestFaultCanaryEnv puts a canary key in fixpoint's own environment and
// config, and prints the sandbox environment from the test command: the
// canary must not be there.
func TestFaultCanaryEnv(t *testing.T) {
	requirePython(t)
	const canary = "sk-canary0123456789abcdefFAULTS"
	t.Setenv("FIXPOINT_API_KEY", canary)
	t.Setenv("OPENAI_API_KEY", canary)
	t.Setenv("FIXPOINT_CANARY", canary)
	srv := llmtest.NewServer(planThen())
	defer srv.Close()
	cfg := faultConfig(t, srv.URL())
	cfg.Model.APIKey = canary
	cfg.TestCmd = "sh -c 'echo ENV-BEGIN >&2; env >&2; echo ENV-END >&2; exec python3 -m unittest discover -v'"
	root := pyProject(t)
	res, _, err := runFix(t, cfg, root, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if res.Baseline == nil {
		t.Fatal("no baseline report")
	}
	out := res.Baseline.Output
	if !strings.Contains(out, "ENV-BEGIN") || !strings.Contains(out, "PATH=") {
		t.Fatalf("the sandbox environment is not in the baseline output:\n%s", out)
	}
	if !res.Verified {
		t.Errorf("Verified = false (%s)", res.StopReason)
	}
	if strings.Contains(out, "canary") {
		t.Errorf("the canary reached the sandbox:\n%s", out)
	}
	if reqs := srv.Requests(); len(reqs) == 0 || !strings.Contains(reqs[0].Authorization, canary) {
		t.Error("the canary was not live in fixpoint's own config (model requests carry no such key)")
	}
}

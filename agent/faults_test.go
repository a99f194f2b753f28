package agent_test

// Fault injection against the real engine (issue 9, "Fault injection"):
// the Docker sandbox, the scripted model server (agent/llmtest) and the
// failure memory on disk. Each test injects one fault and checks that the
// run recovers and verifies, or ends with a clear reason, and that the
// user's files are never touched.

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/docker/docker/client"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

const (
	markPlan = "## Task: write a plan"
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
	dst := t.TempDir()
	src := filepath.Join("testdata", "py-bug")
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// treeBytes reads every file under root (to prove a workspace untouched).
func treeBytes(t *testing.T, root string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if d.Name() == "__pycache__" {
				return fs.SkipDir
			}
			return nil
		}
		b, err := os.ReadFile(p)
		out[p] = string(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
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
// fix mode with a bounded context.
func runFix(t *testing.T, cfg *config.Config, root string, o *agent.OpenOptions) (*agent.Result, error, string) {
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
	return res, err, warn.String()
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

// planThen scripts the plan request: first the given replies, then a plan;
// the code request gets the fix.
func planThen(first ...llmtest.Reply) *llmtest.Script {
	return &llmtest.Script{
		Rules: []llmtest.Rule{
			{Contains: markPlan, Role: "user", Replies: append(first, llmtest.Text("1. fix the range in textkit/chunks.py"))},
			{Contains: markCode, Role: "user", Reply: &llmtest.Reply{Content: pyFix}},
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
			res, err, _ := runFix(t, faultConfig(t, srv.URL()), root, nil)
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if !res.Verified {
				t.Fatalf("Verified = false (%s), want the retry to recover", res.StopReason)
			}
			if n := len(srv.Requests()); n < 3 {
				t.Errorf("model saw %d requests, want the faulty one retried (>= 3)", n)
			}
			assertSameTree(t, root, before)
		})
		t.Run(f.name+"/persists", func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer(&llmtest.Script{
				Rules: []llmtest.Rule{{Contains: markPlan, Role: "user", Reply: &f.reply}},
			})
			defer srv.Close()
			root := pyProject(t)
			before := treeBytes(t, root)
			res, err, _ := runFix(t, faultConfig(t, srv.URL()), root, nil)
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

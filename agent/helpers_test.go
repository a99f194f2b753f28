package agent

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/host"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// testBackend is the real host backend ("none"): the e2e tests need the
// toolchains (go, python3, node) and run on any machine; the docker e2e
// tests in e2e_docker_test.go cover the real sandbox.
//
// Sessions share one Go build cache across tests (each host session
// otherwise starts with an empty one and recompiles the standard library).
func testBackend(t testing.TB) sandbox.Backend {
	t.Helper()
	b, err := host.New(&host.Options{Warn: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	// Under /tmp and world-writable: the host backend may drop privileges.
	cache := filepath.Join(os.TempDir(), "fixpoint-agent-test-gocache")
	if err := os.MkdirAll(cache, 0o777); err != nil {
		t.Fatal(err)
	}
	os.Chmod(cache, 0o777)
	// Running as root, each session gets its own uid, and Go creates the
	// cache's 256 subdirectories 0755: a session could then not write into
	// a subdirectory another session made, and recompiled the standard
	// library again and again (an agent test run took 341 s on a fresh
	// machine instead of ~45 s). Make them all writable up front.
	for i := range 256 {
		sub := filepath.Join(cache, fmt.Sprintf("%02x", i))
		os.Mkdir(sub, 0o777)
		os.Chmod(sub, 0o777)
	}
	return cachedBackend{b, cache}
}

type cachedBackend struct {
	sandbox.Backend
	gocache string
}

func (b cachedBackend) Start(ctx context.Context, spec sandbox.Spec) (sandbox.Session, error) {
	s, err := b.Backend.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	return cachedSession{s, b.gocache}, nil
}

type cachedSession struct {
	sandbox.Session
	gocache string
}

func (s cachedSession) Run(ctx context.Context, c sandbox.Command) (*sandbox.Result, error) {
	c.Env = append(c.Env, "GOCACHE="+s.gocache)
	return s.Session.Run(ctx, c)
}

// WorkDir lets testrun map absolute paths in output to workspace paths.
func (s cachedSession) WorkDir() string {
	if wd, ok := s.Session.(interface{ WorkDir() string }); ok {
		return wd.WorkDir()
	}
	return ""
}

// scripted is an in-process model: each rule answers prompts that contain
// its substring; the first matching rule wins. Replies may be a sequence,
// consumed one per matching call (the last repeats).
type scripted struct {
	mu    sync.Mutex
	rules []rule
	calls []string // user prompts received
}

type rule struct {
	contains string
	replies  []string
	n        int
}

func (m *scripted) Chat(ctx context.Context, req llm.Request, onDelta func(string)) (*llm.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	prompt := req.Messages[len(req.Messages)-1].Content
	m.calls = append(m.calls, prompt)
	for i := range m.rules {
		r := &m.rules[i]
		if strings.Contains(prompt, r.contains) {
			rep := r.replies[min(r.n, len(r.replies)-1)]
			r.n++
			return &llm.Response{Content: rep, Usage: llm.Usage{In: len(prompt) / 4, Out: len(rep) / 4}}, nil
		}
	}
	return &llm.Response{Content: "I cannot help with this."}, nil
}

// copyTree copies a testdata project into a fresh temp dir.
func copyTree(t testing.TB, src string) string {
	t.Helper()
	return sandboxtest.CopyTree(t, src)
}

func testConfig(t testing.TB) *config.Config {
	t.Helper()
	cfg, err := config.Load(config.LoadOptions{Getenv: func(string) string { return "" }, UserFile: "-"})
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = t.TempDir()
	// The machine may be loaded and a cold Go build cache is slow: tests
	// assert behaviour, never time.
	cfg.Sandbox.Timeout = config.Duration(10 * time.Minute)
	// Every fix runs the failing tests first, whatever the suite's
	// baseline took (agent.narrow_min): which runs happen must not depend
	// on the machine's speed. TestShortSuite* set it.
	cfg.Agent.NarrowMin = 0
	return cfg
}

func snapFile(s string) sandbox.File { return sandbox.File{Data: []byte(s)} }

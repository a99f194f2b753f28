package agent

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// dirBackend runs commands on the host in a temporary copy of the
// workspace. It stands in for sandbox/host until that lands.
type dirBackend struct{ t testing.TB }

func (b *dirBackend) Name() string { return "none" }

func (b *dirBackend) Start(ctx context.Context, spec sandbox.Spec) (sandbox.Session, error) {
	dir, err := os.MkdirTemp("", "fixpoint-test-ws-")
	if err != nil {
		return nil, err
	}
	return &dirSession{dir: dir, files: map[string]string{}}, nil
}

type dirSession struct {
	mu     sync.Mutex
	dir    string
	files  map[string]string // path → digest of content last written
	closed bool
}

func (s *dirSession) Sync(ctx context.Context, snap *sandbox.Snapshot) (sandbox.SyncStats, error) {
	var st sandbox.SyncStats
	for p, f := range snap.Files {
		if s.files[p] == string(f.Data) {
			continue
		}
		full := filepath.Join(s.dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return st, err
		}
		if err := os.WriteFile(full, f.Data, 0o644); err != nil {
			return st, err
		}
		s.files[p] = string(f.Data)
		st.Written++
		st.Bytes += int64(len(f.Data))
	}
	for p := range s.files {
		if _, ok := snap.Files[p]; !ok {
			os.Remove(filepath.Join(s.dir, filepath.FromSlash(p)))
			delete(s.files, p)
			st.Deleted++
		}
	}
	return st, nil
}

func (s *dirSession) Run(ctx context.Context, c sandbox.Command) (*sandbox.Result, error) {
	if s.closed {
		return nil, sandbox.ErrClosed
	}
	cmd := exec.CommandContext(ctx, c.Args[0], c.Args[1:]...)
	cmd.Dir = filepath.Join(s.dir, c.Dir)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + s.dir, "GOCACHE=" + os.Getenv("GOCACHE"), "GOFLAGS=-mod=mod", "GOPROXY=off"}, c.Env...)
	if gc, err := exec.Command("go", "env", "GOCACHE").Output(); err == nil {
		cmd.Env = append(cmd.Env, "GOCACHE="+strings.TrimSpace(string(gc)))
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	t0 := time.Now()
	err := cmd.Run()
	res := &sandbox.Result{Stdout: out.Bytes(), Stderr: errb.Bytes(), Duration: time.Since(t0)}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.ExitCode = ee.ExitCode()
	case err != nil:
		return nil, err
	}
	return res, nil
}

func (s *dirSession) ReadFile(ctx context.Context, rel string) ([]byte, error) {
	return os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(rel)))
}

func (s *dirSession) Close() error {
	s.closed = true
	return os.RemoveAll(s.dir)
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

func (m *scripted) Chat(ctx context.Context, req chatRequest, onDelta func(string)) (*chatResponse, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	prompt := req.Messages[len(req.Messages)-1].Content
	m.calls = append(m.calls, prompt)
	for i := range m.rules {
		r := &m.rules[i]
		if strings.Contains(prompt, r.contains) {
			rep := r.replies[min(r.n, len(r.replies)-1)]
			r.n++
			return &chatResponse{Content: rep, In: len(prompt) / 4, Out: len(rep) / 4}, nil
		}
	}
	return &chatResponse{Content: "I cannot help with this."}, nil
}

// copyTree copies a testdata project into a fresh temp dir.
func copyTree(t testing.TB, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.Walk(src, func(p string, info os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if info.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

func testConfig(t testing.TB) *config.Config {
	t.Helper()
	cfg, err := config.Load(config.LoadOptions{Getenv: func(string) string { return "" }, UserFile: "-"})
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = t.TempDir()
	return cfg
}

// WorkDir lets testrun turn absolute paths into workspace-relative ones.
func (s *dirSession) WorkDir() string { return s.dir }

package agent

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// countingBackend hands out sessions that only count: Start, Sync (with
// the synced snapshot's files) and Close. Starting fails with err when set.
// The agent's own logic (keys, hand-over, closing) is what is tested.
type countingBackend struct {
	mu          sync.Mutex
	starts      int
	closed      int
	synced      [][]string // paths of every Sync, in order
	runnerCache []bool     // Spec.RunnerCache of every Start
	err         error
}

func (b *countingBackend) Name() string { return "none" }

func (b *countingBackend) Start(ctx context.Context, spec sandbox.Spec) (sandbox.Session, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err != nil {
		return nil, b.err
	}
	b.starts++
	b.runnerCache = append(b.runnerCache, spec.RunnerCache)
	return &countingSession{b: b}, nil
}

type countingSession struct{ b *countingBackend }

func (s *countingSession) Sync(ctx context.Context, snap *sandbox.Snapshot) (sandbox.SyncStats, error) {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	s.b.synced = append(s.b.synced, snap.Paths())
	return sandbox.SyncStats{}, nil
}

// Run answers the runtime version check as a Go 1.22 toolchain would.
func (s *countingSession) Run(ctx context.Context, cmd sandbox.Command) (*sandbox.Result, error) {
	return &sandbox.Result{Stdout: []byte("go version go1.22.5 linux/amd64\n")}, nil
}

func (s *countingSession) ReadFile(ctx context.Context, rel string) ([]byte, error) {
	return nil, os.ErrNotExist
}

func (s *countingSession) Close() error {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	s.b.closed++
	return nil
}

func (b *countingBackend) counts() (starts, closed int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.starts, b.closed
}

// TestPrewarmHandsSessionToNextStart: a warm session serves the next
// start whose setup inputs match, once; a snapshot with another runtime
// requirement drops it and starts cold; Cool and Close remove it.
func TestPrewarmHandsSessionToNextStart(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module w\n\ngo 1.21\n")
	write("w.go", "package w\n")
	cfg := config.Defaults(func(string) string { return "" })
	cfg.Sandbox.Backend = "none"
	b := &countingBackend{}
	e := New(cfg, &Options{Backend: b})
	snap := func(overlays map[string][]byte) *sandbox.Snapshot {
		s, err := e.snapshot(root)
		if err != nil {
			t.Fatal(err)
		}
		s, _ = s.WithOverlays(overlays)
		return s
	}

	if err := e.Prewarm(ctx, root, nil, nil); err != nil {
		t.Fatalf("Prewarm: %v", err)
	}
	if err := e.Prewarm(ctx, root, nil, nil); err != nil || !e.Warm() {
		t.Fatalf("second Prewarm with the same inputs = %v, warm %v", err, e.Warm())
	}
	if starts, _ := b.counts(); starts != 1 {
		t.Fatalf("starts after two prewarms of the same tree = %d, want 1", starts)
	}
	// A source edit keeps the warm session.
	sess, done, err := e.startSession(ctx, e.newProject(snap(map[string][]byte{"w.go": []byte("package w // edited\n")})), nil)
	if err != nil {
		t.Fatal(err)
	}
	if starts, _ := b.counts(); starts != 1 || e.Warm() {
		t.Errorf("after a start on an edited source: starts %d, warm %v; want the warm session taken", starts, e.Warm())
	}
	if _, ok := sess.(*countingSession); !ok {
		t.Fatalf("session %T", sess)
	}
	done()

	// A changed runtime requirement drops the warm session.
	if err := e.Prewarm(ctx, root, nil, nil); err != nil {
		t.Fatal(err)
	}
	_, done, err = e.startSession(ctx, e.newProject(snap(map[string][]byte{"go.mod": []byte("module w\n\ngo 1.22\n")})), nil)
	if err != nil {
		t.Fatal(err)
	}
	done()
	if starts, closed := b.counts(); starts != 3 || closed != 3 {
		t.Errorf("after a start with another go directive: starts %d, closed %d; want 3 and 3 (the warm one dropped)", starts, closed)
	}

	// Cool and Close remove a warm session nobody took.
	if err := e.Prewarm(ctx, root, nil, nil); err != nil {
		t.Fatal(err)
	}
	if !e.Cool() || e.Cool() {
		t.Errorf("Cool reports no warm session, or one twice")
	}
	if err := e.Prewarm(ctx, root, nil, nil); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if starts, closed := b.counts(); starts != closed {
		t.Errorf("after Cool and Close: %d starts, %d closed", starts, closed)
	}
	if err := e.Prewarm(ctx, root, nil, nil); !errors.Is(err, ErrWarmReplaced) {
		t.Errorf("Prewarm after Close = %v, want ErrWarmReplaced", err)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if i := slices.IndexFunc(b.synced, func(p []string) bool { return !slices.Contains(p, "w.go") }); i >= 0 {
		t.Errorf("sync %d lacks w.go: %q", i, b.synced[i])
	}
}

// TestPrewarmFailureLeavesNothing: a failed prewarm returns its error,
// keeps nothing warm, and the next start tries again on its own.
func TestPrewarmFailureLeavesNothing(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module w\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Defaults(func(string) string { return "" })
	b := &countingBackend{err: errors.New("no engine")}
	e := New(cfg, &Options{Backend: b})
	if err := e.Prewarm(t.Context(), root, nil, nil); err == nil || e.Warm() {
		t.Fatalf("Prewarm = %v, warm %v; want the start's error and nothing warm", err, e.Warm())
	}
	b.mu.Lock()
	b.err = nil
	b.mu.Unlock()
	s, err := e.snapshot(root)
	if err != nil {
		t.Fatal(err)
	}
	_, done, err := e.startSession(t.Context(), e.newProject(s), nil)
	if err != nil {
		t.Fatalf("start after a failed prewarm: %v", err)
	}
	done()
	if starts, closed := b.counts(); starts != 1 || closed != 1 {
		t.Errorf("starts %d, closed %d; want 1 and 1", starts, closed)
	}
}

// TestPrewarmTestsOnlyForTests: a session kept warm for `fixpoint test`
// has the runner caches; Test takes it, and a Run (model-written code)
// drops it and starts its own without them.
func TestPrewarmTestsOnlyForTests(t *testing.T) {
	ctx := t.Context()
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module w\n\ngo 1.21\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Defaults(func(string) string { return "" })
	cfg.Sandbox.Backend = "none"
	b := &countingBackend{}
	e := New(cfg, &Options{Backend: b})
	defer e.Close()
	s, err := e.snapshot(root)
	if err != nil {
		t.Fatal(err)
	}

	if err := e.PrewarmTests(ctx, root, nil); err != nil || !e.Warm() {
		t.Fatalf("PrewarmTests = %v, warm %v", err, e.Warm())
	}
	_, done, err := e.startTrusted(ctx, e.newProject(s), nil)
	if err != nil {
		t.Fatal(err)
	}
	done()
	if starts, _ := b.counts(); starts != 1 || e.Warm() {
		t.Errorf("Test's start: starts %d, warm %v; want the kept session taken", starts, e.Warm())
	}

	if err := e.PrewarmTests(ctx, root, nil); err != nil {
		t.Fatal(err)
	}
	_, done, err = e.startSession(ctx, e.newProject(s), nil)
	if err != nil {
		t.Fatal(err)
	}
	done()
	starts, closed := b.counts()
	if starts != 3 || closed != 3 || e.Warm() {
		t.Errorf("a Run after PrewarmTests: starts %d, closed %d, warm %v; want 3, 3 (the kept one dropped, not taken), false", starts, closed, e.Warm())
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if want := []bool{true, true, false}; !slices.Equal(b.runnerCache, want) {
		t.Errorf("RunnerCache of the starts = %v, want %v", b.runnerCache, want)
	}
}

// TestTakeWarmFollowsTheStartInProgress: a start that waits for a warm
// session still being prepared (a first setup can take minutes) reports
// that preparation's progress as its own: the line it had reached, then
// each new one, until the session is handed over.
func TestTakeWarmFollowsTheStartInProgress(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "go.mod"), []byte("module w\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := config.Defaults(func(string) string { return "" })
	cfg.Sandbox.Backend = "none"
	e := New(cfg, &Options{Backend: &countingBackend{}})
	snap, err := e.snapshot(root)
	if err != nil {
		t.Fatal(err)
	}
	proj := e.newProject(snap)
	w := &warmSession{key: warmKey(cfg, proj), cancel: func() {}, ready: make(chan struct{})}
	e.mu.Lock()
	e.warm = w
	e.mu.Unlock()
	report := e.warmReport(w, nil)
	report("compiling the Go standard library (once)")

	lines := make(chan string, 8)
	type taken struct {
		sess sandbox.Session
		ok   bool
	}
	got := make(chan taken, 1)
	go func() {
		sess, _, ok := e.takeWarm(t.Context(), proj, false, func(l string) { lines <- l })
		got <- taken{sess, ok}
	}()
	if l := <-lines; l != "compiling the Go standard library (once)" {
		t.Fatalf("first line %q, want the line the start had reached", l)
	}
	report("compiling the Go standard library (once) · 5 s")
	if l := <-lines; l != "compiling the Go standard library (once) · 5 s" {
		t.Fatalf("next line %q, want the start's new line", l)
	}
	sess := &countingSession{b: &countingBackend{}}
	e.mu.Lock()
	w.sess, w.done = sess, func() {}
	close(w.ready)
	e.mu.Unlock()
	if r := <-got; !r.ok || r.sess != sess {
		t.Fatalf("takeWarm = %v, %v; want the warm session", r.sess, r.ok)
	}
	report("a line after the hand-over")
	select {
	case l := <-lines:
		t.Errorf("a line reached the start after it took the session: %q", l)
	default:
	}
}

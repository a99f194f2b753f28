package warmd

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/host"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// fakeEngine counts what the daemon asks of it; a Test blocks until
// release is closed when release is set.
type fakeEngine struct {
	mu        sync.Mutex
	tests     int
	prewarms  int
	warm      bool
	closed    bool
	warn      io.Writer
	none      bool // like the none backend: every session start warns
	release   chan struct{}
	started   chan struct{} // closed when a Test waits for release
	sawCancel chan struct{}
}

func (f *fakeEngine) Test(ctx context.Context, root string, overlays map[string][]byte) (*testrun.Report, error) {
	fmt.Fprintf(f.warn, "snapshot of %s\n", filepath.Base(root))
	if f.none && !f.Warm() {
		fmt.Fprintln(f.warn, host.Warning) // a cold start
	}
	if f.release != nil {
		close(f.started)
		select {
		case <-f.release:
		case <-ctx.Done():
			close(f.sawCancel)
			return nil, ctx.Err()
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.tests++
	f.warm = false
	return &testrun.Report{Runner: "go", Passed: f.tests, ExitCode: 0}, nil
}

func (f *fakeEngine) PrewarmTests(ctx context.Context, root string, progress func(string)) error {
	if f.none {
		fmt.Fprintln(f.warn, host.Warning) // the start of the next session, in the background
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.prewarms++
	f.warm = true
	return nil
}

func (f *fakeEngine) Warm() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.warm
}

func (f *fakeEngine) WaitClosing() {}

func (f *fakeEngine) Close() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.closed = true
	return nil
}

// serve starts a Server with one fakeEngine per Open on a socket in a
// temporary directory; it returns the socket, the engines made so far,
// and a channel closed when Serve returns.
func serve(t *testing.T, idle time.Duration, mk func() *fakeEngine) (string, func() []*fakeEngine, chan struct{}) {
	t.Helper()
	dir, err := os.MkdirTemp("", "warmd")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	sock := filepath.Join(dir, "d.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var engines []*fakeEngine
	s := &Server{
		Idle: idle,
		Load: func(req Request) (*config.Config, error) {
			if req.Backend == "vm" {
				return nil, fmt.Errorf("%w: sandbox.backend: \"vm\" is not a backend", config.ErrInvalid)
			}
			cfg := config.Defaults(func(string) string { return "" })
			cfg.Sandbox.Backend = req.Backend
			return cfg, nil
		},
		Open: func(ctx context.Context, cfg *config.Config, root string, warn io.Writer) (Engine, error) {
			e := mk()
			e.none = cfg.Sandbox.Backend == config.BackendNone
			fmt.Fprintln(warn, "engine opened") // what agent.Open may say (a degraded memory)
			e.warn = warn
			mu.Lock()
			engines = append(engines, e)
			mu.Unlock()
			return e, nil
		},
	}
	done := make(chan struct{})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		defer close(done)
		s.Serve(ctx, ln)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			t.Error("Serve did not return after its context ended")
		}
	})
	return sock, func() []*fakeEngine {
		mu.Lock()
		defer mu.Unlock()
		return append([]*fakeEngine(nil), engines...)
	}, done
}

func do(t *testing.T, ctx context.Context, sock string, req Request) (Message, []string, error) {
	t.Helper()
	c, err := Dial(ctx, sock)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var lines []string
	m, err := Do(ctx, c, req, func(l string) { lines = append(lines, l) })
	return m, lines, err
}

// A second test on the same workspace takes the session started after
// the first; progress lines reach the client; another configuration gets
// its own engine; a configuration error is marked as one; stop closes
// every engine and ends Serve.
func TestServeKeepsWarm(t *testing.T) {
	ctx := t.Context()
	sock, engines, done := serve(t, time.Hour, func() *fakeEngine { return &fakeEngine{} })
	root := t.TempDir()
	req := Request{Op: OpTest, Root: root, Backend: "docker"}

	m, lines, err := do(t, ctx, sock, req)
	if err != nil || m.Report == nil || m.Warm {
		t.Fatalf("first test = %+v, %v; want a report from a cold start", m, err)
	}
	if want := []string{"engine opened", "snapshot of " + filepath.Base(root)}; !slices.Equal(lines, want) {
		t.Errorf("progress lines = %q, want %q", lines, want)
	}
	if m, _, err := do(t, ctx, sock, Request{Op: OpReady}); err != nil || m.PID != os.Getpid() {
		t.Fatalf("ready = %+v, %v", m, err)
	}
	m, _, err = do(t, ctx, sock, req)
	if err != nil || m.Report == nil || !m.Warm || m.Report.Passed != 2 {
		t.Fatalf("second test = %+v, %v; want the second report, from the warm session", m, err)
	}
	if n := len(engines()); n != 1 {
		t.Fatalf("engines after two tests of one workspace = %d, want 1", n)
	}

	if m, _, _ := do(t, ctx, sock, Request{Op: OpTest, Root: root, Backend: "bwrap"}); m.Report == nil || len(engines()) != 2 {
		t.Errorf("another backend: %+v, %d engines; want a report from a second engine", m, len(engines()))
	}
	if m, _, _ := do(t, ctx, sock, Request{Op: OpTest, Root: root, Backend: "vm"}); !m.Config || m.Error == "" {
		t.Errorf("a bad configuration = %+v, want a configuration error", m)
	}
	if m, _, _ := do(t, ctx, sock, Request{Op: OpTest, Root: "relative"}); m.Error == "" {
		t.Errorf("a relative root = %+v, want an error", m)
	}

	if _, _, err := do(t, ctx, sock, Request{Op: OpStop}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return after stop")
	}
	for i, e := range engines() {
		if !e.closed {
			t.Errorf("engine %d not closed after stop", i)
		}
	}
	if _, err := Dial(ctx, sock); !errors.Is(err, ErrNoDaemon) {
		t.Errorf("Dial after stop = %v, want ErrNoDaemon", err)
	}
}

// The daemon leaves by itself after its idle time, closing its engines.
func TestServeIdleExit(t *testing.T) {
	sock, engines, done := serve(t, 10*time.Millisecond, func() *fakeEngine { return &fakeEngine{} })
	if m, _, err := do(t, t.Context(), sock, Request{Op: OpTest, Root: t.TempDir()}); err != nil || m.Report == nil {
		t.Fatalf("test = %+v, %v", m, err)
	}
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Serve did not return after its idle time")
	}
	if e := engines(); len(e) != 1 || !e[0].closed {
		t.Errorf("engines after the idle exit: %d, closed %v", len(e), len(e) == 1 && e[0].closed)
	}
}

// A client that goes away (Ctrl-C) cancels its request in the daemon.
func TestClientCancelStopsTheRun(t *testing.T) {
	eng := &fakeEngine{release: make(chan struct{}), started: make(chan struct{}), sawCancel: make(chan struct{})}
	sock, _, _ := serve(t, time.Hour, func() *fakeEngine { return eng })
	ctx, cancel := context.WithCancel(t.Context())
	errc := make(chan error, 1)
	go func() {
		_, _, err := do(t, ctx, sock, Request{Op: OpTest, Root: t.TempDir()})
		errc <- err
	}()
	<-eng.started // the daemon is running the request
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("Do after cancel = %v, want context.Canceled", err)
	}
	select {
	case <-eng.sawCancel:
	case <-time.After(30 * time.Second):
		t.Fatal("the engine's Test was not cancelled when the client left")
	}
}

// One daemon per executable and environment: the order of variables and
// the shell's own (PWD, SHLVL) do not matter; DOCKER_HOST does.
func TestSocketPath(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "fixpoint")
	os.WriteFile(exe, []byte("x"), 0o755)
	base := SocketPath(dir, exe, []string{"A=1", "PATH=/bin", "PWD=/a", "SHLVL=1"})
	if got := SocketPath(dir, exe, []string{"PATH=/bin", "A=1", "PWD=/b", "SHLVL=3"}); got != base {
		t.Errorf("reordered env and another PWD: %s, want %s", got, base)
	}
	if got := SocketPath(dir, exe, []string{"A=1", "PATH=/bin", "DOCKER_HOST=tcp://h:2376"}); got == base {
		t.Errorf("another DOCKER_HOST gave the same socket %s", got)
	}
	os.WriteFile(exe, []byte("rebuilt"), 0o755)
	if got := SocketPath(dir, exe, []string{"A=1", "PATH=/bin"}); got == base {
		t.Errorf("a rebuilt executable gave the same socket %s", got)
	}
	if long := SocketPath(filepath.Join(dir, string(make([]byte, 0))+"/"+fmt.Sprintf("%0120d", 0)), exe, nil); len(long) >= 108 {
		t.Errorf("socket path %q is too long for a unix socket", long)
	}
}

// The socket's directory is the user's alone.
func TestPrivateDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := PrivateDir(dir); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(dir); st.Mode().Perm() != 0o700 {
		t.Errorf("mode %v, want 0700", st.Mode().Perm())
	}
	file := filepath.Join(t.TempDir(), "f")
	os.WriteFile(file, nil, 0o600)
	if err := PrivateDir(file); err == nil {
		t.Errorf("PrivateDir on a file succeeded")
	}
}

// What the engine says while it is opened, and what the background start
// of the next session says (the none backend's host warning), reach every
// run once: the run that takes that session, as a run without the daemon
// would say them.
func TestEveryRunSaysWhatItsStartSaid(t *testing.T) {
	sock, _, _ := serve(t, time.Hour, func() *fakeEngine { return &fakeEngine{} })
	root := t.TempDir()
	for i := range 3 {
		_, lines, err := do(t, t.Context(), sock, Request{Op: OpTest, Root: root, Backend: config.BackendNone})
		if err != nil {
			t.Fatal(err)
		}
		count := func(want string) int {
			n := 0
			for _, l := range lines {
				if l == want {
					n++
				}
			}
			return n
		}
		if count(host.Warning) != 1 || count("engine opened") != 1 {
			t.Errorf("run %d: %q; want the host warning and the engine's own line once each", i+1, lines)
		}
	}
}

// Package warmd keeps `fixpoint test`'s sandbox warm between runs: a
// per-user background process (`fixpoint daemon`, started by
// `fixpoint test --keep-warm D`) holds one engine per workspace and
// configuration, runs each test request on a session it started ahead
// (agent.Engine.PrewarmTests), then starts the next one while the user
// reads the results. A repeated `fixpoint test` then pays for the
// snapshot, a sync of what changed and the test command, not for a
// container start, the setup check and a full copy of the workspace.
//
// One daemon serves one environment: its socket's name hashes the
// client's executable and environment (DOCKER_HOST, PATH, GOMODCACHE, the
// FIXPOINT_* settings…), and the client starts it with that environment,
// so a run through it sees what an in-process run would. The socket lives
// in a directory only the user can open (0700). The daemon exits after
// its idle time without a request, on `fixpoint daemon --stop`, or on
// SIGINT/SIGTERM, closing every session (the containers carry its pid
// as owner, so a crash leaves nothing the next start-up does not reap).
//
// The protocol is JSON lines over a unix socket: one [Request] from the
// client, then [Message]s until one carries a report or an error. The
// client closing the connection (Ctrl-C) cancels the request.
package warmd

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// Request is what a client sends, as one JSON line.
type Request struct {
	Op      string        `json:"op"`                 // OpTest, OpStop or OpPing
	Root    string        `json:"root,omitempty"`     // absolute workspace directory (OpTest)
	Backend string        `json:"backend,omitempty"`  // --sandbox
	Image   string        `json:"image,omitempty"`    // --image
	TestCmd string        `json:"test_cmd,omitempty"` // --test-cmd
	Idle    time.Duration `json:"idle,omitempty"`     // how long to stay up after this request; 0 keeps the daemon's
}

// Operations of a Request.
const (
	OpTest  = "test"
	OpStop  = "stop"
	OpPing  = "ping"
	OpReady = "ready" // answers once every session started ahead is up (or failed) and every used one removed: for benchmarks and tests
)

// Message is one line the daemon sends back.
type Message struct {
	Progress string          `json:"progress,omitempty"` // a line for the user's stderr
	Report   *testrun.Report `json:"report,omitempty"`   // the last message of a test
	Error    string          `json:"error,omitempty"`    // the last message of a failed request
	Config   bool            `json:"config,omitempty"`   // Error is a configuration error (a usage error)
	Warm     bool            `json:"warm,omitempty"`     // with Report: the run took a session started ahead
	PID      int             `json:"pid,omitempty"`      // OpPing: the daemon's process
}

// Engine is what the daemon needs of agent.Engine.
type Engine interface {
	Test(ctx context.Context, root string, overlays map[string][]byte) (*testrun.Report, error)
	PrewarmTests(ctx context.Context, root string, progress func(string)) error
	Warm() bool
	// WaitClosing waits for sessions still being removed in the background.
	WaitClosing()
	Close() error
}

// Server is the daemon.
type Server struct {
	// Load resolves the configuration of a request, as the CLI would.
	Load func(req Request) (*config.Config, error)
	// Open makes the engine of a workspace; warn receives its warnings
	// (the snapshot summary, setup progress), which go to the client. nil:
	// agent.Open without a model, removing used sessions in the background.
	Open func(ctx context.Context, cfg *config.Config, root string, warn io.Writer) (Engine, error)
	// Idle is how long the daemon stays up without a request.
	Idle   time.Duration
	Logger *slog.Logger

	mu      sync.Mutex
	engines map[string]*entry
	active  int       // requests being served
	last    time.Time // when the last request ended
	stop    chan struct{}
	stopped bool
}

// entry is one workspace's engine; its requests take turns.
type entry struct {
	turn      sync.Mutex
	eng       Engine
	openLines []string // what the engine said while it was opened
	warn      *switchWriter
	ctx       context.Context // the entry's lifetime: cancelled by Close
	cancel    context.CancelFunc
	prewarm   sync.WaitGroup
}

// Serve accepts requests on ln until the idle time passes without one,
// a stop request arrives or ctx ends; then it closes every engine (and
// their sessions) and returns.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	if s.Logger == nil {
		s.Logger = slog.New(slog.DiscardHandler)
	}
	if s.Open == nil {
		s.Open = func(ctx context.Context, cfg *config.Config, root string, warn io.Writer) (Engine, error) {
			return agent.Open(ctx, cfg, root, &agent.OpenOptions{Logger: s.Logger, Warn: warn, NoModel: true, CloseInBackground: true})
		}
	}
	s.mu.Lock()
	s.engines, s.last, s.stop = map[string]*entry{}, time.Now(), make(chan struct{})
	s.mu.Unlock()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var conns sync.WaitGroup
	go func() {
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
			case <-s.stop:
			case <-tick.C:
				if !s.idle() {
					continue
				}
				s.Logger.Info("idle: stopping", "idle", s.Idle)
			}
			ln.Close()
			return
		}
	}()
	for {
		c, err := ln.Accept()
		if err != nil {
			break
		}
		conns.Add(1)
		go func() {
			defer conns.Done()
			s.handle(ctx, c)
		}()
	}
	cancel()
	conns.Wait()
	s.closeAll()
	return nil
}

// idle reports whether no request ran for the idle time.
func (s *Server) idle() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active == 0 && time.Since(s.last) >= s.Idle
}

func (s *Server) closeAll() {
	s.mu.Lock()
	engines := s.engines
	s.engines = map[string]*entry{}
	s.mu.Unlock()
	for root, e := range engines {
		e.cancel()
		e.prewarm.Wait()
		if err := e.eng.Close(); err != nil {
			s.Logger.Warn("close engine", "root", root, "err", err)
		}
	}
}

func (s *Server) handle(ctx context.Context, c net.Conn) {
	defer c.Close()
	s.mu.Lock()
	s.active++
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		s.active--
		s.last = time.Now()
		s.mu.Unlock()
	}()
	var req Request
	r := bufio.NewReader(c)
	line, err := r.ReadBytes('\n')
	if err != nil || json.Unmarshal(line, &req) != nil {
		return
	}
	out := &sender{enc: json.NewEncoder(c)}
	// The client closing its end (Ctrl-C) cancels the request.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		_, _ = io.Copy(io.Discard, r)
		cancel()
	}()
	if req.Idle > 0 {
		s.mu.Lock()
		s.Idle = max(s.Idle, req.Idle)
		s.mu.Unlock()
	}
	switch req.Op {
	case OpPing:
		out.send(Message{PID: os.Getpid()})
	case OpReady:
		s.mu.Lock()
		entries := make([]*entry, 0, len(s.engines))
		for _, e := range s.engines {
			entries = append(entries, e)
		}
		s.mu.Unlock()
		for _, e := range entries {
			e.prewarm.Wait()
			e.eng.WaitClosing()
		}
		out.send(Message{PID: os.Getpid()})
	case OpStop:
		s.mu.Lock()
		if !s.stopped {
			s.stopped = true
			close(s.stop)
		}
		s.mu.Unlock()
		out.send(Message{PID: os.Getpid()})
	case OpTest:
		s.test(ctx, req, out)
	default:
		out.send(Message{Error: fmt.Sprintf("unknown request %q", req.Op)})
	}
}

// test runs one `fixpoint test` on the workspace's engine, then starts the
// session for the next one.
func (s *Server) test(ctx context.Context, req Request, out *sender) {
	if !filepath.IsAbs(req.Root) {
		out.send(Message{Error: fmt.Sprintf("workspace %q is not an absolute path", req.Root)})
		return
	}
	cfg, err := s.Load(req)
	if err != nil {
		out.send(Message{Error: err.Error(), Config: errors.Is(err, config.ErrInvalid)})
		return
	}
	e, created, err := s.entryFor(ctx, req.Root, cfg, out)
	if err != nil {
		out.send(Message{Error: err.Error()})
		return
	}
	if !created {
		// What opening the engine said (the none backend's host warning, a
		// degraded memory) is said on every run, as a run without the
		// daemon opens its engine and says it each time.
		for _, line := range e.openLines {
			out.send(Message{Progress: line})
		}
	}
	e.turn.Lock()
	defer e.turn.Unlock()
	e.prewarm.Wait() // a start under way is taken over by Test, never doubled
	warm := e.eng.Warm()
	e.warn.set(progressWriter(out))
	rep, err := e.eng.Test(ctx, req.Root, nil)
	e.warn.set(nil)
	// The next run's session starts now, while the user reads this one
	// (counted before the answer, so a ready request after it waits).
	e.prewarm.Add(1)
	if err != nil {
		out.send(Message{Error: err.Error()})
	} else {
		out.send(Message{Report: rep, Warm: warm})
	}
	go func() {
		defer e.prewarm.Done()
		err := e.eng.PrewarmTests(e.ctx, req.Root, nil)
		if errors.Is(err, sandbox.ErrChanged) {
			// A file changed between the snapshot and the sync (the user
			// is saving): take a new snapshot once.
			err = e.eng.PrewarmTests(e.ctx, req.Root, nil)
		}
		if err != nil && e.ctx.Err() == nil {
			s.Logger.Warn("could not start the next session ahead", "root", req.Root, "err", err)
		}
	}()
}

// entryFor returns the engine for root under cfg, making it on first use.
// The key covers the whole resolved configuration: a changed setting gets
// its own engine.
func (s *Server) entryFor(ctx context.Context, root string, cfg *config.Config, out *sender) (*entry, bool, error) {
	js, err := json.Marshal(cfg)
	if err != nil {
		return nil, false, err
	}
	sum := sha256.Sum256(js)
	key := root + "\x00" + fmt.Sprintf("%x", sum[:8])
	s.mu.Lock()
	e := s.engines[key]
	s.mu.Unlock()
	if e != nil {
		return e, false, nil
	}
	// What opening the engine says goes to this request, and is kept.
	var opened []string
	warn := &switchWriter{w: writerFunc(func(p []byte) {
		for _, line := range lines(p) {
			opened = append(opened, line)
			out.send(Message{Progress: line})
		}
	})}
	eng, err := s.Open(ctx, cfg, root, warn)
	warn.set(nil) // from now on, set by each request
	if err != nil {
		return nil, false, err
	}
	ectx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	e = &entry{eng: eng, warn: warn, openLines: opened, ctx: ectx, cancel: cancel}
	s.mu.Lock()
	if other := s.engines[key]; other != nil {
		s.mu.Unlock()
		cancel()
		eng.Close()
		return other, false, nil
	}
	s.engines[key] = e
	s.mu.Unlock()
	return e, true, nil
}

// sender writes Messages to one connection; progress may come from the
// engine's goroutines.
type sender struct {
	mu  sync.Mutex
	enc *json.Encoder
}

func (o *sender) send(m Message) {
	o.mu.Lock()
	defer o.mu.Unlock()
	_ = o.enc.Encode(m)
}

// progressWriter turns the engine's warning lines into Progress messages.
func progressWriter(out *sender) io.Writer {
	return writerFunc(func(p []byte) {
		for _, line := range lines(p) {
			out.send(Message{Progress: line})
		}
	})
}

// lines are the non-empty lines of one write.
func lines(p []byte) []string {
	var out []string
	for _, line := range strings.Split(strings.TrimRight(string(p), "\n"), "\n") {
		if line != "" {
			out = append(out, line)
		}
	}
	return out
}

type writerFunc func([]byte)

func (f writerFunc) Write(p []byte) (int, error) { f(p); return len(p), nil }

// switchWriter forwards to the current request's writer. Between
// requests it keeps what the background start of the next session says
// (the none backend's host warning, the setup phase's lines) and hands it
// to the request that takes that session, first.
type switchWriter struct {
	mu      sync.Mutex
	w       io.Writer
	pending []string
}

// maxPending bounds the lines kept between requests.
const maxPending = 200

func (s *switchWriter) set(w io.Writer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.w = w
	if w != nil {
		for _, line := range s.pending {
			io.WriteString(w, line+"\n")
		}
		s.pending = nil
	}
}

func (s *switchWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.w == nil {
		for _, line := range lines(p) {
			if len(s.pending) < maxPending {
				s.pending = append(s.pending, line)
			}
		}
		return len(p), nil
	}
	return s.w.Write(p)
}

// Client side.

// volatileEnv are variables that differ between shells without changing
// what a run does; they do not pick another daemon.
var volatileEnv = []string{"PWD", "OLDPWD", "SHLVL", "_", "COLUMNS", "LINES", "TERM_SESSION_ID", "WINDOWID", "SSH_TTY", "SSH_CLIENT", "SSH_CONNECTION"}

// SocketPath is the daemon socket for an executable and an environment:
// dir/<hash>.sock, dir being the user's private daemon directory. A path
// too long for a unix socket falls back to a private directory under the
// system's temporary directory.
func SocketPath(dir, exe string, env []string) string {
	h := sha256.New()
	fmt.Fprintf(h, "exe %s\x00", exe)
	if st, err := os.Stat(exe); err == nil {
		fmt.Fprintf(h, "%d %d\x00", st.Size(), st.ModTime().UnixNano())
	}
	env = slices.Clone(env)
	slices.Sort(env)
	for _, kv := range env {
		k, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(volatileEnv, k) {
			fmt.Fprintf(h, "%s\x00", kv)
		}
	}
	name := fmt.Sprintf("%x.sock", h.Sum(nil)[:8])
	p := filepath.Join(dir, name)
	if len(p) >= 100 {
		p = filepath.Join(os.TempDir(), fmt.Sprintf("fixpoint-daemon-%d", os.Getuid()), name)
	}
	return p
}

// PrivateDir makes the socket's directory, readable by the user only,
// and refuses one that someone else owns or others may open.
func PrivateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if !st.IsDir() {
		return fmt.Errorf("%s is not a directory", dir)
	}
	if st.Mode().Perm()&0o077 != 0 {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("%s is open to other users: %w", dir, err)
		}
	}
	return ownedByMe(dir)
}

// ErrNoDaemon is returned by Dial when no daemon listens on the socket.
var ErrNoDaemon = errors.New("no fixpoint daemon is running")

// Dial connects to the daemon on socket.
func Dial(ctx context.Context, socket string) (net.Conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", socket)
	if err != nil {
		return nil, fmt.Errorf("%w (%s): %v", ErrNoDaemon, socket, err)
	}
	return c, nil
}

// Do sends req on c and returns the final message; progress gets every
// progress line. Cancelling ctx closes the connection, which cancels the
// request in the daemon.
func Do(ctx context.Context, c net.Conn, req Request, progress func(string)) (Message, error) {
	stop := context.AfterFunc(ctx, func() { c.Close() })
	defer stop()
	line, _ := json.Marshal(req)
	if _, err := c.Write(append(line, '\n')); err != nil {
		return Message{}, fmt.Errorf("fixpoint daemon: %w", err)
	}
	dec := json.NewDecoder(bufio.NewReader(c))
	for {
		var m Message
		if err := dec.Decode(&m); err != nil {
			if ctx.Err() != nil {
				return Message{}, ctx.Err()
			}
			return Message{}, fmt.Errorf("fixpoint daemon: the connection ended before an answer: %w", err)
		}
		if m.Progress != "" {
			if progress != nil {
				progress(m.Progress)
			}
			continue
		}
		return m, nil
	}
}

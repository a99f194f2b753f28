package humaneval

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// Verdict is the outcome of one check program.
type Verdict struct {
	Passed   bool
	TimedOut bool
	Output   string // trimmed stderr+stdout, for the repair prompt
	Duration time.Duration
}

// Checker runs check programs. Implementations are safe for concurrent use.
type Checker interface {
	Check(ctx context.Context, program string, timeout time.Duration) (Verdict, error)
	Close() error
}

// Pool checks programs in warm sandbox sessions, one command per check,
// size sessions at most in parallel.
//
// A Pool is also a sandbox.Backend: Start lends one of its warm sessions,
// which returns to the pool when closed, so that agent runs (see [Agent])
// reuse sessions instead of starting a container per problem.
type Pool struct {
	name     string
	sessions chan sandbox.Session
	all      []sandbox.Session
}

// NewPool starts size sessions on b with spec, all at once: on a
// Kubernetes backend that is size pods created together, which the
// cluster's scheduler places; on one Docker engine, size containers.
// When any start fails, the others are closed.
func NewPool(ctx context.Context, b sandbox.Backend, spec sandbox.Spec, size int) (*Pool, error) {
	if size < 1 {
		size = 1
	}
	p := &Pool{name: b.Name(), sessions: make(chan sandbox.Session, size)}
	started := make([]sandbox.Session, size)
	errs := make([]error, size)
	var wg sync.WaitGroup
	for i := range size {
		wg.Go(func() {
			started[i], errs[i] = startWarm(ctx, b, spec)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("start sandbox session %d: %w", i+1, errs[i])
			}
		})
	}
	wg.Wait()
	for _, s := range started {
		if s != nil {
			p.all = append(p.all, s)
			p.sessions <- s
		}
	}
	for _, err := range errs {
		if err != nil {
			p.Close()
			return nil, err // the first: the others mostly repeat it
		}
	}
	return p, nil
}

// startWarm starts one session and syncs an empty workspace into it.
func startWarm(ctx context.Context, b sandbox.Backend, spec sandbox.Spec) (sandbox.Session, error) {
	s, err := b.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	if _, err := s.Sync(ctx, &sandbox.Snapshot{Files: map[string]sandbox.File{}}); err != nil {
		s.Close()
		return nil, fmt.Errorf("sync: %w", err)
	}
	return s, nil
}

// Check implements Checker.
func (p *Pool) Check(ctx context.Context, program string, timeout time.Duration) (Verdict, error) {
	var s sandbox.Session
	select {
	case s = <-p.sessions:
	case <-ctx.Done():
		return Verdict{}, ctx.Err()
	}
	defer func() { p.sessions <- s }()
	return runIn(ctx, s, program, timeout)
}

// Name implements sandbox.Backend: the pooled backend's name.
func (p *Pool) Name() string { return p.name }

// Start implements sandbox.Backend. It lends a warm session, waiting for
// one when all are lent; closing the session returns it. spec is ignored:
// the sessions were started with the pool's spec.
func (p *Pool) Start(ctx context.Context, spec sandbox.Spec) (sandbox.Session, error) {
	select {
	case s := <-p.sessions:
		return &lent{Session: s, pool: p}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// LendsSessions implements agent.LendingBackend: Start waits while all
// the pool's sessions are lent, so a run must not start two at once.
func (p *Pool) LendsSessions() bool { return true }

// lent is a pooled session on loan; Close gives it back, once.
type lent struct {
	sandbox.Session
	pool *Pool
	once sync.Once
}

func (l *lent) Close() error {
	l.once.Do(func() { l.pool.sessions <- l.Session })
	return nil
}

// Close closes every session.
func (p *Pool) Close() error {
	var errs []error
	for _, s := range p.all {
		errs = append(errs, s.Close())
	}
	p.all = nil
	return errors.Join(errs...)
}

func runIn(ctx context.Context, s sandbox.Session, program string, timeout time.Duration) (Verdict, error) {
	start := time.Now()
	res, err := s.Run(ctx, sandbox.Command{
		Args:   []string{"python3", "-"},
		Stdin:  []byte(program),
		Limits: sandbox.Limits{Timeout: timeout, OutputCap: 64 << 10},
	})
	if err != nil {
		return Verdict{}, err
	}
	return Verdict{
		Passed:   res.ExitCode == 0 && !res.TimedOut,
		TimedOut: res.TimedOut,
		Output:   trim(string(res.Stderr) + string(res.Stdout)),
		Duration: time.Since(start),
	}, nil
}

// OneShot starts a new session for every check, as agents that create a
// container per attempt do. It is the baseline Pool is measured against.
type OneShot struct {
	Backend sandbox.Backend
	Spec    sandbox.Spec
}

// Check implements Checker.
func (o *OneShot) Check(ctx context.Context, program string, timeout time.Duration) (Verdict, error) {
	start := time.Now()
	s, err := o.Backend.Start(ctx, o.Spec)
	if err != nil {
		return Verdict{}, err
	}
	defer s.Close()
	if _, err := s.Sync(ctx, &sandbox.Snapshot{Files: map[string]sandbox.File{}}); err != nil {
		return Verdict{}, err
	}
	v, err := runIn(ctx, s, program, timeout)
	v.Duration = time.Since(start)
	return v, err
}

// Close implements Checker.
func (o *OneShot) Close() error { return nil }

// Host runs checks as bare host processes, with no isolation at all. It is
// the floor for the overhead measurement and is never used for a model's
// code unless the user chose --sandbox=none.
type Host struct {
	Python string // "" = python3
}

// Check implements Checker.
func (h *Host) Check(ctx context.Context, program string, timeout time.Duration) (Verdict, error) {
	py := h.Python
	if py == "" {
		py = hostPython()
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	start := time.Now()
	cmd := exec.CommandContext(ctx, py, "-")
	cmd.Stdin = bytes.NewReader([]byte(program))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	v := Verdict{Duration: time.Since(start), Output: trim(out.String())}
	if ctx.Err() == context.DeadlineExceeded {
		v.TimedOut = true
		return v, nil
	}
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return v, fmt.Errorf("run %s: %w", py, err)
	}
	v.Passed = err == nil
	return v, nil
}

// Close implements Checker.
func (h *Host) Close() error { return nil }

// hostPython prefers the system interpreter: a version manager's shim on
// PATH (pyenv's is a shell script) costs tens of milliseconds per start and
// would make the "bare" floor look slower than it is.
func hostPython() string {
	for _, p := range []string{"/usr/bin/python3", "/usr/local/bin/python3"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "python3"
}

// trim keeps the tail of long output: the traceback's end says what failed.
func trim(s string) string {
	const max = 2000
	if len(s) <= max {
		return s
	}
	return "…" + s[len(s)-max:]
}

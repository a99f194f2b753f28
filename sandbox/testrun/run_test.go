package testrun

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// localSession is a minimal sandbox.Session that runs commands as real
// processes in a temporary directory. It stands in for the host backend
// so that Run's tests depend on no backend package; it is not a sandbox.
// It implements WorkDir, so it also exercises path normalisation for a
// workspace that is not at /workspace.
type localSession struct {
	dir  string
	path string // PATH for commands
}

func newLocalSession(t *testing.T) *localSession {
	t.Helper()
	// Debian's python3 has pytest; the go on PATH (the one running these
	// tests) for go test.
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go tests need the go command on PATH: %v", err)
	}
	p := strings.Join([]string{filepath.Dir(goBin), "/usr/bin", "/bin", "/usr/local/bin"}, string(os.PathListSeparator))
	return &localSession{dir: t.TempDir(), path: p}
}

func (s *localSession) WorkDir() string { return s.dir }

func (s *localSession) Sync(_ context.Context, snap *sandbox.Snapshot) (sandbox.SyncStats, error) {
	var st sandbox.SyncStats
	for rel, f := range snap.Files {
		p := filepath.Join(s.dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return st, err
		}
		data, err := f.Bytes()
		if err != nil {
			return st, err
		}
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return st, err
		}
		st.Written++
		st.Bytes += int64(len(data))
	}
	return st, nil
}

func (s *localSession) Run(ctx context.Context, c sandbox.Command) (*sandbox.Result, error) {
	timeout := c.Limits.Timeout
	if timeout == 0 {
		timeout = time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	// exec.Command looks names up on this process's PATH: use the session's.
	bin := c.Args[0]
	for _, d := range filepath.SplitList(s.path) {
		if st, err := os.Stat(filepath.Join(d, bin)); err == nil && st.Mode()&0o111 != 0 && !strings.Contains(bin, "/") {
			bin = filepath.Join(d, bin)
			break
		}
	}
	cmd := exec.CommandContext(ctx, bin, c.Args[1:]...)
	cmd.Dir = filepath.Join(s.dir, c.Dir)
	home := filepath.Join(os.TempDir(), "fixpoint-testrun-home")
	cmd.Env = append([]string{"PATH=" + s.path, "HOME=" + home, "GOCACHE=" + goEnv("GOCACHE"), "GOMODCACHE=" + goEnv("GOMODCACHE"), "GOFLAGS=-mod=mod", "GOTOOLCHAIN=local"}, c.Env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 2 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = tee(&stdout, c.Stdout), tee(&stderr, c.Stderr)
	start := time.Now()
	err := cmd.Run()
	res := &sandbox.Result{Stdout: stdout.Bytes(), Stderr: stderr.Bytes(), Duration: time.Since(start)}
	var exit *exec.ExitError
	switch {
	case ctx.Err() == context.DeadlineExceeded:
		res.TimedOut, res.ExitCode = true, 124
	case errors.As(err, &exit):
		res.ExitCode = exit.ExitCode()
	case err != nil:
		return nil, err
	}
	return res, nil
}

func tee(buf *bytes.Buffer, w interface{ Write([]byte) (int, error) }) interface{ Write([]byte) (int, error) } {
	if w == nil {
		return buf
	}
	return multiWriter{buf, w}
}

type multiWriter [2]interface{ Write([]byte) (int, error) }

func (m multiWriter) Write(p []byte) (int, error) {
	m[0].Write(p)
	return m[1].Write(p)
}

var goEnvOnce sync.Map

func goEnv(key string) string {
	if v, ok := goEnvOnce.Load(key); ok {
		return v.(string)
	}
	out, _ := exec.Command("go", "env", key).Output()
	v := strings.TrimSpace(string(out))
	goEnvOnce.Store(key, v)
	return v
}

func (s *localSession) ReadFile(_ context.Context, rel string) ([]byte, error) {
	c, err := sandbox.CleanRel(rel)
	if err != nil {
		return nil, err
	}
	return os.ReadFile(filepath.Join(s.dir, filepath.FromSlash(c)))
}

func (s *localSession) Close() error { return nil }

// projectRunners are the runners the projects' languages choose
// (lang/registry.TestCommand, tested there on the same projects; testrun
// cannot import the languages, which import it).
var projectRunners = map[string]Runner{
	"gopanic":   {Name: RunnerGo, Args: []string{"go", "test", "-json", "./..."}},
	"gotimeout": {Name: RunnerGo, Args: []string{"go", "test", "-json", "./..."}},
	"gofail":    {Name: RunnerGo, Args: []string{"go", "test", "-json", "./..."}},
	"pyfail": {Name: RunnerPytest, Args: []string{"python3", "-m", "pytest", "-v", "-rA", "--junitxml=" + JUnitPath, "-p", "no:cacheprovider"},
		Env: []string{"PYTHONDONTWRITEBYTECODE=1"}, ReportPath: JUnitPath},
	"nodefail": {Name: RunnerNode, Args: []string{"node", "--test", "--test-reporter=tap"}},
}

// moduleOf is the module path of a project's go.mod, "" without one.
func moduleOf(sn *sandbox.Snapshot) string {
	gomod, _ := sn.Text("go.mod")
	for _, line := range strings.Split(gomod, "\n") {
		if f := strings.Fields(line); len(f) >= 2 && f[0] == "module" {
			return strings.Trim(f[1], `"`)
		}
	}
	return ""
}

// startProject syncs testdata/projects/<name> into a fresh local session
// and returns the session and its language's runner.
func startProject(t *testing.T, name string) (*localSession, Runner) {
	t.Helper()
	sn := snapshot(t, filepath.Join("testdata", "projects", name))
	s := newLocalSession(t)
	if _, err := s.Sync(t.Context(), sn); err != nil {
		t.Fatal(err)
	}
	r, ok := projectRunners[name]
	if !ok {
		t.Fatalf("no runner for project %s", name)
	}
	if r.Name == RunnerGo {
		r.Format = GoTestJSON(moduleOf(sn), nil)
	} else {
		r.Format = formatNamed(r.Name)
	}
	return s, r
}

func findTest(rep *Report, id string) *Result {
	for i := range rep.Tests {
		if rep.Tests[i].ID == id {
			return &rep.Tests[i]
		}
	}
	return nil
}

func TestRunGoPanicOutsideWorkspaceRoot(t *testing.T) {
	sess, r := startProject(t, "gopanic")
	var stream bytes.Buffer
	rep, err := Run(t.Context(), sess, r, sandbox.Limits{Timeout: 2 * time.Minute}, &stream)
	if err != nil {
		t.Fatal(err)
	}
	put := findTest(rep, "example.com/store.TestPut")
	if put == nil || put.Status != StatusFail {
		t.Fatalf("TestPut = %+v, want a failure; tests %+v", put, rep.Tests)
	}
	// The panic trace holds absolute paths under the session's temporary
	// directory; they must come back workspace-relative.
	if put.File != "store.go" || put.Line != 10 {
		t.Errorf("TestPut at %s:%d, want store.go:10 (frames %+v)", put.File, put.Line, put.Frames)
	}
	if !strings.Contains(stream.String(), `"Action":"run"`) {
		t.Errorf("stream got %q, want the live go test -json output", stream.String())
	}
	if rep.OK() || rep.ExitCode == 0 {
		t.Errorf("OK() = %v, ExitCode = %d for a panicking test", rep.OK(), rep.ExitCode)
	}
}

func TestRunTimeoutMarksRunningTests(t *testing.T) {
	sess, r := startProject(t, "gotimeout")
	// Build first, so the timeout below lands while TestSlow runs.
	if res, err := sess.Run(t.Context(), sandbox.Command{Args: []string{"go", "test", "-count=1", "-run", "TestFast", "./..."}}); err != nil || res.ExitCode != 0 {
		t.Fatalf("warm-up build: %v %+v", err, res)
	}
	rep, err := Run(t.Context(), sess, r, sandbox.Limits{Timeout: 10 * time.Second}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !rep.TimedOut || rep.OK() {
		t.Fatalf("TimedOut = %v, OK() = %v, want a timed-out report", rep.TimedOut, rep.OK())
	}
	slow := findTest(rep, "example.com/slow.TestSlow")
	if slow == nil || slow.Status != StatusError || slow.Message != "timed out" {
		t.Errorf("TestSlow = %+v, want error \"timed out\"", slow)
	}
	if fast := findTest(rep, "example.com/slow.TestFast"); fast == nil || fast.Status != StatusPass {
		t.Errorf("TestFast = %+v, want pass", fast)
	}
}

func requirePytest(t *testing.T) {
	t.Helper()
	if err := exec.Command("/usr/bin/python3", "-m", "pytest", "--version").Run(); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and Debian's python3-pytest is not installed (.ci/setup installs it): %v", err)
		}
		t.Skipf("skipping outside CI: Debian's python3-pytest is not installed: %v", err)
	}
}

func TestRunPytestReadsReport(t *testing.T) {
	requirePytest(t)
	sess, r := startProject(t, "pyfail")
	rep, err := Run(t.Context(), sess, r, sandbox.Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	p := findTest(rep, "tests/test_calc.py::test_add_param[1-1-2]")
	if p == nil || p.Status != StatusFail || p.File != "tests/test_calc.py" || p.Line != 16 || p.Expected != "2" || p.Actual != "0" {
		t.Fatalf("test_add_param[1-1-2] = %+v, want a failure at tests/test_calc.py:16 expecting 2, got 0", p)
	}
	if rep.Passed != 3 || rep.Failed != 7 || rep.Skipped != 1 {
		t.Errorf("passed/failed/skipped = %d/%d/%d, want 3/7/1", rep.Passed, rep.Failed, rep.Skipped)
	}

	// A usage error (exit 4) writes no report: the previous run's report,
	// still on disk, must not be mistaken for this run's results.
	bad := r
	bad.Args = append(append([]string{}, r.Args...), "--no-such-flag")
	rep, err = Run(t.Context(), sess, bad, sandbox.Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.ExitCode != 4 || len(rep.Tests) != 1 || rep.Tests[0].ID != "(exit)" || !strings.Contains(rep.Tests[0].Message, "no-such-flag") {
		t.Errorf("usage error gave exit %d and tests %+v, want exit 4 and one (exit) error naming the flag", rep.ExitCode, rep.Tests)
	}
}

func TestRunNode(t *testing.T) {
	if _, err := exec.LookPath("node"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("CI=true and node is not installed")
		}
		t.Skip("skipping outside CI: node is not installed")
	}
	sess, r := startProject(t, "nodefail")
	rep, err := Run(t.Context(), sess, r, sandbox.Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := findTest(rep, "with subtests > sub fails")
	if got == nil || got.File != "test/calc.test.js" || got.Line != 40 || got.Expected != "10" || got.Actual != "0" {
		t.Errorf("sub fails = %+v, want test/calc.test.js:40 expecting 10, got 0", got)
	}
}

func TestRunCustomSniffs(t *testing.T) {
	sess, _ := startProject(t, "gofail")
	tests := []struct {
		name, cmd, runner string
		failed            int
	}{
		{name: "go json", cmd: "go test -json ./util", runner: RunnerGo},
		{name: "plain go test", cmd: "go test ./...", runner: RunnerExitCode, failed: 1},
		{name: "shell", cmd: "echo boom >&2; exit 3", runner: RunnerExitCode, failed: 1},
		// An assignment in front runs through the shell, not as a program.
		{name: "assignment first", cmd: "GOFLAGS=-count=1 go test -json ./util", runner: RunnerGo},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := Custom(tt.cmd, testFormats())
			rep, err := Run(t.Context(), sess, r, sandbox.Limits{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Runner != tt.runner || rep.Failed != tt.failed {
				t.Errorf("Run(%q): runner %q, %d failed, want %q, %d (output %q)", tt.cmd, rep.Runner, rep.Failed, tt.runner, tt.failed, rep.Output)
			}
			if tt.failed > 0 && rep.Output == "" {
				t.Errorf("Run(%q): no output kept for an unknown runner", tt.cmd)
			}
		})
	}
}

func TestRunNoRunner(t *testing.T) {
	_, err := Run(t.Context(), newLocalSession(t), Runner{Name: RunnerCustom, Formats: testFormats()}, sandbox.Limits{}, nil)
	if !errors.Is(err, ErrNoRunner) {
		t.Errorf("Run without a command: %v, want ErrNoRunner", err)
	}
}

// A traced run's file is this run's: an earlier one (left by the
// workspace, or a run that wrote none) is removed before the command
// starts, and what the command writes comes back in Report.Trace.
func TestRunReadsBackThisRunsTrace(t *testing.T) {
	s := newLocalSession(t)
	const trace = ".fixpoint/trace"
	planted := filepath.Join(s.dir, ".fixpoint", "trace")
	if err := os.MkdirAll(filepath.Dir(planted), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(planted, []byte("planted"), 0o644); err != nil {
		t.Fatal(err)
	}
	silent := Runner{Args: []string{"true"}, TracePath: trace}
	rep, err := Run(t.Context(), s, silent, sandbox.Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Trace != nil {
		t.Fatalf("a run that wrote no trace read back %q: the planted file was not removed", rep.Trace.Data)
	}
	writes := Runner{Args: []string{"sh", "-c", `printf 'ran' > "$0"`, trace}, TracePath: trace}
	rep, err = Run(t.Context(), s, writes, sandbox.Limits{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Trace == nil || string(rep.Trace.Data) != "ran" || rep.Trace.Root == "" {
		t.Fatalf("trace read back = %+v, want this run's \"ran\" with the workspace root", rep.Trace)
	}
}

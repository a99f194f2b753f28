package host

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// Defaults for zero Limits fields, the same as the docker backend's.
const (
	DefaultTimeout   = 60 * time.Second
	DefaultMemory    = 1 << 30
	DefaultPids      = 256
	DefaultOutputCap = 1 << 20
	DefaultFileSize  = 256 << 20
	DefaultNoFile    = 1024
)

// UIDBase is the first of the uids given to sessions when fixpoint runs as
// root; sessions use UIDBase..UIDBase+UIDCount-1.
const (
	UIDBase  = 61000
	UIDCount = 4000
)

// Dirs are a session's host directories.
type Dirs struct {
	Root      string // private (0700) session directory
	Workspace string // the workspace copy
	Tmp       string // the command's TMPDIR
	Home      string // the command's HOME
}

// Wrap turns a command into what is executed. rel is the cleaned
// workspace-relative directory ("" = root).
type Wrap func(d Dirs, rel string, args []string, spec sandbox.Spec) (Launch, error)

// Launch is what a Wrap decided to execute.
type Launch struct {
	Argv []string // Argv[0] is looked up on fixpoint's PATH
	Dir  string   // host working directory
	Env  []string // the complete environment before Command.Env
	// ExtraFiles are passed as fds 3, 4, ... and closed after the start.
	ExtraFiles []*os.File
}

// SessionOptions configure NewSession.
type SessionOptions struct {
	Name    string // backend name, for directory names and logs
	Wrap    Wrap   // required
	TempDir string // "" = os.TempDir()
	Logger  *slog.Logger
	// Cleanup, when non-nil, is called with the session directory's
	// removal error to decide whether to retry (unused today).
}

// Session is a workspace copy on the host. Run calls are serialised; Close
// may be called concurrently to abort a running command.
type Session struct {
	spec sandbox.Spec
	opts SessionOptions
	dirs Dirs
	uid  int // -1 = run as fixpoint's own uid
	log  *slog.Logger

	runMu sync.Mutex // serialises Run and Sync

	mu     sync.Mutex // guards the fields below
	last   *sandbox.Snapshot
	pgid   int // process group of the running command, 0 when idle
	closed bool
}

// WorkDir is the session's workspace copy on the host. Test result
// parsers use it to make the absolute paths a runner prints (none backend)
// workspace-relative; under bwrap commands see it as /workspace, which the
// parsers know already.
func (s *Session) WorkDir() string { return s.dirs.Workspace }

var (
	sessionSeq atomic.Int64
	reapOnce   sync.Once // the first session of a process reaps dead ones' dirs
)

// Reap cleans up after fixpoint processes that died without closing their
// sessions (SIGKILL): under tempDir ("" = os.TempDir()), each session
// directory fixpoint-<backend>-<pid>-<uid>-* whose pid is gone is removed,
// after killing the processes of its session uid (bwrap's die with their
// namespace anyway; the none backend's daemons would survive).
func Reap(tempDir string, log *slog.Logger) (removed int) {
	if tempDir == "" {
		tempDir = os.TempDir()
	}
	matches, _ := filepath.Glob(filepath.Join(tempDir, "fixpoint-*-*-*-*"))
	for _, m := range matches {
		parts := strings.Split(filepath.Base(m), "-")
		if len(parts) != 5 || (parts[1] != "bwrap" && parts[1] != "none") {
			continue
		}
		pid, err := strconv.Atoi(parts[2])
		if err != nil || pid <= 0 || pidAlive(pid) {
			continue
		}
		if uid, err := strconv.Atoi(parts[3]); err == nil && uid >= UIDBase && uid < UIDBase+UIDCount && os.Geteuid() == 0 {
			(&Session{uid: uid}).killUID()
		}
		if err := os.RemoveAll(m); err == nil {
			removed++
			if log != nil {
				log.Debug("reaped session dir", "dir", m)
			}
		}
	}
	return removed
}

// pidAlive reports whether pid runs; a zombie (killed, not yet reaped by
// its parent) counts as gone.
func pidAlive(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true // no /proc: trust kill
	}
	// The state follows the parenthesised command name.
	if i := bytes.LastIndexByte(stat, ')'); i >= 0 && i+2 < len(stat) {
		return stat[i+2] != 'Z'
	}
	return true
}

// NewSession creates the session directories. The workspace stays empty
// until Sync.
func NewSession(ctx context.Context, spec sandbox.Spec, o *SessionOptions) (*Session, error) {
	if o == nil || o.Wrap == nil {
		return nil, errors.New("host session: no Wrap")
	}
	s := &Session{spec: spec, opts: *o, uid: -1, last: &sandbox.Snapshot{Files: map[string]sandbox.File{}}}
	s.log = o.Logger
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	reapOnce.Do(func() { Reap(o.TempDir, s.log) })
	if os.Geteuid() == 0 {
		s.uid = UIDBase + int((int64(os.Getpid())*131+sessionSeq.Add(1))%UIDCount)
	}
	// The name carries the owner pid and the session uid for Reap.
	root, err := os.MkdirTemp(o.TempDir, fmt.Sprintf("fixpoint-%s-%d-%d-", o.Name, os.Getpid(), max(s.uid, 0)))
	if err != nil {
		return nil, fmt.Errorf("%s sandbox: create session dir: %w", o.Name, err)
	}
	s.dirs = Dirs{Root: root, Workspace: filepath.Join(root, "workspace"), Tmp: filepath.Join(root, "tmp"), Home: filepath.Join(root, "home")}
	for _, d := range []string{s.dirs.Workspace, s.dirs.Tmp, s.dirs.Home} {
		if err := os.Mkdir(d, 0o755); err != nil {
			os.RemoveAll(root)
			return nil, fmt.Errorf("%s sandbox: %w", o.Name, err)
		}
		if err := s.chown(d); err != nil {
			os.RemoveAll(root)
			return nil, err
		}
	}
	if err := s.chown(root); err != nil { // 0700 from MkdirTemp: only the session uid gets in
		os.RemoveAll(root)
		return nil, err
	}
	s.log.Debug("session started", "backend", o.Name, "dir", root, "uid", s.uid)
	return s, nil
}

// Dirs returns the session's host directories.
func (s *Session) Dirs() Dirs { return s.dirs }

// UID returns the uid commands run as, or -1 for fixpoint's own.
func (s *Session) UID() int { return s.uid }

func (s *Session) chown(p string) error {
	if s.uid < 0 {
		return nil
	}
	if err := os.Lchown(p, s.uid, s.uid); err != nil {
		return fmt.Errorf("%s sandbox: chown: %w", s.opts.Name, err)
	}
	return nil
}

// Sync writes the files that changed since the previous Sync and deletes
// the ones that disappeared.
func (s *Session) Sync(ctx context.Context, snap *sandbox.Snapshot) (sandbox.SyncStats, error) {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	var st sandbox.SyncStats
	s.mu.Lock()
	closed, last := s.closed, s.last
	s.mu.Unlock()
	if closed {
		return st, sandbox.ErrClosed
	}
	changed, deleted := last.Diff(snap)
	root, err := os.OpenRoot(s.dirs.Workspace)
	if err != nil {
		return st, fmt.Errorf("%s sandbox: %w", s.opts.Name, err)
	}
	defer root.Close()
	made := map[string]bool{} // directories created and chowned by this Sync
	for _, rel := range changed {
		if err := ctx.Err(); err != nil {
			return st, err
		}
		clean, err := sandbox.CleanRel(rel)
		if err != nil {
			return st, fmt.Errorf("sync: %w", err)
		}
		f := snap.Files[rel]
		if err := s.writeFile(root, clean, f, made); err != nil {
			return st, fmt.Errorf("sync %s: %w", rel, err)
		}
		st.Written++
		st.Bytes += f.Size()
	}
	for _, rel := range deleted {
		clean, err := sandbox.CleanRel(rel)
		if err != nil {
			continue
		}
		if err := root.Remove(clean); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return st, fmt.Errorf("sync: delete %s: %w", rel, err)
		}
		st.Deleted++
	}
	// Directories get their host times last: writing a file inside one
	// changes its time (see sandbox.Snapshot.DirModTimes).
	for rel, mt := range snap.DirModTimes() {
		clean := "."
		if rel != "." {
			if clean, err = sandbox.CleanRel(rel); err != nil {
				continue
			}
		}
		if fi, err := root.Lstat(clean); err == nil && fi.IsDir() {
			if err := root.Chtimes(clean, mt, mt); err != nil {
				return st, fmt.Errorf("sync: %s: %w", rel, err)
			}
		}
	}
	s.mu.Lock()
	s.last = snap
	s.mu.Unlock()
	return st, nil
}

func (s *Session) writeFile(root *os.Root, rel string, f sandbox.File, made map[string]bool) error {
	mode := f.Mode.Perm()
	if mode == 0 {
		mode = 0o644
	}
	if dir := path.Dir(rel); dir != "." && !made[dir] {
		if err := root.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		for d := dir; d != "." && !made[d]; d = path.Dir(d) {
			if err := s.chown(filepath.Join(s.dirs.Workspace, d)); err != nil {
				return err
			}
			made[d] = true
		}
	}
	root.RemoveAll(rel) // a command may have made it read-only or a directory of its own
	if f.IsLink() {
		// The snapshot keeps only links that resolve inside the workspace;
		// os.Root refuses to follow one out all the same.
		if err := root.Symlink(f.Link, rel); err != nil {
			return err
		}
		if s.uid >= 0 {
			return root.Lchown(rel, s.uid, s.uid)
		}
		return nil
	}
	w, err := root.OpenFile(rel, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if err := copyContents(w, f); err != nil {
		w.Close()
		return err
	}
	if err := w.Chmod(mode); err != nil {
		w.Close()
		return err
	}
	if s.uid >= 0 {
		if err := w.Chown(s.uid, s.uid); err != nil {
			w.Close()
			return err
		}
	}
	if err := w.Close(); err != nil {
		return err
	}
	// The host file's time, so that tools keyed on times (Go's test cache)
	// see an unchanged file as unchanged across sessions (see
	// sandbox.File.ModTime); a buffer's contents keep the current time.
	if mt := f.ModTime(); !mt.IsZero() {
		return root.Chtimes(rel, mt, mt)
	}
	return nil
}

// copyContents streams a snapshot file into w: a file read from the
// workspace is never held in memory whole.
func copyContents(w io.Writer, f sandbox.File) error {
	r, err := f.Open()
	if err != nil {
		return err
	}
	_, err = io.Copy(w, r)
	if cerr := r.Close(); err == nil {
		err = cerr
	}
	return err
}

// ReadFile reads a file of the workspace copy; symlinks cannot lead out.
func (s *Session) ReadFile(ctx context.Context, rel string) ([]byte, error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if closed {
		return nil, sandbox.ErrClosed
	}
	clean, err := sandbox.CleanRel(rel)
	if err != nil {
		return nil, err
	}
	root, err := os.OpenRoot(s.dirs.Workspace)
	if err != nil {
		return nil, err
	}
	defer root.Close()
	return root.ReadFile(clean)
}

// Close kills whatever still runs and removes the session directory.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	pgid := s.pgid
	s.mu.Unlock()
	if pgid > 0 {
		syscall.Kill(-pgid, syscall.SIGKILL)
	}
	s.runMu.Lock() // wait for a running command to be reaped
	defer s.runMu.Unlock()
	s.killUID()
	err := os.RemoveAll(s.dirs.Root)
	if err != nil {
		// A command may have left directories without write permission.
		filepath.WalkDir(s.dirs.Root, func(p string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				os.Chmod(p, 0o700)
			}
			return nil
		})
		err = os.RemoveAll(s.dirs.Root)
	}
	if err != nil {
		return fmt.Errorf("%s sandbox: remove %s: %w", s.opts.Name, s.dirs.Root, err)
	}
	return nil
}

// killUID kills every process of the session's uid: what a command left
// behind, whatever its process group or session.
func (s *Session) killUID() {
	if s.uid < 0 {
		return
	}
	cmd := exec.Command("/bin/sh", "-c", "kill -9 -1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.uid)}}
	cmd.Env = []string{"PATH=/usr/bin:/bin"}
	cmd.Run() // it kills itself too
}

// limits fills zero (or negative) fields from the spec, then the
// defaults: no value turns a limit off.
func (s *Session) limits(l sandbox.Limits) sandbox.Limits {
	d := s.spec.Limits
	pick := func(a, b, c int64) int64 {
		if a > 0 {
			return a
		}
		if b > 0 {
			return b
		}
		return c
	}
	var out sandbox.Limits
	out.Timeout = time.Duration(pick(int64(l.Timeout), int64(d.Timeout), int64(DefaultTimeout)))
	out.CPUTime = time.Duration(pick(int64(l.CPUTime), int64(d.CPUTime), int64(out.Timeout)))
	out.Memory = pick(l.Memory, d.Memory, DefaultMemory)
	out.Pids = int(pick(int64(l.Pids), int64(d.Pids), DefaultPids))
	out.OutputCap = pick(l.OutputCap, d.OutputCap, DefaultOutputCap)
	out.FileSize = pick(l.FileSize, d.FileSize, DefaultFileSize)
	out.NoFile = int(pick(int64(l.NoFile), int64(d.NoFile), DefaultNoFile))
	out.NanoCPUs = pick(l.NanoCPUs, d.NanoCPUs, 2e9)
	return out
}

// prlimitArgs sets the rlimits through util-linux prlimit. RLIMIT_NPROC
// only when the session has its own uid: for a normal user it would count
// all of the user's processes.
func (s *Session) prlimitArgs(l sandbox.Limits) []string {
	cpu := int64((l.CPUTime + time.Second - 1) / time.Second)
	args := []string{"prlimit",
		"--cpu=" + strconv.FormatInt(cpu, 10),
		"--data=" + strconv.FormatInt(l.Memory, 10),
		"--fsize=" + strconv.FormatInt(l.FileSize, 10),
		"--nofile=" + strconv.Itoa(l.NoFile),
		"--core=0",
	}
	if s.uid >= 0 {
		args = append(args, "--nproc="+strconv.Itoa(l.Pids))
	}
	return append(args, "--")
}

// Run runs cmd and waits for it. A timeout or a cancelled ctx kills the
// command's process group (and, with a session uid, all its processes).
func (s *Session) Run(ctx context.Context, c sandbox.Command) (*sandbox.Result, error) {
	s.runMu.Lock()
	defer s.runMu.Unlock()
	if len(c.Args) == 0 {
		return nil, errors.New("run: empty command")
	}
	var rel string
	if c.Dir != "" && c.Dir != "." {
		var err error
		if rel, err = sandbox.CleanRel(c.Dir); err != nil {
			return nil, fmt.Errorf("run: dir: %w", err)
		}
	}
	l := s.limits(c.Limits)
	launch, err := s.opts.Wrap(s.dirs, rel, c.Args, s.spec)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, f := range launch.ExtraFiles {
			f.Close()
		}
	}()
	argv, dir, env := launch.Argv, launch.Dir, launch.Env
	if !s.found(c.Args[0], env) {
		// The docker backend's supervisor answers the same way.
		msg := "fixpoint: " + c.Args[0] + ": command not found\n"
		if c.Stderr != nil {
			io.WriteString(c.Stderr, msg)
		}
		return &sandbox.Result{ExitCode: 127, Stderr: []byte(msg)}, nil
	}
	argv = append(s.prlimitArgs(l), argv...)
	env = append(env, s.spec.Env...)
	env = append(env, c.Env...)
	prog, err := exec.LookPath(argv[0])
	if err != nil {
		return nil, fmt.Errorf("%s sandbox: %w", s.opts.Name, err)
	}
	cmd := &exec.Cmd{Path: prog, Args: argv, Dir: dir, Env: env, ExtraFiles: launch.ExtraFiles}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if s.uid >= 0 {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: uint32(s.uid), Gid: uint32(s.uid), NoSetGroups: false}
	}
	if c.Stdin != nil {
		cmd.Stdin = bytes.NewReader(c.Stdin)
	}
	stdout := &capWriter{limit: l.OutputCap, stream: c.Stdout, full: c.FullStdout}
	stderr := &capWriter{limit: l.OutputCap, stream: c.Stderr, full: c.FullStderr}
	// Our own pipes, so that Wait returns when the command exits and the
	// leftovers are killed before the output is drained: a daemon holding
	// the pipes cannot block Run.
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = outW, errW

	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		for _, f := range []*os.File{outR, outW, errR, errW} {
			f.Close()
		}
		return nil, sandbox.ErrClosed
	}
	start := time.Now()
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		s.mu.Unlock()
		outR.Close()
		errR.Close()
		return nil, fmt.Errorf("%s sandbox: start %s: %w", s.opts.Name, c.Args[0], err)
	}
	s.pgid = cmd.Process.Pid
	s.mu.Unlock()
	var drained sync.WaitGroup
	drained.Add(2)
	go func() { defer drained.Done(); io.Copy(stdout, outR) }()
	go func() { defer drained.Done(); io.Copy(stderr, errR) }()

	var timedOut atomic.Bool
	timer := time.AfterFunc(l.Timeout, func() {
		timedOut.Store(true)
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	})
	stop := context.AfterFunc(ctx, func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	werr := cmd.Wait()
	timer.Stop()
	stop()
	syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // background jobs of the same group
	s.killUID()
	done := make(chan struct{})
	go func() { drained.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second): // an escaped holder (only without a session uid)
		outR.Close()
		errR.Close()
		<-done
	}
	outR.Close()
	errR.Close()
	s.mu.Lock()
	s.pgid = 0
	closed := s.closed
	s.mu.Unlock()

	res := &sandbox.Result{
		Stdout: stdout.buf.Bytes(), Stderr: stderr.buf.Bytes(),
		Truncated: stdout.truncated || stderr.truncated,
		Duration:  time.Since(start),
	}
	res.ExitCode = exitCode(cmd.ProcessState)
	switch {
	case timedOut.Load():
		res.ExitCode, res.TimedOut = 124, true
	case ctx.Err() != nil:
		return res, ctx.Err()
	case closed:
		return res, sandbox.ErrClosed
	case werr != nil && cmd.ProcessState == nil:
		return res, fmt.Errorf("%s sandbox: wait: %w", s.opts.Name, werr)
	}
	return res, nil
}

// found reports whether name is an executable on the command's PATH.
// Paths with a slash are left to the command. PATH entries under
// /workspace (the bwrap view) are looked up in the workspace copy.
func (s *Session) found(name string, env []string) bool {
	if strings.Contains(name, "/") {
		return true
	}
	var pathVar string
	for _, e := range env {
		if v, ok := strings.CutPrefix(e, "PATH="); ok {
			pathVar = v
		}
	}
	for _, dir := range filepath.SplitList(pathVar) {
		if rest, ok := strings.CutPrefix(dir, "/workspace"); ok && (rest == "" || rest[0] == '/') {
			dir = s.dirs.Workspace + rest
		}
		if st, err := os.Stat(filepath.Join(dir, name)); err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0 {
			return true
		}
	}
	return false
}

func exitCode(ps *os.ProcessState) int {
	if ps == nil {
		return -1
	}
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ps.ExitCode()
}

// capWriter keeps and forwards up to limit bytes, then the marker once.
// full, when set, gets every byte.
type capWriter struct {
	limit     int64
	stream    io.Writer
	full      io.Writer
	buf       bytes.Buffer
	truncated bool
}

// TruncationMarker ends a stream cut at limit bytes (the docker backend's
// wording).
func TruncationMarker(limit int64) string {
	return fmt.Sprintf("\n[fixpoint: output truncated after %d bytes]\n", limit)
}

func (w *capWriter) Write(p []byte) (int, error) {
	n := len(p)
	if w.full != nil {
		w.full.Write(p)
	}
	if w.truncated {
		return n, nil
	}
	if rem := w.limit - int64(w.buf.Len()); int64(len(p)) > rem {
		p = p[:rem]
		w.truncated = true
	}
	w.buf.Write(p)
	if w.stream != nil && len(p) > 0 {
		w.stream.Write(p)
	}
	if w.truncated {
		m := TruncationMarker(w.limit)
		w.buf.WriteString(m)
		if w.stream != nil {
			io.WriteString(w.stream, m)
		}
	}
	return n, nil
}

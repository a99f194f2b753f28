package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"github.com/fixpoint-dev/fixpoint/sandbox/docker/internal/wire"
)

// run runs one command and always ends with an Exit or Error frame.
func (s *server) run(st *runState, req wire.RunRequest) {
	status, err := s.runCommand(st, req)
	// Done before replying, so the host may send the next Run at once.
	s.runMu.Lock()
	s.running = nil
	s.runMu.Unlock()
	if err != nil {
		s.sendErr(err)
		return
	}
	s.sendJSON(wire.Exit, status)
}

func (s *server) runCommand(st *runState, req wire.RunRequest) (wire.ExitStatus, error) {
	var status wire.ExitStatus
	if len(req.Args) == 0 {
		return status, fmt.Errorf("empty command")
	}
	dir, err := s.workPath(req.Dir)
	if err != nil {
		return status, err
	}
	cmd := &exec.Cmd{ // start picks Path and Args
		Dir:         dir,
		Env:         req.Env,
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	// Only *os.File ends are handed over, so os/exec starts no copying
	// goroutines and Wait returns when the command exits, even if a
	// daemon it started still holds the pipes.
	outR, outW, err := os.Pipe()
	if err != nil {
		return status, err
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return status, err
	}
	var inR, inW *os.File
	if len(req.Stdin) > 0 {
		if inR, inW, err = os.Pipe(); err != nil {
			return status, err
		}
		cmd.Stdin = inR
	}
	cmd.Stdout, cmd.Stderr = outW, errW

	oomBefore := oomKills()
	start := time.Now()
	cmd, early, err := s.start(cmd, req)
	outW.Close()
	errW.Close()
	if inR != nil {
		inR.Close()
	}
	if err != nil {
		outR.Close()
		errR.Close()
		if inW != nil {
			inW.Close()
		}
		return status, fmt.Errorf("start %s: %w", req.Args[0], err)
	}
	s.runMu.Lock()
	st.pgid = cmd.Process.Pid
	killed := st.killed
	s.runMu.Unlock()
	if killed {
		s.killGroup(st)
	}
	if inW != nil {
		go func() {
			inW.Write(req.Stdin)
			inW.Close()
		}()
	}

	stdout := &capWriter{s: s, typ: wire.Stdout, remaining: req.OutputCap, limit: req.OutputCap}
	stderr := &capWriter{s: s, typ: wire.Stderr, remaining: req.OutputCap, limit: req.OutputCap}
	var readers sync.WaitGroup
	readers.Add(2)
	go pump(&readers, outR, stdout)
	go pump(&readers, errR, stderr)

	var timer *time.Timer
	if req.TimeoutMS > 0 {
		timer = time.AfterFunc(time.Duration(req.TimeoutMS)*time.Millisecond, func() {
			s.runMu.Lock()
			st.timedOut = true
			s.runMu.Unlock()
			s.killGroup(st)
		})
	}
	var ws syscall.WaitStatus
	var ru syscall.Rusage
	var werr error
	if early != nil {
		ws = *early
	} else {
		ws, ru, werr = wait(cmd.Process.Pid)
	}
	cmd.Process.Release() // reaped by wait; drop the pidfd now, not at GC
	if timer != nil {
		timer.Stop()
	}
	status.DurationNS = int64(time.Since(start))
	status.Leftover = s.cleanup(st.pgid)

	// The pipes reach EOF once every holder is dead. A holder that escaped
	// (only possible without -sweep) gets a short grace period.
	done := make(chan struct{})
	go func() { readers.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(2 * time.Second):
		outR.Close()
		errR.Close()
		<-done
	}
	outR.Close()
	errR.Close()
	if werr != nil {
		return status, fmt.Errorf("wait: %w", werr)
	}

	s.runMu.Lock()
	status.TimedOut = st.timedOut
	s.runMu.Unlock()
	status.Truncated = stdout.truncated || stderr.truncated
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	switch {
	case ws.Exited():
		status.Code = ws.ExitStatus()
	case ws.Signaled():
		status.Signal = int(ws.Signal())
		status.Code = 128 + status.Signal
	}
	switch {
	case status.TimedOut:
		status.Code = 124
	case ws.Signaled() && ws.Signal() == syscall.SIGXCPU,
		ws.Signaled() && ws.Signal() == syscall.SIGKILL && req.CPUSec > 0 && cpu >= time.Duration(req.CPUSec)*time.Second:
		status.CPULimit, status.TimedOut, status.Code = true, true, 124
	case ws.Signaled() && ws.Signal() == syscall.SIGKILL && oomKills() > oomBefore:
		status.OOMKilled, status.Code = true, 137
	}
	return status, nil
}

// wait reaps the command's main process.
func wait(pid int) (syscall.WaitStatus, syscall.Rusage, error) {
	var ws syscall.WaitStatus
	var ru syscall.Rusage
	for {
		_, err := syscall.Wait4(pid, &ws, 0, &ru)
		if err != syscall.EINTR {
			return ws, ru, err
		}
	}
}

// start starts cmd with the request's rlimits. The fast way starts the
// command itself stopped at its first instruction (PTRACE_TRACEME), sets
// the limits with prlimit and detaches: nothing of the command runs
// before its limits hold. Where ptrace is refused, it falls back to
// re-executing this binary as a wrapper that sets the limits and execs.
// When the command died before it could be detached, start returns its
// wait status (it is reaped already).
func (s *server) start(cmd *exec.Cmd, req wire.RunRequest) (*exec.Cmd, *syscall.WaitStatus, error) {
	if !s.noPtrace {
		if path, err := lookPathIn(req.Args[0], envPATH(req.Env)); err == nil {
			for {
				traced := &exec.Cmd{Path: path, Args: req.Args, Dir: cmd.Dir, Env: cmd.Env,
					Stdin: cmd.Stdin, Stdout: cmd.Stdout, Stderr: cmd.Stderr,
					SysProcAttr: &syscall.SysProcAttr{Setpgid: true, Ptrace: true}}
				early, err := startTraced(traced, req, s.traceDumpable)
				if err == nil || traced.Process != nil || !errors.Is(err, syscall.EPERM) {
					return traced, early, err
				}
				if !s.traceDumpable && s.sweep {
					// gVisor refuses PTRACE_TRACEME to the child of a
					// process that is not dumpable: try once dumpable
					// for the fork (safe only with sweep, see startTraced).
					s.traceDumpable = true
					continue
				}
				break
			}
			// PTRACE_TRACEME refused (seccomp, Yama): use the wrapper from
			// now on.
			s.noPtrace, s.traceDumpable = true, false
		}
	}
	limits := fmt.Sprintf("cpu=%d,fsize=%d,nofile=%d", req.CPUSec, req.FileSize, req.NoFile)
	cmd.Path = s.self
	cmd.Args = append([]string{"fixpoint-exec", "-exec", limits, "--"}, req.Args...)
	return cmd, nil, cmd.Start()
}

// startTraced starts cmd stopped at its first instruction, sets its limits
// and detaches; it returns the wait status of a command that died first.
//
// With dumpable, the supervisor is dumpable while it forks, because gVisor
// refuses PTRACE_TRACEME to the child of a non-dumpable process (a re-exec
// of this Go binary per command costs about 10 ms there). That is safe
// only with sweep: then no process but pid 1, us and the new command
// exists, and the command is stopped before its first instruction
// (TRACEME stops it at exec) until after we are non-dumpable again, so
// nothing can open our /proc/PID/fd or attach to us in between.
func startTraced(cmd *exec.Cmd, req wire.RunRequest, dumpable bool) (*syscall.WaitStatus, error) {
	// ptrace requests must come from the thread that started the tracee.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if dumpable {
		setDumpable(true)
	}
	err := cmd.Start()
	if dumpable {
		setDumpable(false)
	}
	if err != nil {
		return nil, err
	}
	pid := cmd.Process.Pid
	var ws syscall.WaitStatus
	for {
		_, err := syscall.Wait4(pid, &ws, syscall.WALL, nil)
		if err == syscall.EINTR {
			continue
		}
		if err != nil {
			syscall.Kill(pid, syscall.SIGKILL)
			return nil, fmt.Errorf("wait for %s to stop: %v", req.Args[0], err)
		}
		break
	}
	if !ws.Stopped() {
		return &ws, nil // killed before its first instruction
	}
	if err := applyLimits(pid, req); err != nil {
		syscall.Kill(pid, syscall.SIGKILL)
		syscall.PtraceDetach(pid)
		return nil, err
	}
	if err := syscall.PtraceDetach(pid); err != nil {
		syscall.Kill(pid, syscall.SIGKILL)
		return nil, fmt.Errorf("detach %s: %v", req.Args[0], err)
	}
	return nil, nil
}

// applyLimits sets a stopped command's rlimits and makes it the first
// victim of the OOM killer.
func applyLimits(pid int, req wire.RunRequest) error {
	for _, l := range []struct {
		res  int
		n    int64
		name string
	}{
		{syscall.RLIMIT_CPU, req.CPUSec, "cpu"},
		{syscall.RLIMIT_FSIZE, req.FileSize, "fsize"},
		{syscall.RLIMIT_NOFILE, req.NoFile, "nofile"},
	} {
		if l.n <= 0 {
			continue
		}
		lim := syscall.Rlimit{Cur: uint64(l.n), Max: uint64(l.n)}
		if l.res == syscall.RLIMIT_CPU {
			lim.Max++ // SIGXCPU first, SIGKILL a second later
		}
		if _, _, e := syscall.RawSyscall6(syscall.SYS_PRLIMIT64, uintptr(pid), uintptr(l.res), uintptr(unsafe.Pointer(&lim)), 0, 0, 0); e != 0 {
			return fmt.Errorf("prlimit %s: %v", l.name, e)
		}
	}
	os.WriteFile("/proc/"+strconv.Itoa(pid)+"/oom_score_adj", []byte("1000"), 0)
	return nil
}

func envPATH(env []string) string {
	for i := len(env) - 1; i >= 0; i-- {
		if v, ok := strings.CutPrefix(env[i], "PATH="); ok {
			return v
		}
	}
	return defaultPath
}

func pump(wg *sync.WaitGroup, r io.Reader, w io.Writer) {
	defer wg.Done()
	buf := make([]byte, wire.ChunkSize)
	for {
		n, err := r.Read(buf)
		if n > 0 {
			w.Write(buf[:n])
		}
		if err != nil {
			return
		}
	}
}

// cleanup kills what the command left behind and reaps it. It returns how
// many processes it reaped. With -sweep it goes on until /proc shows no
// process but us and init (a dying process may still be on its way to us),
// for at most two seconds.
func (s *server) cleanup(pgid int) int {
	found := 0
	deadline := time.Now().Add(2 * time.Second)
	for {
		signalled := syscall.Kill(-pgid, syscall.SIGKILL) == nil
		if s.sweep && syscall.Kill(-1, syscall.SIGKILL) == nil {
			signalled = true
		}
		reaped := reap()
		found += reaped
		busy := signalled || reaped > 0
		if s.sweep {
			busy = othersAlive()
		}
		if !busy || time.Now().After(deadline) {
			return found
		}
		if reaped == 0 {
			time.Sleep(time.Millisecond)
		}
	}
}

// othersAlive reports whether /proc lists a process besides init and us.
func othersAlive() bool {
	d, err := os.Open("/proc")
	if err != nil {
		return false
	}
	defer d.Close()
	names, _ := d.Readdirnames(-1)
	self := strconv.Itoa(os.Getpid())
	for _, n := range names {
		if n != "1" && n != self && n[0] >= '0' && n[0] <= '9' {
			return true
		}
	}
	return false
}

// reap collects every exited child without blocking.
func reap() int {
	n := 0
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
		if pid <= 0 || err != nil {
			return n
		}
		n++
	}
}

// oomKills reads the container's OOM kill counter (cgroup v2 memory.events
// or v1 memory.oom_control); -1 when neither is readable.
func oomKills() int64 {
	for _, f := range []struct{ path, key string }{
		{"/sys/fs/cgroup/memory.events", "oom_kill"},
		{"/sys/fs/cgroup/memory/memory.oom_control", "oom_kill"},
	} {
		b, err := os.ReadFile(f.path)
		if err != nil {
			continue
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			k, v, ok := strings.Cut(string(line), " ")
			if ok && k == f.key {
				n, _ := strconv.ParseInt(v, 10, 64)
				return n
			}
		}
	}
	return -1
}

// setDumpable sets PR_SET_DUMPABLE for this process.
func setDumpable(on bool) {
	const prSetDumpable = 4
	v := uintptr(0)
	if on {
		v = 1
	}
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetDumpable, v, 0)
}

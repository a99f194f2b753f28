package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/termsafe"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/flock"
	"github.com/fixpoint-dev/fixpoint/internal/warmd"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// defaultKeepWarm is --keep-warm's idle time when FIXPOINT_KEEP_WARM is
// set to "1", "true" or "on".
const defaultKeepWarm = 10 * time.Minute

func daemonCommand() *command {
	c := &command{
		name:    "daemon",
		summary: "keep `fixpoint test`'s sandbox warm between runs (started by test --keep-warm)",
		usage: `Usage: fixpoint daemon [--stop]

Serves ` + "`fixpoint test --keep-warm`" + `: holds a sandbox session per workspace,
started ahead of the next run, and exits after its idle time. ` + "`fixpoint test`" + `
starts it when needed; run it yourself only to stop it:
  fixpoint daemon --stop        ends the daemon of this fixpoint executable
                                and this environment (the one fixpoint test
                                would use here), and its sessions
  fixpoint daemon --stop --all  ends every fixpoint daemon of this user`,
	}
	c.run = func(ctx context.Context, a *app, args []string) int {
		fs := newFlags(c, a.stderr)
		socket := fs.String("socket", "", "unix `socket` to listen on (set by fixpoint test)")
		idle := fs.Duration("idle", defaultKeepWarm, "stop after this long without a request")
		stop := fs.Bool("stop", false, "stop the daemon of this executable and environment")
		all := fs.Bool("all", false, "with --stop: stop every daemon of this user")
		if done, code := parseFlags(fs, args); done {
			return code
		}
		if *all && !*stop {
			return a.fail(usagef("daemon: --all goes with --stop"))
		}
		if *stop {
			sockets, err := daemonSockets(daemonDir(), *all)
			if err != nil {
				return a.fail(fmt.Errorf("daemon --stop: %w", err))
			}
			n := stopDaemons(ctx, sockets)
			fmt.Fprintf(a.stdout, "stopped %d fixpoint daemon(s)\n", n)
			return exitOK
		}
		if *socket == "" {
			return a.fail(usagef("daemon: --socket is required (fixpoint test --keep-warm starts the daemon)"))
		}
		return a.serveDaemon(ctx, *socket, *idle)
	}
	return c
}

// daemonDir is the user's private directory of daemon sockets.
func daemonDir() string { return flock.Dir("daemon") }

// serveDaemon runs the daemon on socket until it is idle for idle.
func (a *app) serveDaemon(ctx context.Context, socket string, idle time.Duration) int {
	if err := warmd.PrivateDir(filepath.Dir(socket)); err != nil {
		return a.fail(fmt.Errorf("daemon: %w", err))
	}
	// One daemon per socket: a second one started at the same time leaves.
	lockCtx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	unlock, err := flock.Lock(lockCtx, socket+".lock", nil)
	cancel()
	if err != nil {
		a.logger.Info("another daemon holds the socket", "socket", socket)
		return exitOK
	}
	defer unlock()
	os.Remove(socket)
	ln, err := net.Listen("unix", socket)
	if err != nil {
		return a.fail(fmt.Errorf("daemon: listen on %s: %w", socket, err))
	}
	defer os.Remove(socket)
	os.Chmod(socket, 0o600)
	a.logger.Info("fixpoint daemon up", "socket", socket, "pid", os.Getpid(), "idle", idle)
	s := &warmd.Server{
		Idle:   idle,
		Logger: a.logger,
		Load: func(req warmd.Request) (*config.Config, error) {
			return a.loadConfig(req.Root, func(c *config.Config) {
				if req.TestCmd != "" {
					c.TestCmd = req.TestCmd
				}
				(&sandboxFlags{backend: req.Backend, image: req.Image}).apply(c)
			})
		},
	}
	if err := s.Serve(ctx, ln); err != nil {
		return a.fail(err)
	}
	a.logger.Info("fixpoint daemon down", "pid", os.Getpid())
	return exitOK
}

// daemonSockets lists the sockets --stop addresses: the one of this
// executable and environment (as testThroughDaemon picks it), or with all
// every socket in dir and in the temporary-directory fallback.
func daemonSockets(dir string, all bool) ([]string, error) {
	if !all {
		exe, err := os.Executable()
		if err != nil {
			return nil, err
		}
		return []string{warmd.SocketPath(dir, exe, os.Environ())}, nil
	}
	socks, _ := filepath.Glob(filepath.Join(dir, "*.sock"))
	tmp, _ := filepath.Glob(filepath.Join(os.TempDir(), fmt.Sprintf("fixpoint-daemon-%d", os.Getuid()), "*.sock"))
	return append(socks, tmp...), nil
}

// stopDaemons asks the daemon on each socket to stop, and returns how
// many answered.
func stopDaemons(ctx context.Context, sockets []string) int {
	n := 0
	for _, s := range sockets {
		c, err := warmd.Dial(ctx, s)
		if err != nil {
			continue
		}
		if _, err := warmd.Do(ctx, c, warmd.Request{Op: warmd.OpStop}, nil); err == nil {
			n++
		}
		c.Close()
	}
	return n
}

// keepWarm is --keep-warm's default: FIXPOINT_KEEP_WARM as a duration, or
// 1/true/on for the default idle time; unset, 0 or off: no daemon.
func keepWarmDefault(getenv func(string) string) (time.Duration, error) {
	switch v := getenv("FIXPOINT_KEEP_WARM"); v {
	case "", "0", "off", "false":
		return 0, nil
	case "1", "on", "true":
		return defaultKeepWarm, nil
	default:
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return 0, usagef("FIXPOINT_KEEP_WARM=%q: want a duration like 10m, or on/off", v)
		}
		return d, nil
	}
}

// errDaemonFailed marks a daemon that could not serve a request: the
// caller runs the tests itself.
var errDaemonFailed = errors.New("the fixpoint daemon could not run the tests")

// testThroughDaemon runs req on the daemon of this executable and
// environment, starting it when none runs. The report is nil with
// errDaemonFailed when the daemon could not be used.
func (a *app) testThroughDaemon(ctx context.Context, req warmd.Request) (*testrun.Report, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errDaemonFailed, err)
	}
	dir := daemonDir()
	socket := warmd.SocketPath(dir, exe, os.Environ())
	if err := warmd.PrivateDir(filepath.Dir(socket)); err != nil {
		return nil, fmt.Errorf("%w: %v", errDaemonFailed, err)
	}
	conn, err := warmd.Dial(ctx, socket)
	if err != nil {
		conn, err = a.startDaemon(ctx, exe, socket, req.Idle)
		if err != nil {
			return nil, fmt.Errorf("%w: %v", errDaemonFailed, err)
		}
	}
	defer conn.Close()
	m, err := warmd.Do(ctx, conn, req, func(line string) { fmt.Fprintln(a.stderr, termsafe.Strip(line)) })
	switch {
	case err != nil && ctx.Err() != nil:
		return nil, ctx.Err()
	case err != nil:
		return nil, fmt.Errorf("%w: %v", errDaemonFailed, err)
	case m.Error != "" && m.Config:
		return nil, fmt.Errorf("%w: %s", config.ErrInvalid, m.Error)
	case m.Error != "":
		return nil, errors.New(m.Error)
	case m.Report == nil:
		return nil, fmt.Errorf("%w: an answer without a report", errDaemonFailed)
	}
	if m.Warm {
		fmt.Fprintf(a.stderr, "fixpoint: ran in the sandbox kept warm by the fixpoint daemon\n")
	}
	return m.Report, nil
}

// startDaemon starts `fixpoint daemon` detached from this process (its own
// session, its log next to its socket) and waits for its socket.
func (a *app) startDaemon(ctx context.Context, exe, socket string, idle time.Duration) (net.Conn, error) {
	logf, err := os.OpenFile(socket+".log", os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd := exec.Command(exe, "daemon", "--socket", socket, "--idle", idle.String())
	cmd.Dir = "/"
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	pid := cmd.Process.Pid
	go cmd.Wait() // reaps it if it exits while this process lives
	deadline := time.Now().Add(10 * time.Second)
	for {
		conn, err := warmd.Dial(ctx, socket)
		if err == nil {
			fmt.Fprintf(a.stderr, "fixpoint: started the fixpoint daemon (pid %d): it keeps this sandbox warm for the next `fixpoint test` and exits after %v without one; `fixpoint daemon --stop` ends it now\n", pid, idle)
			return conn, nil
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return nil, fmt.Errorf("the daemon did not listen on %s within 10s (its log: %s)", socket, socket+".log")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

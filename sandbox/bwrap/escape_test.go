package bwrap_test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/bwrap"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestEscapes runs abuse cases in bwrap and checks each is contained and
// leaves no process behind.
func TestEscapes(t *testing.T) {
	sandboxtest.RequireCommand(t, "bwrap")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan struct{}, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- struct{}{}
			c.Close()
		}
	}()
	port := ln.Addr().(*net.TCPAddr).Port
	home, _ := os.UserHomeDir()
	t.Setenv("FIXPOINT_CANARY", "canary-91c2")
	// Durations unique to this process: the same suite may run in another
	// checkout on this machine, and pgrep sees the whole machine.
	daemon := 40000 + 2*(os.Getpid()%10000)

	cases := []struct {
		name   string
		script string
		limits sandbox.Limits
		check  func(t *testing.T, res *sandbox.Result)
	}{
		{name: "tcp to host loopback", script: fmt.Sprintf(`python3 -c "import socket; socket.create_connection(('127.0.0.1', %d), timeout=2); print('CONNECTED')"`, port),
			check: func(t *testing.T, res *sandbox.Result) {
				if strings.Contains(string(res.Stdout), "CONNECTED") || res.ExitCode == 0 {
					t.Errorf("connected to the host listener: %+v", res)
				}
			}},
		{name: "host home", script: "ls -a " + home + " 2>&1; cat /proc/1/environ 2>&1 | tr '\\0' '\\n'; env",
			check: func(t *testing.T, res *sandbox.Result) {
				out := string(res.Stdout)
				if strings.Contains(out, "canary-91c2") || (home != "/" && strings.Contains(out, ".bashrc")) {
					t.Errorf("saw the host environment or home: %s", out)
				}
			}},
		{name: "docker socket", script: "ls -l /var/run/docker.sock /run/docker.sock 2>&1; test ! -e /var/run/docker.sock && test ! -e /run/docker.sock",
			check: func(t *testing.T, res *sandbox.Result) {
				if res.ExitCode != 0 {
					t.Errorf("a docker socket is visible: %s", res.Stdout)
				}
			}},
		{name: "fork bomb", script: `bomb() { bomb | bomb & }; bomb; sleep 2; echo survived`, limits: sandbox.Limits{Pids: 64, Timeout: 5 * time.Second},
			check: func(t *testing.T, res *sandbox.Result) {}},
		{name: "cpu spin", script: `while :; do :; done`, limits: sandbox.Limits{Timeout: time.Second},
			check: func(t *testing.T, res *sandbox.Result) {
				if res.ExitCode != 124 {
					t.Errorf("spin exit = %d, want 124", res.ExitCode)
				}
			}},
		{name: "fill tmp", script: `head -c 100000000 /dev/zero > /tmp/big; echo rc=$?`, limits: sandbox.Limits{FileSize: 1 << 30},
			check: func(t *testing.T, res *sandbox.Result) {
				if strings.Contains(string(res.Stdout), "rc=0") {
					t.Errorf("wrote 100 MB into a tmpfs capped lower: %s", res.Stdout)
				}
			}},
		{name: "file size limit", script: `head -c 5000000 /dev/zero > big; echo rc=$?`, limits: sandbox.Limits{FileSize: 1 << 20},
			check: func(t *testing.T, res *sandbox.Result) {
				if strings.Contains(string(res.Stdout), "rc=0") {
					t.Errorf("wrote past RLIMIT_FSIZE: %s %s", res.Stdout, res.Stderr)
				}
			}},
		{name: "setuid", script: `python3 -c "import os; os.setuid(0); print('ROOT')"`,
			check: func(t *testing.T, res *sandbox.Result) {
				if strings.Contains(string(res.Stdout), "ROOT") {
					t.Errorf("became root")
				}
			}},
		{name: "daemon left behind", script: fmt.Sprintf(`(setsid sleep %d &) ; nohup sleep %d >/dev/null 2>&1 & echo started`, daemon, daemon+1),
			check: func(t *testing.T, res *sandbox.Result) {}},
	}
	b, err := bwrap.New(&bwrap.Options{TmpSize: 32 << 20})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := b.Start(t.Context(), sandbox.Spec{})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Sync(t.Context(), &sandbox.Snapshot{Files: map[string]sandbox.File{"a.txt": {Data: []byte("a")}}}); err != nil {
				t.Fatal(err)
			}
			lim := tc.limits
			if lim.Timeout == 0 {
				lim.Timeout = 20 * time.Second
			}
			res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", tc.script}, Limits: lim})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			tc.check(t, res)
			// The session is still usable, and nothing of the run is left.
			res, err = s.Run(t.Context(), sandbox.Command{Args: []string{"cat", "a.txt"}})
			if err != nil || string(res.Stdout) != "a" {
				t.Errorf("session unusable after %s: %+v, %v", tc.name, res, err)
			}
			if out, _ := exec.Command("pgrep", "-f", fmt.Sprintf("sleep (%d|%d)", daemon, daemon+1)).Output(); len(out) > 0 {
				t.Errorf("processes left behind: %s", out)
			}
		})
	}
	select {
	case <-accepted:
		t.Errorf("the host listener accepted a connection from the sandbox")
	default:
	}
}

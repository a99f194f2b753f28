package sandboxtest

import (
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A fake bring-up: a process whose end the test controls, a status file
// written when it ends. waitBringup must return only after that event.
func TestWaitBringupFollowsTheStatus(t *testing.T) {
	for _, tc := range []struct {
		name, status, want string
	}{
		{"succeeded", "0", ""},
		{"failed", "1", "exit status 1"},
		{"lost", "", "ended without writing"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			release := filepath.Join(dir, "release")
			if err := os.WriteFile(filepath.Join(dir, "log"), []byte("building kubelet\n\x1b[31mk8s-up: etcd not ready\x1b[0m\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			// The child waits for the release file, then writes the status
			// (or not) and exits: the same order as k8s-up --background.
			script := `while [ ! -e "$1" ]; do sleep 0.05; done; if [ -n "$2" ]; then echo "$2" > "$3/status"; fi`
			cmd := exec.Command("bash", "-c", script, "fake", release, tc.status, dir)
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			if err := os.WriteFile(filepath.Join(dir, "pid"), []byte(strconv.Itoa(cmd.Process.Pid)+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			got := make(chan string, 1)
			go func() { got <- waitBringup(t, dir) }()
			select {
			case r := <-got:
				t.Fatalf("waitBringup returned %q while the bring-up was still running", r)
			default:
			}
			if err := os.WriteFile(release, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			<-done
			r := <-got
			if tc.want == "" && r != "" || tc.want != "" && !strings.Contains(r, tc.want) {
				t.Fatalf("waitBringup = %q, want %q", r, tc.want)
			}
			if tc.want != "" && (!strings.Contains(r, "etcd not ready") || strings.Contains(r, "\x1b")) {
				t.Fatalf("failure should quote the log without escape sequences: %q", r)
			}
		})
	}
}

func TestWaitBringupNoneInProgress(t *testing.T) {
	if r := waitBringup(t, t.TempDir()); r != "" {
		t.Fatalf("no pid file: waitBringup = %q, want \"\"", r)
	}
}

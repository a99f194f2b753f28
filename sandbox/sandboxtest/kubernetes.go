package sandboxtest

import (
	"bytes"
	"cmp"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// DefaultTestKubeconfig is where .ci/k8s-up writes the CI cluster's admin
// kubeconfig.
const DefaultTestKubeconfig = "/run/fixpoint-k8s/kubeconfig"

// DefaultBringup is where `.ci/k8s-up --background` keeps the state of a
// bring-up still in progress (K8S_BRINGUP in .ci/k8s-env): "pid", "log",
// and "status" (the exit code) once it has ended. .ci/setup starts one
// when the cluster's binaries must be built first, so that the rest of the
// suite runs meanwhile.
const DefaultBringup = "/run/fixpoint-k8s-bringup"

// RequireKubeconfig returns the kubeconfig of the test cluster:
// $FIXPOINT_TEST_KUBECONFIG, else DefaultTestKubeconfig. When the file is
// missing and a background bring-up is in progress
// ($FIXPOINT_K8S_BRINGUP, else DefaultBringup), it waits for that
// bring-up to end (an event: its status file, or its process gone) and
// fails with the end of its log when it did not succeed. When the file
// is missing otherwise, the test fails under CI=true and skips elsewhere,
// naming the path and how to bring the cluster up.
func RequireKubeconfig(t testing.TB) string {
	t.Helper()
	path := cmp.Or(os.Getenv("FIXPOINT_TEST_KUBECONFIG"), DefaultTestKubeconfig)
	if _, err := os.Stat(path); err != nil {
		dir := cmp.Or(os.Getenv("FIXPOINT_K8S_BRINGUP"), DefaultBringup)
		if why := waitBringup(t, dir); why != "" {
			t.Fatalf("the test cluster's background bring-up failed: %s", why)
		}
		if _, err := os.Stat(path); err != nil {
			unavailable(t, "no test cluster: kubeconfig "+path+" is missing ("+err.Error()+"); run `sudo .ci/k8s-up` or set FIXPOINT_TEST_KUBECONFIG")
		}
	}
	return path
}

// waitBringup waits while a background bring-up in dir runs. It returns
// "" when there is none or it ended with status 0, else why it failed,
// with the last lines of its log.
func waitBringup(t testing.TB, dir string) string {
	t.Helper()
	pidb, err := os.ReadFile(filepath.Join(dir, "pid"))
	if err != nil {
		return "" // no bring-up in progress
	}
	logf := filepath.Join(dir, "log")
	t.Logf("waiting for the test cluster's background bring-up (pid %s, log %s)", strings.TrimSpace(string(pidb)), logf)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	last := time.Now()
	for {
		if st, err := os.ReadFile(filepath.Join(dir, "status")); err == nil {
			if s := strings.TrimSpace(string(st)); s != "0" {
				return "exit status " + s + "; " + logTail(logf)
			}
			return ""
		}
		if !processAlive(strings.TrimSpace(string(pidb))) {
			// The status is written just before the process ends: read it
			// once more before calling the bring-up lost.
			if _, err := os.Stat(filepath.Join(dir, "status")); err == nil {
				continue
			}
			return "it ended without writing " + filepath.Join(dir, "status") + "; " + logTail(logf)
		}
		if time.Since(last) >= time.Minute {
			last = time.Now()
			t.Logf("still waiting for the cluster: %s", logTail(logf))
		}
		<-tick.C
	}
}

func processAlive(pid string) bool {
	if pid == "" {
		return false
	}
	_, err := os.Stat("/proc/" + pid)
	return err == nil
}

// logTail is the last few lines of a bring-up log, for a failure message.
func logTail(path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return "no log (" + err.Error() + ")"
	}
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	if len(lines) > 8 {
		lines = lines[len(lines)-8:]
	}
	return "last lines of " + path + ":\n" + printable(string(bytes.Join(lines, []byte("\n"))))
}

// printable drops control characters (escape sequences' ESC included) but
// newlines and tabs, so that a log quoted in a failure cannot drive the
// terminal that shows it.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || (r >= 0x20 && r != 0x7f && (r < 0x80 || r >= 0xa0)) {
			return r
		}
		return -1
	}, s)
}

package bwrap_test

import (
	"os"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/bwrap"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestZeroLimitsMeanDefaults: a session and command with no limits at all
// (every field zero) run under the default rlimits, read back from
// /proc/self/limits inside the sandbox: never unlimited. The CPU limit is
// the default timeout (60 s), so it also shows the timeout's default.
func TestZeroLimitsMeanDefaults(t *testing.T) {
	sandboxtest.RequireCommand(t, "bwrap")
	b, err := bwrap.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	s, err := b.Start(t.Context(), sandbox.Spec{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"cat", "/proc/self/limits"}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("cat /proc/self/limits: %+v, %v", res, err)
	}
	want := map[string]string{
		"Max cpu time":       "60",
		"Max file size":      "268435456",
		"Max data size":      "1073741824",
		"Max open files":     "1024",
		"Max core file size": "0",
	}
	if os.Geteuid() == 0 { // RLIMIT_NPROC only with a session uid of its own
		want["Max processes"] = "256"
	}
	got := map[string]string{}
	for _, line := range strings.Split(string(res.Stdout), "\n") {
		for name := range want {
			if rest, ok := strings.CutPrefix(line, name); ok {
				got[name] = strings.Fields(rest)[0] // the soft limit
			}
		}
	}
	for name, w := range want {
		if got[name] != w {
			t.Errorf("%s = %q inside the sandbox, want the default %s\n%s", name, got[name], w, res.Stdout)
		}
	}
}

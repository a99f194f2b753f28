package supclient_test

import (
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker/supclient"
)

// TestZeroLimitsMeanDefaults: zero or negative limits, in the session
// spec or the command, become the defaults (for every backend that speaks
// to the supervisor): never unlimited (a zero
// timeout would leave the supervisor's timer unarmed, a zero pids or
// memory limit would leave the container unbounded).
func TestZeroLimitsMeanDefaults(t *testing.T) {
	want := sandbox.Limits{Timeout: 60 * time.Second, CPUTime: 60 * time.Second, Memory: 1 << 30, Pids: 256,
		OutputCap: 1 << 20, FileSize: 256 << 20, NoFile: 1024, NanoCPUs: 2e9}
	neg := sandbox.Limits{Timeout: -1, CPUTime: -1, Memory: -1, Pids: -1, OutputCap: -1, FileSize: -1, NoFile: -1, NanoCPUs: -1}
	for _, spec := range []sandbox.Limits{{}, neg} {
		session := supclient.Defaults(spec)
		if session != want {
			t.Errorf("defaults(%+v) = %+v, want %+v", spec, session, want)
		}
		for _, cmd := range []sandbox.Limits{{}, neg} {
			if got := supclient.Merge(cmd, session); got != want {
				t.Errorf("merge(%+v, defaults) = %+v, want %+v", cmd, got, want)
			}
		}
	}
	// A command's own limits hold, except the per-container ones.
	cmd := sandbox.Limits{Timeout: time.Second, OutputCap: 5, FileSize: 6, NoFile: 7, Memory: 1, Pids: 1, NanoCPUs: 1}
	got := supclient.Merge(cmd, want)
	exp := want
	exp.Timeout, exp.CPUTime, exp.OutputCap, exp.FileSize, exp.NoFile = time.Second, time.Second, 5, 6, 7
	if got != exp {
		t.Errorf("merge(%+v, defaults) = %+v, want %+v", cmd, got, exp)
	}
}

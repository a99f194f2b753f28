package supclient_test

import (
	"slices"
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

// TestSpecEnv: a spec's Env replaces a base variable of the same key and
// adds new ones; its Path goes before the base PATH, or before the
// default PATH when the base has none; the base slice is left alone.
func TestSpecEnv(t *testing.T) {
	base := []string{"PATH=/usr/bin:/bin", "HOME=/tmp", "LANG=C.UTF-8"}
	got := supclient.SpecEnv(base, sandbox.Spec{Env: []string{"LANG=en_US.UTF-8", "GOFLAGS=-mod=mod"}, Path: []string{"/opt/a/bin", "/opt/b/bin"}})
	want := []string{"PATH=/opt/a/bin:/opt/b/bin:/usr/bin:/bin", "HOME=/tmp", "LANG=en_US.UTF-8", "GOFLAGS=-mod=mod"}
	if !slices.Equal(got, want) {
		t.Errorf("SpecEnv = %q, want %q", got, want)
	}
	if base[0] != "PATH=/usr/bin:/bin" || base[2] != "LANG=C.UTF-8" {
		t.Errorf("SpecEnv modified its input: %q", base)
	}
	got = supclient.SpecEnv([]string{"HOME=/tmp"}, sandbox.Spec{Path: []string{"/opt/a/bin"}})
	if want := []string{"HOME=/tmp", "PATH=/opt/a/bin:" + supclient.DefaultPath}; !slices.Equal(got, want) {
		t.Errorf("SpecEnv without a base PATH = %q, want %q", got, want)
	}
}

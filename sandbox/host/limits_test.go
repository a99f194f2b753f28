package host

import (
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// TestZeroLimitsMeanDefaults: a zero or negative limit, in the command or
// the session spec, is the default, never unlimited; a positive one holds.
func TestZeroLimitsMeanDefaults(t *testing.T) {
	defaults := sandbox.Limits{Timeout: DefaultTimeout, CPUTime: DefaultTimeout, Memory: DefaultMemory, Pids: DefaultPids,
		OutputCap: DefaultOutputCap, FileSize: DefaultFileSize, NoFile: DefaultNoFile, NanoCPUs: 2e9}
	neg := sandbox.Limits{Timeout: -1, CPUTime: -1, Memory: -1, Pids: -1, OutputCap: -1, FileSize: -1, NoFile: -1, NanoCPUs: -1}
	own := sandbox.Limits{Timeout: time.Second, CPUTime: 2 * time.Second, Memory: 3, Pids: 4, OutputCap: 5, FileSize: 6, NoFile: 7, NanoCPUs: 8}
	cases := []struct {
		name      string
		spec, cmd sandbox.Limits
		want      sandbox.Limits
	}{
		{name: "absent", want: defaults},
		{name: "negative command", cmd: neg, want: defaults},
		{name: "negative spec", spec: neg, want: defaults},
		{name: "spec", spec: own, want: own},
		{name: "command over spec", spec: neg, cmd: own, want: own},
		{name: "timeout alone sets the CPU limit", cmd: sandbox.Limits{Timeout: 5 * time.Second},
			want: func() sandbox.Limits { l := defaults; l.Timeout, l.CPUTime = 5*time.Second, 5*time.Second; return l }()},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := &Session{spec: sandbox.Spec{Limits: tc.spec}}
			if got := s.limits(tc.cmd); got != tc.want {
				t.Errorf("limits(spec %+v, cmd %+v) = %+v, want %+v", tc.spec, tc.cmd, got, tc.want)
			}
		})
	}
}

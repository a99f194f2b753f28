package main

import (
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
)

// A package that installs no command (a Python module) is judged by its
// Probe, not by its command being on PATH: python3 on PATH says nothing
// about pytest.
func TestInstalledByProbe(t *testing.T) {
	tests := []struct {
		p    lang.HostPackage
		want bool
	}{
		{lang.HostPackage{Command: "sh", Package: "x"}, true},
		{lang.HostPackage{Command: "no-such-command-fixpoint", Package: "x"}, false},
		{lang.HostPackage{Command: "sh", Package: "x", Probe: []string{"/bin/sh", "-c", "exit 1"}}, false},
		{lang.HostPackage{Command: "no-such-command-fixpoint", Package: "x", Probe: []string{"/bin/sh", "-c", "exit 0"}}, true},
		{lang.HostPackage{Command: "sh", Package: "x", Probe: []string{"/nonexistent/python3", "-c", "import pytest"}}, false},
	}
	for _, tt := range tests {
		if got := installed(tt.p); got != tt.want {
			t.Errorf("installed(%+v) = %v, want %v", tt.p, got, tt.want)
		}
	}
}

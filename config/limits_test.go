package config

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestSandboxLimitsValidated: negative limits are refused (a limit is
// never turned off by configuration: 0 or absent means the default), and
// the disk caps need a real size.
func TestSandboxLimitsValidated(t *testing.T) {
	cases := []struct {
		name, toml string
		wantErr    bool
	}{
		{name: "defaults", toml: ""},
		{name: "zero means default", toml: "[sandbox]\npids = 0\ntimeout = \"0s\"\nmemory = \"0\"\n"},
		{name: "negative pids", toml: "[sandbox]\npids = -1\n", wantErr: true},
		{name: "negative timeout", toml: "[sandbox]\ntimeout = \"-5s\"\n", wantErr: true},
		{name: "negative cpus", toml: "[sandbox]\ncpus = -1.0\n", wantErr: true},
		{name: "disk caps", toml: "[sandbox]\nworkspace_size = \"2g\"\ntmp_size = \"64m\"\n"},
		{name: "tiny workspace", toml: "[sandbox]\nworkspace_size = \"512k\"\n", wantErr: true},
		{name: "bad tmp size", toml: "[sandbox]\ntmp_size = \"lots\"\n", wantErr: true},
		{name: "bad cache size", toml: "[sandbox]\ncache_size = \"lots\"\n", wantErr: true},
		{name: "runtime runsc", toml: "[sandbox]\nruntime = \"runsc\"\n"},
		{name: "runtime gVisor variant", toml: "[sandbox]\nruntime = \"runsc-nodirectfs\"\n"},
		{name: "runtime bare prefix", toml: "[sandbox]\nruntime = \"runsc-\"\n", wantErr: true},
		{name: "runtime unknown", toml: "[sandbox]\nruntime = \"kata\"\n", wantErr: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			user := filepath.Join(t.TempDir(), "config.toml") // limits are user-only keys
			if err := os.WriteFile(user, []byte(tc.toml), 0o644); err != nil {
				t.Fatal(err)
			}
			c, err := Load(LoadOptions{Root: t.TempDir(), UserFile: user, Getenv: func(string) string { return "" }})
			if tc.wantErr {
				if !errors.Is(err, ErrInvalid) {
					t.Fatalf("Load(%q) = %v, want ErrInvalid", tc.toml, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load(%q): %v", tc.toml, err)
			}
			if tc.name == "disk caps" && (c.Sandbox.WorkspaceSize != "2g" || c.Sandbox.TmpSize != "64m") {
				t.Errorf("disk caps = %q, %q, want 2g, 64m", c.Sandbox.WorkspaceSize, c.Sandbox.TmpSize)
			}
		})
	}
}

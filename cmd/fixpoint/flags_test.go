package main

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/config"
)

// TestSandboxFlagsOverrideConfig: --sandbox and --image win over the
// environment and .fixpoint.toml, and leave them alone when not given.
func TestSandboxFlagsOverrideConfig(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, ".fixpoint.toml"), []byte("[sandbox]\nbackend = \"docker\"\nimage = \"from-file\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name        string
		args        []string
		env         map[string]string
		wantBackend string
		wantImage   string
	}{
		{"no flags keep the file", nil, nil, "docker", "from-file"},
		{"no flags keep the environment", nil, map[string]string{"FIXPOINT_SANDBOX": "bwrap", "FIXPOINT_IMAGE": "from-env"}, "bwrap", "from-env"},
		{"flags beat the file", []string{"--sandbox", "none", "--image", "from-flag"}, nil, "none", "from-flag"},
		{"flags beat the environment", []string{"--sandbox=bwrap"}, map[string]string{"FIXPOINT_SANDBOX": "none", "FIXPOINT_IMAGE": "from-env"}, "bwrap", "from-env"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var sf sandboxFlags
			fs := newFlags(&command{name: "test"}, io.Discard)
			sf.register(fs)
			if err := fs.Parse(tt.args); err != nil {
				t.Fatal(err)
			}
			env := map[string]string{"HOME": t.TempDir()}
			for k, v := range tt.env {
				env[k] = v
			}
			a := &app{getenv: func(k string) string { return env[k] }}
			// The file's backend and image are user-only: the user trusted it.
			if _, err := (config.TrustStore{Dir: config.DefaultTrustDir(a.getenv)}).TrustConfig(root); err != nil {
				t.Fatal(err)
			}
			cfg, err := a.loadConfig(root, sf.apply)
			if err != nil {
				t.Fatalf("loadConfig: %v", err)
			}
			if cfg.Sandbox.Backend != tt.wantBackend || cfg.Sandbox.Image != tt.wantImage {
				t.Errorf("flags %v: backend %q image %q, want %q %q", tt.args, cfg.Sandbox.Backend, cfg.Sandbox.Image, tt.wantBackend, tt.wantImage)
			}
		})
	}
}

// TestSandboxFlagsOnCommands: test, fix and solve accept --sandbox and
// --image, and a bad backend is a usage error that names the value.
func TestSandboxFlagsOnCommands(t *testing.T) {
	c := newLoopCLI(t)
	for _, cmd := range []string{"test", "fix", "solve"} {
		t.Run(cmd, func(t *testing.T) {
			args := []string{cmd, "--dir", t.TempDir(), "--sandbox", "frob", "--image", "img"}
			if cmd == "solve" {
				args = append(args, "goal")
			}
			code, _, stderr := c.run(t.Context(), args...)
			if code != exitUsage || strings.Contains(stderr, "flag provided but not defined") || !strings.Contains(stderr, `"frob" is not one of docker, kubernetes, bwrap, none`) {
				t.Errorf("fixpoint %v = %d, stderr %q; want 2 naming the bad backend", args, code, stderr)
			}
		})
	}
}

// TestTestCommandSandboxNone: `fixpoint test --sandbox none` runs on the
// host backend even when the environment asks for docker.
func TestTestCommandSandboxNone(t *testing.T) {
	c := newLoopCLI(t)
	c.env["FIXPOINT_SANDBOX"] = "docker"
	c.env["FIXPOINT_IMAGE"] = "no-such-image-fixpoint"
	dir := t.TempDir()
	code, out, stderr := c.run(t.Context(), "test", "--dir", dir, "--sandbox", "none", "--test-cmd", "sh -c 'echo ran-on-host'")
	if code != exitOK || !strings.Contains(out, "ran-on-host") {
		t.Errorf("fixpoint test --sandbox none = %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
}

// TestTestEnvironment: a test command sees [test] env and nothing that
// changes how tests print or behave unless configured (here on the host
// backend, whose environment is an allow-list like the others').
func TestTestEnvironment(t *testing.T) {
	tests := []struct {
		name    string
		toml    string
		want    []string
		notWant []string
	}{
		{name: "nothing injected", toml: "", want: []string{"LANG=C.UTF-8"}, notWant: []string{"NO_COLOR", "FORCE_COLOR", "CI=", "TERM="}},
		{name: "configured", toml: "[test]\nenv = { FORCE_COLOR = \"1\", TZ = \"UTC\" }\n", want: []string{"FORCE_COLOR=1", "TZ=UTC"}, notWant: []string{"NO_COLOR"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newLoopCLI(t)
			t.Setenv("NO_COLOR", "1") // the host's own never enter
			t.Setenv("TERM", "xterm-256color")
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, ".fixpoint.toml"), []byte("test_cmd = \"env\"\n"+tt.toml), 0o644); err != nil {
				t.Fatal(err)
			}
			code, out, stderr := c.run(t.Context(), "test", "--dir", dir, "--sandbox", "none")
			if code != exitOK {
				t.Fatalf("fixpoint test = %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("environment lacks %s:\n%s", w, out)
				}
			}
			for _, w := range tt.notWant {
				if strings.Contains(out, "\n"+w) || strings.HasPrefix(out, w) {
					t.Errorf("environment has %s:\n%s", w, out)
				}
			}
		})
	}
}

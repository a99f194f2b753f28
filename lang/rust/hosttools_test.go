package rust

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// rustup's cargo (a proxy in ~/.cargo/bin) is offered with its toolchains
// and RUSTUP_HOME; the system's cargo and a machine without cargo offer
// nothing; ~/.cargo itself (credentials.toml) never.
func TestHostTools(t *testing.T) {
	home := t.TempDir()
	bin := filepath.Join(home, ".cargo", "bin")
	for _, d := range []string{bin, filepath.Join(home, ".rustup", "toolchains", "stable-x86_64-unknown-linux-gnu")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(bin, "rustup"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("rustup", filepath.Join(bin, "cargo")); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home}
	getenv := func(k string) string { return env[k] }
	found := func(p string) func(string) (string, error) {
		return func(string) (string, error) { return p, nil }
	}
	tools := hostTools(getenv, found(filepath.Join(bin, "cargo")))
	if len(tools) != 2 || tools[0].Dir != bin || !tools[0].OnPath || tools[1].Dir != filepath.Join(home, ".rustup") || tools[1].OnPath ||
		len(tools[1].Env) != 1 || tools[1].Env[0] != "RUSTUP_HOME="+filepath.Join(home, ".rustup") {
		t.Errorf("hostTools (rustup) = %+v, want %s on PATH and ~/.rustup with RUSTUP_HOME", tools, bin)
	}
	for _, tt := range tools {
		if tt.Dir == filepath.Join(home, ".cargo") {
			t.Errorf("~/.cargo offered: %+v", tt)
		}
	}
	env["RUSTUP_HOME"] = filepath.Join(home, "elsewhere")
	if tools := hostTools(getenv, found(filepath.Join(bin, "cargo"))); len(tools) != 1 {
		t.Errorf("a RUSTUP_HOME without toolchains is offered: %+v", tools)
	}
	if tools := hostTools(getenv, found("/usr/bin/cargo")); tools != nil {
		t.Errorf("the system's cargo offered %+v", tools)
	}
	if tools := hostTools(getenv, func(string) (string, error) { return "", errors.New("not found") }); tools != nil {
		t.Errorf("no cargo offered %+v", tools)
	}
}

// TestHostToolsRelativeCargo: a cargo found through a relative PATH entry
// (".", "bin", "node_modules/.bin": directories of the workspace the
// command runs in) is never offered, whether the lookup reports it
// (exec.ErrDot) or not (GODEBUG=execerrdot=0, or a lookup that resolves
// PATH itself): a workspace file must not choose a directory that is
// bound into the sandbox and put on its PATH (held-out mutant
// sandbox-rust-relative-cargo).
func TestHostToolsRelativeCargo(t *testing.T) {
	ws := t.TempDir()
	t.Chdir(ws)
	// The workspace plants a rustup-looking cargo with toolchains beside it.
	for _, d := range []string{"bin", filepath.Join(".rustup", "toolchains", "stable")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join("bin", "rustup"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("rustup", filepath.Join("bin", "cargo")); err != nil {
		t.Fatal(err)
	}
	getenv := func(k string) string { return map[string]string{"HOME": ws, "RUSTUP_HOME": ".rustup"}[k] }
	for _, tt := range []struct {
		path string
		err  error
	}{
		{"bin/cargo", nil},
		{"./bin/cargo", nil},
		{"bin/cargo", exec.ErrDot},
		{"cargo", nil},
	} {
		if tools := hostTools(getenv, func(string) (string, error) { return tt.path, tt.err }); tools != nil {
			t.Errorf("lookPath = %q, %v: hostTools offered %+v, want nothing", tt.path, tt.err, tools)
		}
	}
}

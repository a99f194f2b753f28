package rust

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// rustupHome makes a HOME with rustup's cargo proxy and the named
// toolchains (each with the manifest rustup writes, recording version),
// and returns it with a getenv and a lookPath for it.
func rustupHome(t *testing.T, toolchains map[string]string, settings string) (string, func(string) string, func(string) (string, error), map[string]string) {
	t.Helper()
	home := t.TempDir()
	bin := filepath.Join(home, ".cargo", "bin")
	if err := os.MkdirAll(bin, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "rustup"), []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink("rustup", filepath.Join(bin, "cargo")); err != nil {
		t.Fatal(err)
	}
	for name, v := range toolchains {
		lib := filepath.Join(home, ".rustup", "toolchains", name, "lib", "rustlib")
		if err := os.MkdirAll(lib, 0o755); err != nil {
			t.Fatal(err)
		}
		manifest := "manifest-version = \"2\"\n[pkg.cargo]\nversion = \"0.96.0 (x)\"\n[pkg.rustc]\nversion = \"" + v + " (59807616e 2026-04-14)\"\n"
		if err := os.WriteFile(filepath.Join(lib, "multirust-channel-manifest.toml"), []byte(manifest), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(home, ".rustup", "toolchains"), 0o755)
	if err := os.WriteFile(filepath.Join(home, ".rustup", "settings.toml"), []byte(settings), 0o644); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{"HOME": home}
	return home, func(k string) string { return env[k] }, func(string) (string, error) { return filepath.Join(bin, "cargo"), nil }, env
}

func crate(root string, files map[string]string) *sandbox.Snapshot {
	s := &sandbox.Snapshot{Root: root, Files: map[string]sandbox.File{"Cargo.toml": {Data: []byte("[package]\nname = \"c\"\nversion = \"0.1.0\"\n")}}}
	for p, c := range files {
		s.Files[p] = sandbox.File{Data: []byte(c)}
	}
	return s
}

// TestDockerToolchain: docker runs the rustup toolchain a native cargo
// would (rustup's order: RUSTUP_TOOLCHAIN, a directory override, the
// project's toolchain file, the default), only that one directory, with
// its documentation left out; when it cannot, the note says why.
func TestDockerToolchain(t *testing.T) {
	triple := hostTriple()
	if triple == "" {
		t.Fatalf("no rustup host triple known for this platform")
	}
	stable, pinned, nightly := "stable-"+triple, "1.80-"+triple, "nightly-"+triple
	home, getenv, lookPath, env := rustupHome(t, map[string]string{stable: "1.95.0", pinned: "1.80.1", nightly: "1.97.0"},
		"version = \"12\"\ndefault_toolchain = \""+stable+"\"\n[overrides]\n\"/work/overridden\" = \"1.80\"\n")
	tcDir := func(n string) string { return filepath.Join(home, ".rustup", "toolchains", n) }

	got := dockerToolchain(getenv, lookPath, crate("/work/p", nil))
	if got == nil || got.Dir != tcDir(stable) || !got.Copy || got.Target != ToolchainTarget || !got.OnPath ||
		len(got.Skip) != 1 || got.Skip[0] != "share" || got.Key != stable+" 1.95.0" || !strings.Contains(got.Note, "rustc 1.95.0") {
		t.Fatalf("default toolchain: %+v, want a copy of %s", got, tcDir(stable))
	}
	if strings.Contains(got.Dir, ".cargo") {
		t.Errorf("offers %s: ~/.cargo holds credentials", got.Dir)
	}
	cases := []struct {
		name    string
		root    string
		files   map[string]string
		envTC   string
		wantDir string // "" = not offered
		wantWhy string
	}{
		{name: "rust-toolchain.toml channel", files: map[string]string{"rust-toolchain.toml": "[toolchain]\nchannel = \"1.80\"\n"}, wantDir: tcDir(pinned)},
		{name: "legacy rust-toolchain", files: map[string]string{"rust-toolchain": "1.80\n"}, wantDir: tcDir(pinned)},
		{name: "full name with triple", files: map[string]string{"rust-toolchain": pinned + "\n"}, wantDir: tcDir(pinned)},
		{name: "RUSTUP_TOOLCHAIN wins", files: map[string]string{"rust-toolchain": "1.80\n"}, envTC: "stable", wantDir: tcDir(stable)},
		{name: "directory override", root: "/work/overridden/sub", wantDir: tcDir(pinned)},
		{name: "rust-version satisfied", files: map[string]string{"Cargo.toml": "[package]\nname = \"c\"\nrust-version = \"1.90\"\n"}, wantDir: tcDir(stable)},
		{name: "rust-version above the host's", files: map[string]string{"Cargo.toml": "[package]\nname = \"c\"\nrust-version = \"1.99\"\n"}, wantWhy: "does not satisfy"},
		{name: "nightly channel", files: map[string]string{"rust-toolchain.toml": "[toolchain]\nchannel = \"nightly\"\n"}, wantDir: tcDir(nightly)},
		{name: "nightly channel, RUSTUP_TOOLCHAIN stable", files: map[string]string{"rust-toolchain.toml": "[toolchain]\nchannel = \"nightly\"\n"}, envTC: "stable", wantWhy: "is not the nightly toolchain"},
		{name: "dated nightly not installed", files: map[string]string{"rust-toolchain.toml": "[toolchain]\nchannel = \"nightly-2024-05-01\"\n"}, wantWhy: "has not installed"},
		{name: "beta not installed", files: map[string]string{"rust-toolchain": "beta\n"}, wantWhy: "has not installed"},
		{name: "not installed", files: map[string]string{"rust-toolchain": "1.70\n"}, wantWhy: "has not installed"},
		// Attacks: a workspace file must not choose a host directory.
		{name: "toolchain path", files: map[string]string{"rust-toolchain.toml": "[toolchain]\npath = \"/etc\"\n"}, wantWhy: "by path"},
		{name: "toolchain path with a channel", files: map[string]string{"rust-toolchain.toml": "[toolchain]\nchannel = \"stable\"\npath = \"/\"\n"}, wantWhy: "by path"},
		{name: "dotdot channel", files: map[string]string{"rust-toolchain.toml": "[toolchain]\nchannel = \"../../../../etc\"\n"}, wantWhy: "not a toolchain name"},
		{name: "dotdot legacy file", files: map[string]string{"rust-toolchain": "../../.cargo\n"}, wantWhy: "not a toolchain name"},
		{name: "dotdot inside a name", files: map[string]string{"rust-toolchain": "stable..x\n"}, wantWhy: "not a toolchain name"},
		{name: "absolute name", files: map[string]string{"rust-toolchain": "/etc\n"}, wantWhy: "not a toolchain name"},
		{name: "slash in the name", files: map[string]string{"rust-toolchain.toml": "[toolchain]\nchannel = \"stable/../../x\"\n"}, wantWhy: "not a toolchain name"},
		{name: "dotdot in RUSTUP_TOOLCHAIN", envTC: "..", wantWhy: "not a toolchain name"},
		{name: "escape sequence in a channel", files: map[string]string{"rust-toolchain.toml": "[toolchain]\nchannel = \"nightly\\u001b[2J\"\n"}, wantWhy: "\\x1b"},
		{name: "escape sequence in rust-version", files: map[string]string{"rust-toolchain": "beta\u001b]0;x\u0007\n"}, wantWhy: "not a toolchain name"},
	}
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			env["RUSTUP_TOOLCHAIN"] = tt.envTC
			root := tt.root
			if root == "" {
				root = "/work/p"
			}
			got := dockerToolchain(getenv, lookPath, crate(root, tt.files))
			if got == nil {
				t.Fatalf("nil, want a tool or a note")
			}
			if got.Dir != tt.wantDir {
				t.Errorf("Dir = %q, want %q (note %q)", got.Dir, tt.wantDir, got.Note)
			}
			if tt.wantWhy != "" && !strings.Contains(got.Note, tt.wantWhy) {
				t.Errorf("Note = %q, want it to say %q", got.Note, tt.wantWhy)
			}
			if strings.ContainsAny(got.Note, "\x1b\x07") {
				t.Errorf("Note carries control characters: %q", got.Note)
			}
			if got.Dir == "" && (got.Target != "" || got.Key != "") {
				t.Errorf("a tool without a directory carries %+v", got)
			}
		})
	}
	env["RUSTUP_TOOLCHAIN"] = ""

	// A linked toolchain (rustup toolchain link) can point anywhere: a
	// symlink in toolchains/ is never copied, even to a real toolchain.
	if err := os.Symlink(tcDir(stable), tcDir("linked-"+triple)); err != nil {
		t.Fatal(err)
	}
	if got := dockerToolchain(getenv, lookPath, crate("/work/p", map[string]string{"rust-toolchain": "linked\n"})); got == nil || got.Dir != "" || !strings.Contains(got.Note, "linked") {
		t.Errorf("linked toolchain: %+v, want refused", got)
	}
	// The system's cargo (Debian's, as in the image) and no cargo: nothing.
	if got := dockerToolchain(getenv, func(string) (string, error) { return "/usr/bin/cargo", nil }, crate("/work/p", nil)); got != nil {
		t.Errorf("system cargo: %+v, want nil", got)
	}
}

package parity

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/setup"
)

// TestRustChannelRefused: a crate pinned to a nightly the host's rustup
// does not have is refused under bwrap (and docker, whose image has
// Debian's stable rustc and which copies only a toolchain the host has)
// before any test runs, with a
// message naming the file, the pinned channel, the rustc the sandbox
// has and the fix, where it used to run on the stable toolchain (or say
// only that no stable rustc is a nightly). A crate whose test would pass
// on stable shows that no test ran.
func TestRustChannelRefused(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, "fixpoint-sandbox-rust")
	sandboxtest.RequireCommand(t, "bwrap")
	sandboxtest.RequireCommand(t, "cargo")
	sandboxtest.RequireCommand(t, "git")
	const pin = "nightly-2019-01-01" // older than any toolchain a host keeps
	for _, tc := range []struct{ file, backend string }{
		{"rust-toolchain.toml", config.BackendBwrap}, {"rust-toolchain", config.BackendBwrap}, {"rust-toolchain.toml", config.BackendDocker},
	} {
		file := tc.file
		t.Run(tc.backend+"/"+file, func(t *testing.T) {
			src := t.TempDir()
			text := "[toolchain]\nchannel = \"" + pin + "\"\ncomponents = [\"clippy\"]\n"
			if file == "rust-toolchain" {
				text = pin + "\n"
			}
			files := map[string]string{
				"Cargo.toml": "[package]\nname = \"pinned\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
				"src/lib.rs": "#[cfg(test)]\nmod tests {\n    #[test]\n    fn passes() {}\n}\n",
				file:         text,
			}
			for name, body := range files {
				p := filepath.Join(src, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			dir, err := Unpack(t.Context(), Project{Name: "pinned", Dir: src}, t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			rep, err := testOn(t, dir, tc.backend)
			var re *setup.RuntimeError
			if !errors.As(err, &re) {
				t.Fatalf("report %+v, error %v; want the run refused with a RuntimeError", rep, err)
			}
			msg := err.Error()
			for _, want := range []string{file + " (channel " + pin + ")", "has rust", "no test was run", "rustup toolchain install " + pin, "remove the pin from " + file} {
				if !strings.Contains(msg, want) {
					t.Errorf("error %q lacks %q", msg, want)
				}
			}
		})
	}
}

package rust

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// HostTools offers the cargo a native run finds on PATH when it is not
// under /usr: rustup's proxies in ~/.cargo/bin (or $CARGO_HOME/bin) and
// the toolchains in ~/.rustup (or $RUSTUP_HOME), with RUSTUP_HOME set to
// it. Never $CARGO_HOME itself: it holds credentials.toml.
//
// For docker it adds the one toolchain directory a native run uses
// (dockerToolchain: a read-only copy, never ~/.cargo, never a path a
// workspace file names), or a note saying why the image's rustc runs.
func (Language) HostTools(snap *sandbox.Snapshot) []sandbox.HostTool {
	tools := hostTools(os.Getenv, exec.LookPath)
	if t := dockerToolchain(os.Getenv, exec.LookPath, snap); t != nil {
		tools = append(tools, *t)
	}
	return tools
}

func hostTools(getenv func(string) string, lookPath func(string) (string, error)) []sandbox.HostTool {
	cargo, err := lookPath("cargo")
	if err != nil || !filepath.IsAbs(cargo) {
		return nil
	}
	bin := filepath.Dir(cargo)
	if bin == "/usr/bin" || bin == "/bin" || strings.HasPrefix(bin, "/usr/") {
		return nil // the system's cargo: bwrap binds /usr already
	}
	tools := []sandbox.HostTool{{Dir: bin, OnPath: true}}
	real, err := filepath.EvalSymlinks(cargo)
	if err != nil || filepath.Base(real) != "rustup" && filepath.Base(real) != "rustup-init" {
		return tools // a cargo of its own (a standalone install's bin)
	}
	home := getenv("RUSTUP_HOME")
	if home == "" {
		h := getenv("HOME")
		if h == "" {
			return tools
		}
		home = filepath.Join(h, ".rustup")
	}
	if st, err := os.Stat(filepath.Join(home, "toolchains")); err != nil || !st.IsDir() {
		return tools
	}
	return append(tools, sandbox.HostTool{Dir: home, Env: []string{"RUSTUP_HOME=" + home}})
}

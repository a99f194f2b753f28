package rust

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/pelletier/go-toml/v2"
)

// ToolchainTarget is where a docker session finds the host's rustup
// toolchain (a read-only copy, sandbox.HostTool.Copy); its bin/ comes
// first on PATH, before the image's Debian cargo.
const ToolchainTarget = "/opt/fixpoint/rust-toolchain"

// hostToolchain is the rustup toolchain a native `cargo test` in the
// project runs: its directory under $RUSTUP_HOME/toolchains, its full
// name, the rustc version its manifest records and what chose it.
type hostToolchain struct {
	Name, Dir, Source string
	Version           lang.Version
}

// toolchainNameRe is what a rustup toolchain name may be here: a channel
// ("stable", "1.95", "nightly-2026-01-01") with an optional host triple.
// No path separator, no "..": the name becomes one path element under
// the toolchains directory.
var toolchainNameRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._+-]{0,99}$`)

// hostTriple is rustup's host triple for this machine; "" when fixpoint
// does not know it (the name then must carry one).
func hostTriple() string {
	if runtime.GOOS != "linux" {
		return ""
	}
	switch runtime.GOARCH {
	case "amd64":
		return "x86_64-unknown-linux-gnu"
	case "arm64":
		return "aarch64-unknown-linux-gnu"
	}
	return ""
}

// resolveHostToolchain finds the toolchain rustup would run for snap on
// this machine, as rustup does: $RUSTUP_TOOLCHAIN, else a directory
// override in settings.toml for the project or a parent, else the
// project's rust-toolchain.toml / rust-toolchain, else settings.toml's
// default. It returns nil and why not ("" when the host has no rustup at
// all). It never follows a name out of $RUSTUP_HOME/toolchains: a name
// with a path separator or "..", a toolchain file naming a path
// (`path = ...`) and a linked toolchain (a symlink: `rustup toolchain
// link`, which can point anywhere) are refused, since a workspace file
// must not choose which host directory a sandbox sees.
func resolveHostToolchain(getenv func(string) string, lookPath func(string) (string, error), snap *sandbox.Snapshot) (*hostToolchain, string) {
	cargo, err := lookPath("cargo")
	if err != nil || !filepath.IsAbs(cargo) {
		return nil, ""
	}
	if real, err := filepath.EvalSymlinks(cargo); err != nil || (filepath.Base(real) != "rustup" && filepath.Base(real) != "rustup-init") {
		return nil, "" // the system's cargo, or a standalone install: not rustup's
	}
	home := getenv("RUSTUP_HOME")
	if home == "" {
		h := getenv("HOME")
		if h == "" {
			return nil, ""
		}
		home = filepath.Join(h, ".rustup")
	}
	toolchains := filepath.Join(home, "toolchains")
	if st, err := os.Stat(toolchains); err != nil || !st.IsDir() {
		return nil, ""
	}
	var settings struct {
		Default   string            `toml:"default_toolchain"`
		Overrides map[string]string `toml:"overrides"`
	}
	if data, err := os.ReadFile(filepath.Join(home, "settings.toml")); err == nil {
		_ = toml.Unmarshal(data, &settings) // an unreadable file: no default, no overrides
	}
	name, source := getenv("RUSTUP_TOOLCHAIN"), "RUSTUP_TOOLCHAIN"
	if name == "" && snap != nil && snap.Root != "" {
		for dir := filepath.Clean(snap.Root); ; dir = filepath.Dir(dir) {
			if o := settings.Overrides[dir]; o != "" {
				name, source = o, "rustup override for "+dir
				break
			}
			if dir == filepath.Dir(dir) {
				break
			}
		}
	}
	if name == "" && snap != nil {
		for _, file := range []string{"rust-toolchain.toml", "rust-toolchain"} {
			f, ok := snap.Files[file]
			if !ok {
				continue
			}
			data := lang.Contents(f)
			if toolchainPath(data) {
				return nil, file + " names a toolchain by path; fixpoint never offers a host directory a workspace file names"
			}
			channel, err := toolchainChannel(data)
			if err != nil {
				return nil, file + " does not parse as TOML"
			}
			name, source = channel, file
			break
		}
	}
	if name == "" {
		name, source = settings.Default, "rustup's default toolchain"
	}
	if name == "" {
		return nil, "rustup has no default toolchain"
	}
	if !toolchainNameRe.MatchString(name) || strings.Contains(name, "..") {
		return nil, fmt.Sprintf("%s names toolchain %q, which is not a toolchain name", source, name)
	}
	full := name
	if triple := hostTriple(); triple != "" && !strings.HasSuffix(name, "-"+triple) {
		full = name + "-" + triple
	}
	dir := filepath.Join(toolchains, full)
	if filepath.Dir(dir) != filepath.Clean(toolchains) {
		return nil, fmt.Sprintf("%s names toolchain %q, which is not a toolchain name", source, name)
	}
	st, err := os.Lstat(dir)
	switch {
	case err != nil:
		return nil, fmt.Sprintf("%s asks for toolchain %s, which rustup has not installed on this machine", source, full)
	case st.Mode()&os.ModeSymlink != 0:
		return nil, fmt.Sprintf("toolchain %s (%s) is linked (rustup toolchain link); fixpoint copies only toolchains rustup installed", full, source)
	case !st.IsDir():
		return nil, fmt.Sprintf("toolchain %s (%s) is not a directory", full, source)
	}
	v, err := toolchainVersion(dir)
	if err != nil {
		return nil, fmt.Sprintf("toolchain %s (%s): %v", full, source, err)
	}
	return &hostToolchain{Name: full, Dir: dir, Source: source, Version: v}, ""
}

// toolchainPath reports whether a rust-toolchain.toml names a toolchain
// directory (`[toolchain] path = "..."`).
func toolchainPath(data []byte) bool {
	var tc struct {
		Toolchain struct {
			Path *string `toml:"path"`
		} `toml:"toolchain"`
	}
	return toml.Unmarshal(data, &tc) == nil && tc.Toolchain.Path != nil
}

var manifestRustcRe = regexp.MustCompile(`(?m)^\[pkg\.rustc\]\s*\nversion\s*=\s*"([0-9]+\.[0-9]+\.[0-9]+)`)

// toolchainVersion reads the rustc version rustup recorded when it
// installed the toolchain in dir (lib/rustlib/multirust-channel-manifest.toml),
// without running anything.
func toolchainVersion(dir string) (lang.Version, error) {
	data, err := os.ReadFile(filepath.Join(dir, "lib", "rustlib", "multirust-channel-manifest.toml"))
	if err != nil {
		return lang.Version{}, fmt.Errorf("no rustup manifest: %w", err)
	}
	m := manifestRustcRe.FindSubmatch(data)
	if m == nil {
		return lang.Version{}, fmt.Errorf("no rustc version in its rustup manifest")
	}
	return lang.ParseVersion(string(m[1]))
}

// dockerToolchain is the docker form of the host's toolchain: a Copy
// host tool of the one toolchain directory a native run uses, when it
// satisfies the project's requirement, else a Copy tool without Dir
// whose Note says why the image's rustc runs instead. nil when the host
// has no rustup (the image's rustc is then as near as any).
func dockerToolchain(getenv func(string) string, lookPath func(string) (string, error), snap *sandbox.Snapshot) *sandbox.HostTool {
	tc, why := resolveHostToolchain(getenv, lookPath, snap)
	if tc == nil {
		if why == "" {
			return nil
		}
		return &sandbox.HostTool{Copy: true, Note: why}
	}
	if snap != nil {
		req, err := Language{}.Requirement(snap)
		if err == nil && req != nil && req.Channel != "" {
			// A nightly or beta pin: met by the host's toolchain of that
			// very name, which rustup would run natively.
			pin := strings.TrimSuffix(req.Constraint, " toolchain")
			if tc.Name != pin && tc.Name != pin+"-"+hostTriple() {
				return &sandbox.HostTool{Copy: true, Note: fmt.Sprintf("the host's toolchain %s is not the %s toolchain %s pins", tc.Name, printable(pin), printable(req.Source))}
			}
		} else if err == nil && req != nil && !req.Range.Allows(tc.Version) {
			return &sandbox.HostTool{Copy: true, Note: fmt.Sprintf("the host's toolchain %s (rustc %s) does not satisfy %s (%s)", tc.Name, tc.Version, printable(req.Source), printable(req.Constraint))}
		}
	}
	return &sandbox.HostTool{
		Dir: tc.Dir, Copy: true, Target: ToolchainTarget, OnPath: true,
		// share/ is documentation (800 MB of HTML): not what a build runs.
		Skip: []string{"share"},
		Key:  tc.Name + " " + tc.Version.String(),
		Note: fmt.Sprintf("the host's rustup toolchain %s (rustc %s, chosen by %s)", tc.Name, tc.Version, tc.Source),
	}
}

// printable replaces control characters (a workspace file's text in a
// message that reaches a terminal) with "?".
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r >= 0x7f && r < 0xa0 {
			return '?'
		}
		return r
	}, s)
}

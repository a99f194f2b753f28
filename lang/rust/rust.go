package rust

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
	"github.com/pelletier/go-toml/v2"
)

// TargetCache is where the setup step builds the crate's dependencies
// (CARGO_TARGET_DIR), mounted read-only into test runs; the test command
// copies it into the workspace's own target directory once per session.
const TargetCache = "/cargo/target"

// Language is Rust. The zero value is ready to use.
type Language struct{}

var rustcVersionOut = regexp.MustCompile(`rustc ([0-9]+\.[0-9]+\.[0-9]+)`)

func (Language) Name() string             { return "rust" }
func (Language) VersionCommand() []string { return []string{"rustc", "--version"} }

// Detect reports a Cargo.toml at the root, unless the project is a
// Python package built with maturin (a pyproject.toml naming it), whose
// tests are Python's.
func (Language) Detect(snap *sandbox.Snapshot) bool {
	if _, ok := snap.Files["Cargo.toml"]; !ok {
		return false
	}
	py, ok := snap.Text("pyproject.toml")
	return !ok || !strings.Contains(py, "maturin")
}

// ParseVersion reads `rustc --version` output ("rustc 1.63.0").
func (Language) ParseVersion(out string) (lang.Version, error) {
	m := rustcVersionOut.FindStringSubmatch(out)
	if m == nil {
		return lang.Version{}, fmt.Errorf("no rustc version in %q", strings.TrimSpace(out))
	}
	return lang.ParseVersion(m[1])
}

// manifest is the part of Cargo.toml fixpoint reads.
type manifest struct {
	Package struct {
		RustVersion any `toml:"rust-version"` // a string, or {workspace = true}
	} `toml:"package"`
	Workspace struct {
		Members []string `toml:"members"`
		Package struct {
			RustVersion string `toml:"rust-version"`
		} `toml:"package"`
	} `toml:"workspace"`
	Dependencies    map[string]any `toml:"dependencies"`
	DevDependencies map[string]any `toml:"dev-dependencies"`
}

func readManifest(snap *sandbox.Snapshot) (*manifest, error) {
	f, ok := snap.Files["Cargo.toml"]
	if !ok {
		return nil, nil
	}
	var m manifest
	if err := toml.Unmarshal(lang.Contents(f), &m); err != nil {
		return nil, fmt.Errorf("parse Cargo.toml: %w", err)
	}
	return &m, nil
}

// Requirement reads the toolchain a project asks for: rust-toolchain.toml
// (or the older rust-toolchain) first, as rustup does, then Cargo.toml's
// rust-version. Both are minimums here: Rust's stability promise means a
// newer stable rustc builds what an older one did, and the sandbox has
// one rustc (Debian's). A nightly or beta channel needs a toolchain the
// sandbox does not have: its requirement allows no stable release.
func (Language) Requirement(snap *sandbox.Snapshot) (*lang.Requirement, error) {
	for _, name := range []string{"rust-toolchain.toml", "rust-toolchain"} {
		f, ok := snap.Files[name]
		if !ok {
			continue
		}
		channel, err := toolchainChannel(lang.Contents(f))
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		if channel == "" || channel == "stable" {
			break
		}
		return channelRequirement(channel, name+" (channel "+channel+")")
	}
	m, err := readManifest(snap)
	if m == nil || err != nil {
		return nil, err
	}
	rv, src := "", "Cargo.toml (package.rust-version)"
	switch v := m.Package.RustVersion.(type) {
	case string:
		rv = v
	case map[string]any:
		if v["workspace"] == true {
			rv, src = m.Workspace.Package.RustVersion, "Cargo.toml (workspace.package.rust-version)"
		}
	}
	if rv == "" {
		rv, src = m.Workspace.Package.RustVersion, "Cargo.toml (workspace.package.rust-version)"
	}
	if rv == "" {
		return nil, nil
	}
	v, err := lang.ParseVersion(rv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	return &lang.Requirement{Runtime: "rust", Constraint: ">= " + rv, Source: src, Range: lang.AtLeast(v)}, nil
}

// toolchainChannel reads the channel of a rust-toolchain.toml, or of a
// legacy rust-toolchain file holding just the channel name.
func toolchainChannel(data []byte) (string, error) {
	text := strings.TrimSpace(string(data))
	if text == "" {
		return "", nil
	}
	if !strings.Contains(text, "[") && !strings.Contains(text, "=") {
		return strings.Fields(text)[0], nil
	}
	var tc struct {
		Toolchain struct {
			Channel string `toml:"channel"`
		} `toml:"toolchain"`
	}
	if err := toml.Unmarshal(data, &tc); err != nil {
		return "", err
	}
	return strings.TrimSpace(tc.Toolchain.Channel), nil
}

// channelRequirement turns a channel ("1.70", "1.70.0",
// "nightly-2024-01-01", "beta") into a requirement. A numbered channel is
// a minimum. A nightly or beta channel is met by no numbered release:
// only by a toolchain of that channel, which rustup selects by name
// (ProbeEnv: the version check runs before the toolchain file is in the
// session) and whose `rustc --version` says so (Channel).
func channelRequirement(channel, source string) (*lang.Requirement, error) {
	if v, err := lang.ParseVersion(channel); err == nil && channel[0] >= '0' && channel[0] <= '9' {
		return &lang.Requirement{Runtime: "rust", Constraint: ">= " + channel, Source: source, Range: lang.AtLeast(v)}, nil
	}
	none := lang.AnyOf([]lang.Bound{{Op: "<", V: lang.Version{}}})
	req := &lang.Requirement{Runtime: "rust", Constraint: channel + " toolchain", Source: source, Range: none,
		Channel: strings.SplitN(channel, "-", 2)[0]}
	if toolchainNameRe.MatchString(channel) && !strings.Contains(channel, "..") {
		// RUSTUP_AUTO_INSTALL=0: rustup (1.28+) would otherwise try to
		// download a missing toolchain, which no sandbox can.
		req.ProbeEnv = []string{"RUSTUP_TOOLCHAIN=" + channel, "RUSTUP_AUTO_INSTALL=0"}
	}
	return req, nil
}

// rustcChannelRe reads the channel of `rustc --version`: "rustc
// 1.97.0-nightly (e50aa6fba 2026-05-19)", "rustc 1.96.0-beta.3 (…)".
var rustcChannelRe = regexp.MustCompile(`rustc [0-9]+\.[0-9]+\.[0-9]+-(nightly|beta|dev)\b`)

// Channel is the channel of the rustc that printed out: "nightly",
// "beta", "dev" (a source build), "" for a stable release.
func (Language) Channel(out string) string {
	if m := rustcChannelRe.FindStringSubmatch(out); m != nil {
		return m[1]
	}
	return ""
}

// RuntimeFix says how to get a toolchain that satisfies req.
func (Language) RuntimeFix(req *lang.Requirement) string {
	if req.Channel != "" {
		name := strings.TrimSuffix(req.Constraint, " toolchain")
		return fmt.Sprintf("install it on this machine with `rustup toolchain install %s` (bwrap and none run the host's rustup toolchains, docker copies the one a native `cargo test` runs; "+
			"nothing is downloaded into a sandbox), or set [sandbox] image (or sandbox.dockerfile) to an image with a %s toolchain, "+
			"or remove the pin from %s to test on stable", printable(name), printable(req.Channel), printable(strings.SplitN(req.Source, " (", 2)[0]))
	}
	return "fixpoint-sandbox-rust has Debian's stable rustc and nothing can be downloaded; change " + req.Source +
		", or set [sandbox] image (or sandbox.dockerfile) to an image with a matching Rust toolchain"
}

// SetupStep builds the crate's vendored dependencies and the crate itself
// once, offline, into a cache keyed by Cargo.toml, Cargo.lock, the cargo
// configuration and the vendored crates' checksums: test runs then
// compile only what changed since. A crate without dependencies gets the
// step too: its first build is the whole compile, which under the
// image's rustc can outlast the per-command test timeout on its own
// (blyxxyz/lexopt: 2 minutes with `opt-level = 2` for tests, where the
// host's cargo took 30 s), while the setup step has the install's.
// Nothing is downloaded: dependencies come from vendor/ (see
// [CheckVendored], which runs before this step).
func (Language) SetupStep(snap *sandbox.Snapshot) *lang.Setup {
	if _, ok := snap.Files["Cargo.toml"]; !ok {
		return nil
	}
	name := "cargo build (vendored dependencies)"
	if lock, ok := snap.Text("Cargo.lock"); !ok || len(lockedPackages(lock, true)) == 0 {
		name = "cargo build (the crate; no dependencies)"
	}
	inputs := lang.InputsOf(snap, "Cargo.toml", "Cargo.lock", ".cargo/config.toml", ".cargo/config", "rust-toolchain.toml", "rust-toolchain")
	for _, p := range snap.Paths() {
		if strings.HasSuffix(p, "/.cargo-checksum.json") {
			inputs = append(inputs, p)
		}
	}
	return &lang.Setup{
		Name: name,
		// The workspace's own code may not compile yet (that is what the
		// agent is for): the step keeps whatever dependencies it built.
		Script: "cargo test --no-run --offline --quiet || echo 'fixpoint: the crate itself did not compile; its dependencies are cached' >&2",
		Inputs: inputs,
		Caches: []lang.Cache{{Name: "cargo-target", Path: TargetCache}},
		Env:    []string{"CARGO_TARGET_DIR=" + TargetCache, "CARGO_NET_OFFLINE=true"},
		// The step compiles the workspace, which runs its build.rs and
		// proc macros: after a model edit to any input it is not re-run
		// (the tests then build what changed, offline, in the session).
		Code: inputs,
	}
}

// Runner is the test command: every test binary (the libraries' and
// binaries' unit tests, each tests/*.rs, the doc-tests) with
// --no-fail-fast, offline, stderr merged into stdout so that cargo's
// "Running" headers stay in order with libtest's blocks. The setup
// step's dependency builds are copied into target/ first, once.
func Runner() testrun.Runner { return runner(`exec cargo test --offline --no-fail-fast 2>&1`) }

// runner is the test command with the given cargo command after the
// seeding of target/.
func runner(cargo string) testrun.Runner {
	script := `if [ -d ` + TargetCache + `/debug ] && [ ! -e target/.fixpoint-seeded ]; then ` +
		`mkdir -p target && cp -a ` + TargetCache + `/. target/ 2>/dev/null; touch target/.fixpoint-seeded; fi; ` + cargo
	return testrun.Runner{Name: RunnerName, Args: []string{"sh", "-c", script},
		Env:    []string{"CARGO_TERM_COLOR=never", "CARGO_NET_OFFLINE=true", "CARGO_TARGET_DIR=target"},
		Format: Format}
}

// RunnerName names reports of cargo test.
const RunnerName = "cargo"

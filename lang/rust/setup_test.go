package rust

import (
	"github.com/fixpoint-dev/fixpoint/lang/langtest"
	"strings"
	"testing"
)

func TestSetupChanges(t *testing.T) {
	const manifest = "[package]\nname = \"x\"\nversion = \"0.1.0\"\n\n[dependencies]\nserde = \"1\"\n"
	ct := func(s string) map[string]string {
		return map[string]string{"Cargo.toml": s, "src/lib.rs": "pub fn f() {}"}
	}
	const lock = "version = 3\n\n[[package]]\nname = \"serde\"\nversion = \"1.0.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n\n[[package]]\nname = \"x\"\nversion = \"0.1.0\"\n"
	langtest.RunSetupCases(t, Language{}, []langtest.SetupCase{
		{Name: "new build.rs", Before: ct(manifest), After: map[string]string{"Cargo.toml": manifest, "src/lib.rs": "pub fn f() {}", "build.rs": "fn main() {}"},
			Want: []string{"build.rs: changes a build script"}},
		{Name: "build key and its file", Before: ct(manifest), After: map[string]string{"Cargo.toml": strings.Replace(manifest, "version = \"0.1.0\"\n", "version = \"0.1.0\"\nbuild = \"tools/gen.rs\"\n", 1), "src/lib.rs": "pub fn f() {}", "tools/gen.rs": "fn main() {}"},
			Want: []string{"Cargo.toml: changes [package.build]", "tools/gen.rs: changes a build script"}},
		{Name: "build-dependencies", Before: ct(manifest), After: ct(manifest + "\n[build-dependencies]\ncc = \"1\"\n"), Want: []string{"changes [build-dependencies]"}},
		{Name: "patch and replace", Before: ct(manifest), After: ct(manifest + "\n[patch.crates-io]\nserde = { path = \"../evil\" }\n"), Want: []string{"changes [patch]"}},
		{Name: "proc-macro crate and its code", Before: map[string]string{"m/Cargo.toml": "[package]\nname = \"m\"\n[lib]\nproc-macro = true\n", "m/src/lib.rs": "a"},
			After: map[string]string{"m/Cargo.toml": "[package]\nname = \"m\"\n[lib]\nproc-macro = true\n", "m/src/lib.rs": "b"}, Want: []string{"m/src/lib.rs: changes a build script or proc-macro crate"}},
		{Name: "dependency spec changed to git", Before: ct(manifest), After: ct(strings.Replace(manifest, `serde = "1"`, `serde = { git = "https://e.x/serde" }`, 1)),
			Want: []string{`changes the dependencies spec of "serde"`}},
		{Name: "new path dependency", Before: ct(manifest), After: ct(manifest + "evil = { path = \"../evil\" }\n"), Want: []string{`adds "evil" from a path, git or another registry`}},
		{Name: "cargo config", Before: map[string]string{}, After: map[string]string{".cargo/config.toml": "[build]\nrustc-wrapper = \"/tmp/x\"\n", "rust-toolchain.toml": "[toolchain]\nchannel = \"nightly\"\n"},
			Want: []string{".cargo/config.toml: changes cargo's configuration", "rust-toolchain.toml: changes cargo's configuration"}},
		{Name: "vendored crate", Before: map[string]string{"vendor/serde/.cargo-checksum.json": "{}", "vendor/serde/src/lib.rs": "a"},
			After: map[string]string{"vendor/serde/.cargo-checksum.json": "{}", "vendor/serde/src/lib.rs": "b"}, Want: []string{"vendor/serde/src/lib.rs: changes a vendored crate"}},
		{Name: "lockfile takes a new version", Before: map[string]string{"Cargo.lock": lock}, After: map[string]string{"Cargo.lock": strings.Replace(lock, "1.0.0", "1.0.9", 1)},
			Want: []string{`Cargo.lock: locks packages to new versions or sources: "serde 1.0.9 registry+`}},

		// Near misses.
		{Name: "release profile", Before: ct(manifest), After: ct(manifest + "\n[profile.release]\nopt-level = 3\n")},
		{Name: "source edit", Before: map[string]string{"src/lib.rs": "a"}, After: map[string]string{"src/lib.rs": "b"}},
		{Name: "new registry dependency is left to the allow-list", Before: ct(manifest), After: ct(manifest + "rand = \"0.8\"\n")},
		{Name: "package metadata", Before: ct(manifest), After: ct(strings.Replace(manifest, "0.1.0", "0.1.1", 1))},
		{Name: "own crate's version in the lockfile", Before: map[string]string{"Cargo.lock": lock}, After: map[string]string{"Cargo.lock": strings.Replace(lock, "0.1.0", "0.1.1", 1)}},
	})
}

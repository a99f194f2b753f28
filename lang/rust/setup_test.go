package rust

import (
	"sort"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
)

func TestSetupChanges(t *testing.T) {
	const manifest = "[package]\nname = \"x\"\nversion = \"0.1.0\"\n\n[dependencies]\nserde = \"1\"\n"
	ct := func(s string) map[string]string {
		return map[string]string{"Cargo.toml": s, "src/lib.rs": "pub fn f() {}"}
	}
	const lock = "version = 3\n\n[[package]]\nname = \"serde\"\nversion = \"1.0.0\"\nsource = \"registry+https://github.com/rust-lang/crates.io-index\"\n\n[[package]]\nname = \"x\"\nversion = \"0.1.0\"\n"
	runSetupCases(t, Language{}, []setupCase{
		{name: "new build.rs", before: ct(manifest), after: map[string]string{"Cargo.toml": manifest, "src/lib.rs": "pub fn f() {}", "build.rs": "fn main() {}"},
			want: []string{"build.rs: changes a build script"}},
		{name: "build key and its file", before: ct(manifest), after: map[string]string{"Cargo.toml": strings.Replace(manifest, "version = \"0.1.0\"\n", "version = \"0.1.0\"\nbuild = \"tools/gen.rs\"\n", 1), "src/lib.rs": "pub fn f() {}", "tools/gen.rs": "fn main() {}"},
			want: []string{"Cargo.toml: changes [package.build]", "tools/gen.rs: changes a build script"}},
		{name: "build-dependencies", before: ct(manifest), after: ct(manifest + "\n[build-dependencies]\ncc = \"1\"\n"), want: []string{"changes [build-dependencies]"}},
		{name: "patch and replace", before: ct(manifest), after: ct(manifest + "\n[patch.crates-io]\nserde = { path = \"../evil\" }\n"), want: []string{"changes [patch]"}},
		{name: "proc-macro crate and its code", before: map[string]string{"m/Cargo.toml": "[package]\nname = \"m\"\n[lib]\nproc-macro = true\n", "m/src/lib.rs": "a"},
			after: map[string]string{"m/Cargo.toml": "[package]\nname = \"m\"\n[lib]\nproc-macro = true\n", "m/src/lib.rs": "b"}, want: []string{"m/src/lib.rs: changes a build script or proc-macro crate"}},
		{name: "dependency spec changed to git", before: ct(manifest), after: ct(strings.Replace(manifest, `serde = "1"`, `serde = { git = "https://e.x/serde" }`, 1)),
			want: []string{`changes the dependencies spec of "serde"`}},
		{name: "new path dependency", before: ct(manifest), after: ct(manifest + "evil = { path = \"../evil\" }\n"), want: []string{`adds "evil" from a path, git or another registry`}},
		{name: "cargo config", before: map[string]string{}, after: map[string]string{".cargo/config.toml": "[build]\nrustc-wrapper = \"/tmp/x\"\n", "rust-toolchain.toml": "[toolchain]\nchannel = \"nightly\"\n"},
			want: []string{".cargo/config.toml: changes cargo's configuration", "rust-toolchain.toml: changes cargo's configuration"}},
		{name: "vendored crate", before: map[string]string{"vendor/serde/.cargo-checksum.json": "{}", "vendor/serde/src/lib.rs": "a"},
			after: map[string]string{"vendor/serde/.cargo-checksum.json": "{}", "vendor/serde/src/lib.rs": "b"}, want: []string{"vendor/serde/src/lib.rs: changes a vendored crate"}},
		{name: "lockfile takes a new version", before: map[string]string{"Cargo.lock": lock}, after: map[string]string{"Cargo.lock": strings.Replace(lock, "1.0.0", "1.0.9", 1)},
			want: []string{`Cargo.lock: locks packages to new versions or sources: "serde 1.0.9 registry+`}},

		// Near misses.
		{name: "release profile", before: ct(manifest), after: ct(manifest + "\n[profile.release]\nopt-level = 3\n")},
		{name: "source edit", before: map[string]string{"src/lib.rs": "a"}, after: map[string]string{"src/lib.rs": "b"}},
		{name: "new registry dependency is left to the allow-list", before: ct(manifest), after: ct(manifest + "rand = \"0.8\"\n")},
		{name: "package metadata", before: ct(manifest), after: ct(strings.Replace(manifest, "0.1.0", "0.1.1", 1))},
		{name: "own crate's version in the lockfile", before: map[string]string{"Cargo.lock": lock}, after: map[string]string{"Cargo.lock": strings.Replace(lock, "0.1.0", "0.1.1", 1)}},
	})
}

// setupCase is an edit (before -> after; a file missing from after is
// deleted) and the changes SetupChanges must report: one substring of
// "file: what" per change, none for an edit setup does not see.
type setupCase struct {
	name          string
	before, after map[string]string
	want          []string
}

func runSetupCases(t *testing.T, l lang.SetupChanges, cases []setupCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			before, after := snapOf(tt.before), snapOf(tt.after)
			var changed []string
			for p := range tt.after {
				if b, ok := tt.before[p]; !ok || b != tt.after[p] {
					changed = append(changed, p)
				}
			}
			for p := range tt.before {
				if _, ok := tt.after[p]; !ok {
					changed = append(changed, p)
				}
			}
			sort.Strings(changed)
			got := l.SetupChanges(before, after, changed)
			if len(got) != len(tt.want) {
				t.Fatalf("SetupChanges(%v) = %q, want %d change(s) matching %q", changed, got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i].String(), w) {
					t.Errorf("change %d = %q, want it to contain %q", i, got[i], w)
				}
				if strings.ContainsAny(got[i].String(), "\x1b\x07\r") {
					t.Errorf("change %d carries control characters: %q", i, got[i])
				}
			}
		})
	}
}

package rust

import (
	"errors"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

func snapOf(files map[string]string) *sandbox.Snapshot {
	s := &sandbox.Snapshot{Files: map[string]sandbox.File{}}
	ch := map[string][]byte{}
	for p, c := range files {
		ch[p] = []byte(c)
	}
	return s.With(ch)
}

func TestRequirement(t *testing.T) {
	tests := []struct {
		name       string
		files      map[string]string
		wantSource string // "" = no requirement
		allows163  bool
		wantErr    string
	}{
		{name: "none", files: map[string]string{"Cargo.toml": "[package]\nname = \"x\"\nversion = \"0.1.0\"\n"}},
		{name: "rust-version", files: map[string]string{"Cargo.toml": "[package]\nname = \"x\"\nrust-version = \"1.60\"\n"},
			wantSource: "Cargo.toml (package.rust-version)", allows163: true},
		{name: "rust-version too new", files: map[string]string{"Cargo.toml": "[package]\nname = \"x\"\nrust-version = \"1.74.1\"\n"},
			wantSource: "Cargo.toml (package.rust-version)"},
		{name: "workspace rust-version", files: map[string]string{"Cargo.toml": "[workspace]\nmembers = [\"a\"]\n[workspace.package]\nrust-version = \"1.56\"\n[package]\nname = \"x\"\nrust-version.workspace = true\n"},
			wantSource: "Cargo.toml (workspace.package.rust-version)", allows163: true},
		{name: "toolchain file wins", files: map[string]string{"Cargo.toml": "[package]\nrust-version = \"1.60\"\n", "rust-toolchain.toml": "[toolchain]\nchannel = \"1.70.0\"\ncomponents = [\"clippy\"]\n"},
			wantSource: "rust-toolchain.toml (channel 1.70.0)"},
		{name: "legacy toolchain file", files: map[string]string{"Cargo.toml": "[package]\n", "rust-toolchain": "1.62\n"},
			wantSource: "rust-toolchain (channel 1.62)", allows163: true},
		{name: "nightly", files: map[string]string{"Cargo.toml": "[package]\n", "rust-toolchain.toml": "[toolchain]\nchannel = \"nightly-2024-01-01\"\n"},
			wantSource: "rust-toolchain.toml (channel nightly-2024-01-01)"},
		{name: "stable channel falls through to rust-version", files: map[string]string{"Cargo.toml": "[package]\nrust-version = \"1.61\"\n", "rust-toolchain.toml": "[toolchain]\nchannel = \"stable\"\n"},
			wantSource: "Cargo.toml (package.rust-version)", allows163: true},
		{name: "broken Cargo.toml", files: map[string]string{"Cargo.toml": "[package\n"}, wantErr: "Cargo.toml"},
	}
	rustc163, err := Language{}.ParseVersion("rustc 1.63.0\n")
	if err != nil || rustc163 != (lang.Version{Major: 1, Minor: 63}) {
		t.Fatalf("ParseVersion = %v, %v", rustc163, err)
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := Language{}.Requirement(snapOf(tc.files))
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("Requirement error = %v, want one naming %s", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if tc.wantSource == "" {
				if req != nil {
					t.Fatalf("Requirement = %v, want none", req)
				}
				return
			}
			if req == nil || req.Source != tc.wantSource || req.Runtime != "rust" {
				t.Fatalf("Requirement = %v, want one from %s", req, tc.wantSource)
			}
			if got := req.Range.Allows(rustc163); got != tc.allows163 {
				t.Errorf("%v allows rustc 1.63.0 = %v, want %v", req, got, tc.allows163)
			}
		})
	}
}

const percentLock = `version = 3

[[package]]
name = "percent"
version = "0.1.0"
dependencies = ["tinyclamp"]

[[package]]
name = "tinyclamp"
version = "0.1.0"
source = "registry+https://github.com/rust-lang/crates.io-index"
checksum = "00"
`

const vendorConfig = "[source.crates-io]\nreplace-with = \"vendored-sources\"\n\n[source.vendored-sources]\ndirectory = \"vendor\"\n"

func TestCheckVendored(t *testing.T) {
	withDep := "[package]\nname = \"percent\"\nversion = \"0.1.0\"\n\n[dependencies]\ntinyclamp = \"0.1\"\n"
	vendored := map[string]string{
		"Cargo.toml": withDep, "Cargo.lock": percentLock, ".cargo/config.toml": vendorConfig,
		"vendor/tinyclamp/Cargo.toml":           "[package]\nname = \"tinyclamp\"\nversion = \"0.1.0\"\n",
		"vendor/tinyclamp/.cargo-checksum.json": `{"files":{},"package":"00"}`,
	}
	with := func(base map[string]string, change map[string]string) map[string]string {
		out := map[string]string{}
		for k, v := range base {
			out[k] = v
		}
		for k, v := range change {
			if v == "" {
				delete(out, k)
			} else {
				out[k] = v
			}
		}
		return out
	}
	tests := []struct {
		name  string
		files map[string]string
		want  []string // substrings of the error; nil = no error
	}{
		{name: "no dependencies", files: map[string]string{"Cargo.toml": "[package]\nname = \"x\"\n"}},
		{name: "path dependencies only", files: map[string]string{"Cargo.toml": "[package]\nname = \"x\"\n[dependencies]\ny = { path = \"../y\" }\n"}},
		{name: "vendored", files: vendored},
		{name: "legacy .cargo/config", files: with(vendored, map[string]string{".cargo/config.toml": "", ".cargo/config": vendorConfig})},
		{name: "local registry", files: with(vendored, map[string]string{
			".cargo/config.toml":                    "[source.crates-io]\nreplace-with = \"local\"\n[source.local]\nlocal-registry = \"registry\"\n",
			"vendor/tinyclamp/Cargo.toml":           "",
			"vendor/tinyclamp/.cargo-checksum.json": "",
			"registry/tinyclamp-0.1.0.crate":        "gz",
		})},
		{name: "no lockfile", files: map[string]string{"Cargo.toml": withDep},
			want: []string{"Cargo.toml depends on tinyclamp", "neither a Cargo.lock nor a .cargo/config.toml", "cargo vendor"}},
		// Libraries keep Cargo.lock out of git: cargo resolves offline.
		{name: "no lockfile, vendored", files: with(vendored, map[string]string{"Cargo.lock": ""})},
		{name: "no lockfile, not in vendor", files: with(vendored, map[string]string{"Cargo.lock": "", "Cargo.toml": withDep + "\n[dev-dependencies]\nproptest = \"1\"\n"}),
			want: []string{"Cargo.toml depends on proptest", "vendored sources named in .cargo/config.toml", "no Cargo.lock"}},
		{name: "no source replacement", files: with(vendored, map[string]string{".cargo/config.toml": ""}),
			want: []string{"Cargo.lock needs 1 packages", "tinyclamp 0.1.0", ".cargo/config.toml", "cargo vendor"}},
		{name: "vendor directory missing", files: with(vendored, map[string]string{"vendor/tinyclamp/Cargo.toml": "", "vendor/tinyclamp/.cargo-checksum.json": ""}),
			want: []string{"Cargo.lock needs tinyclamp 0.1.0", "vendored sources named in .cargo/config.toml", "cargo vendor"}},
		{name: "vendored version is stale", files: with(vendored, map[string]string{"vendor/tinyclamp/Cargo.toml": "[package]\nname = \"tinyclamp\"\nversion = \"0.0.9\"\n"}),
			want: []string{"tinyclamp 0.1.0"}},
		{name: "escaping vendor directory is not a replacement", files: with(vendored, map[string]string{".cargo/config.toml": "[source.crates-io]\nreplace-with = \"v\"\n[source.v]\ndirectory = \"/home/me/vendor\"\n"}),
			want: []string{"does not replace with a vendored directory"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckVendored(snapOf(tc.files))
			if tc.want == nil {
				if err != nil {
					t.Fatalf("CheckVendored = %v, want nil", err)
				}
				return
			}
			if !errors.Is(err, ErrNotVendored) {
				t.Fatalf("CheckVendored = %v, want ErrNotVendored", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("CheckVendored = %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

func TestSetupStep(t *testing.T) {
	if st := (Language{}).SetupStep(snapOf(map[string]string{"src/lib.rs": ""})); st != nil {
		t.Errorf("SetupStep without Cargo.toml = %+v, want nil", st)
	}
	// A crate without dependencies (with or without Cargo.lock) is built
	// in the setup step too: its whole compile, which can outlast the
	// test command's timeout, is then cached (blyxxyz/lexopt on docker).
	for _, files := range []map[string]string{
		{"Cargo.toml": "[package]\nname = \"x\"\n", "Cargo.lock": "version = 3\n[[package]]\nname = \"x\"\nversion = \"0.1.0\"\n"},
		{"Cargo.toml": "[package]\nname = \"x\"\n", "src/lib.rs": ""},
	} {
		st := Language{}.SetupStep(snapOf(files))
		if st == nil || !strings.Contains(st.Script, "cargo test --no-run --offline") || len(st.Caches) != 1 || st.Caches[0].Path != TargetCache || !strings.Contains(st.Name, "no dependencies") {
			t.Errorf("SetupStep without dependencies (%v) = %+v, want the crate's build into %s", files, st, TargetCache)
		}
	}
	snap := snapOf(map[string]string{"Cargo.toml": "[package]\n", "Cargo.lock": percentLock, ".cargo/config.toml": vendorConfig,
		"vendor/tinyclamp/.cargo-checksum.json": "{}", "src/lib.rs": ""})
	st := Language{}.SetupStep(snap)
	if st == nil {
		t.Fatal("SetupStep = nil for a crate with a vendored dependency")
	}
	if got := strings.Join(st.Inputs, ","); got != ".cargo/config.toml,Cargo.lock,Cargo.toml,vendor/tinyclamp/.cargo-checksum.json" {
		t.Errorf("Inputs = %s", got)
	}
	if len(st.Caches) != 1 || st.Caches[0].Path != TargetCache || !strings.Contains(st.Script, "--offline") {
		t.Errorf("step = %+v", st)
	}
	// A changed vendored crate re-keys the cache.
	k1 := st.Key(snap, "img")
	snap2 := snap.With(map[string][]byte{"vendor/tinyclamp/.cargo-checksum.json": []byte(`{"files":{"a":"b"}}`)})
	if k2 := (Language{}).SetupStep(snap2).Key(snap2, "img"); k1 == k2 {
		t.Error("cache key ignores the vendored crates' checksums")
	}
}

// TestToolchainChannel: the channel of rust-toolchain.toml in its forms
// (channel alone; with components, targets and profile, which are
// ignored; `path =`, which names no channel) and of the legacy
// rust-toolchain file (the name alone, a trailing newline or comment-free
// whitespace).
func TestToolchainChannel(t *testing.T) {
	cases := []struct{ in, want string }{
		{"[toolchain]\nchannel = \"nightly\"\n", "nightly"},
		{"[toolchain]\nchannel = \"nightly-2024-05-01\"\ncomponents = [\"rustfmt\", \"clippy\"]\ntargets = [\"wasm32-unknown-unknown\"]\nprofile = \"minimal\"\n", "nightly-2024-05-01"},
		{"[toolchain]\nchannel = \"beta\"\n", "beta"},
		{"[toolchain]\nchannel = \"1.78.0\"\n", "1.78.0"},
		{"[toolchain]\npath = \"/opt/rust\"\n", ""},
		{"[toolchain]\ncomponents = [\"miri\"]\n", ""},
		{"nightly-2024-05-01\n", "nightly-2024-05-01"},
		{"  beta  \n", "beta"},
		{"1.78.0", "1.78.0"},
		{"", ""},
	}
	for _, c := range cases {
		got, err := toolchainChannel([]byte(c.in))
		if err != nil || got != c.want {
			t.Errorf("toolchainChannel(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if _, err := toolchainChannel([]byte("[toolchain\nchannel = 1")); err == nil {
		t.Errorf("a broken rust-toolchain.toml parsed")
	}
}

// TestChannelRequirement: a numbered pin is a minimum, as before; a
// nightly or beta pin is met by no numbered release, carries its channel
// and selects the pinned toolchain for the version check (rustup, never
// downloading); a pin that is no toolchain name selects nothing.
func TestChannelRequirement(t *testing.T) {
	req, err := Language{}.Requirement(snapOf(map[string]string{"Cargo.toml": "[package]\n", "rust-toolchain.toml": "[toolchain]\nchannel = \"1.78.0\"\n"}))
	if err != nil || req.Channel != "" || req.ProbeEnv != nil || !req.Range.Allows(lang.Version{Major: 1, Minor: 95}) || req.Range.Allows(lang.Version{Major: 1, Minor: 77}) {
		t.Errorf("1.78.0: %+v, %v; want a minimum without a channel", req, err)
	}
	for file, text := range map[string]string{"rust-toolchain.toml": "[toolchain]\nchannel = \"nightly-2024-05-01\"\ncomponents = [\"clippy\"]\n", "rust-toolchain": "nightly-2024-05-01\n"} {
		req, err := Language{}.Requirement(snapOf(map[string]string{"Cargo.toml": "[package]\n", file: text}))
		if err != nil || req.Channel != "nightly" || req.Range.Allows(lang.Version{Major: 1, Minor: 97}) {
			t.Fatalf("%s: %+v, %v; want the nightly channel, no numbered release", file, req, err)
		}
		if strings.Join(req.ProbeEnv, " ") != "RUSTUP_TOOLCHAIN=nightly-2024-05-01 RUSTUP_AUTO_INSTALL=0" {
			t.Errorf("%s: ProbeEnv %q", file, req.ProbeEnv)
		}
		if req.Source != file+" (channel nightly-2024-05-01)" {
			t.Errorf("%s: Source %q", file, req.Source)
		}
	}
	req, _ = Language{}.Requirement(snapOf(map[string]string{"Cargo.toml": "[package]\n", "rust-toolchain": "beta/../../x\n"}))
	if req == nil || req.ProbeEnv != nil {
		t.Errorf("a pin that is no toolchain name: %+v, want no RUSTUP_TOOLCHAIN", req)
	}
	for out, want := range map[string]string{
		"rustc 1.97.0-nightly (e50aa6fba 2026-05-19)\n": "nightly",
		"rustc 1.96.0-beta.3 (1234abcd 2026-05-01)":     "beta",
		"rustc 1.95.0 (59807616e 2026-04-14)":           "",
		"rustc 1.63.0":                                  "",
	} {
		if got := (Language{}).Channel(out); got != want {
			t.Errorf("Channel(%q) = %q, want %q", out, got, want)
		}
	}
}

// TestChannelFix: the fix for a channel pin names the install command
// with the pinned name, what docker can do, and the file to remove the
// pin from.
func TestChannelFix(t *testing.T) {
	req, _ := Language{}.Requirement(snapOf(map[string]string{"Cargo.toml": "[package]\n", "rust-toolchain.toml": "[toolchain]\nchannel = \"beta\"\n"}))
	fix := Language{}.RuntimeFix(req)
	for _, want := range []string{"rustup toolchain install beta", "bwrap and none", "docker copies", "[sandbox] image", "remove the pin from rust-toolchain.toml"} {
		if !strings.Contains(fix, want) {
			t.Errorf("fix %q lacks %q", fix, want)
		}
	}
}

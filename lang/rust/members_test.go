package rust

import (
	"errors"
	"slices"
	"testing"
)

// A cargo-fuzz crate (fuzz/, its own workspace) and a crate no manifest
// names are not part of `cargo test` at the root: their dependencies
// (libfuzzer-sys from crates.io) must not stop the tests as unvendored.
func TestBuildManifests(t *testing.T) {
	s := snapOf(map[string]string{
		"Cargo.toml":            "[package]\nname = \"top\"\nversion = \"0.1.0\"\n\n[workspace]\nmembers = [\"crates/*\"]\nexclude = [\"crates/old\"]\n\n[dependencies]\nhelper = { path = \"helper\" }\n",
		"helper/Cargo.toml":     "[package]\nname = \"helper\"\nversion = \"0.1.0\"\n",
		"crates/a/Cargo.toml":   "[package]\nname = \"a\"\nversion = \"0.1.0\"\n",
		"crates/old/Cargo.toml": "[package]\nname = \"old\"\nversion = \"0.1.0\"\n[dependencies]\nrand = \"0.8\"\n",
		"fuzz/Cargo.toml":       "[package]\nname = \"top-fuzz\"\nversion = \"0.0.0\"\n[workspace]\nmembers = [\".\"]\n[dependencies]\nlibfuzzer-sys = \"0.4\"\ntop = { path = \"..\" }\n",
		"examples/x/Cargo.toml": "[package]\nname = \"x\"\nversion = \"0.1.0\"\n[dependencies]\nserde = \"1\"\n",
	})
	want := []string{"Cargo.toml", "crates/a/Cargo.toml", "helper/Cargo.toml"}
	if got := buildManifests(s); !slices.Equal(got, want) {
		t.Errorf("buildManifests = %q, want %q", got, want)
	}
	if deps := (Language{}).Deps(s); len(deps) != 0 {
		t.Errorf("Deps = %+v, want none (fuzz/, examples/x and the excluded crate are not built)", deps)
	}
	if err := CheckVendored(s); errors.Is(err, ErrNotVendored) {
		t.Errorf("CheckVendored = %v: the fuzz crate's libfuzzer-sys is not the project's", err)
	}
}

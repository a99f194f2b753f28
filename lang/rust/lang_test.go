package rust

import (
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
)

func TestDetect(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  bool
	}{
		{"crate", map[string]string{"Cargo.toml": "[package]\n"}, true},
		{"crate with python scripts", map[string]string{"Cargo.toml": "[package]\n", "scripts/gen.py": ""}, true},
		{"maturin python package", map[string]string{"Cargo.toml": "[package]\n", "pyproject.toml": "[build-system]\nbuild-backend = \"maturin\"\n"}, false},
		{"nested crate only", map[string]string{"sub/Cargo.toml": "[package]\n"}, false},
	}
	for _, tc := range tests {
		if got := (Language{}).Detect(snapOf(tc.files)); got != tc.want {
			t.Errorf("%s: Detect = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestDeps(t *testing.T) {
	snap := snapOf(map[string]string{
		"Cargo.toml": `[package]
name = "app"

[dependencies]
serde = "1"
local = { path = "crates/local" }
rand_core = { package = "rand_core", version = "0.6" }
json = { package = "serde_json", version = "1" }

[dev-dependencies]
proptest = "1"

[target.'cfg(unix)'.dependencies]
libc = "0.2"

[build-dependencies]
cc = "1"
`,
		"crates/local/Cargo.toml":   "[package]\nname = \"local\"\n[dependencies]\nitoa = { workspace = true }\nryu = \"1\"\n",
		"vendor/serde/Cargo.toml":   "[package]\nname = \"serde\"\n[dependencies]\nserde_derive = \"1\"\n",
		"Cargo.lock":                percentLock,
		"crates/local/src/lib.rs":   "",
		"crates/local/Cargo.tomlx":  "",
		"crates/broken/Cargo.toml":  "[dependencies\n",
		"crates/noextra/Cargo.toml": "[package]\nname = \"n\"\n",
	})
	var got []string
	for _, d := range (Language{}).Deps(snap) {
		if d.Ecosystem != "cargo" {
			t.Errorf("ecosystem %q, want cargo", d.Ecosystem)
		}
		got = append(got, d.File+":"+d.Name)
	}
	want := "Cargo.lock:tinyclamp Cargo.toml:cc Cargo.toml:libc Cargo.toml:proptest Cargo.toml:rand_core Cargo.toml:serde Cargo.toml:serde_json crates/local/Cargo.toml:ryu"
	if strings.Join(got, " ") != want {
		t.Errorf("Deps = %v, want %s", got, want)
	}
}

func TestSymbols(t *testing.T) {
	src := `//! pub fn not_this() in a doc comment
use std::fmt;

pub struct Point { x: i32 }

pub(crate) enum Shape { Circle }

pub trait Area {
    fn area(&self) -> f64;
}

impl fmt::Display for Point {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { Ok(()) }
}

pub fn clamp<T: PartialOrd>(x: T, lo: T, hi: T) -> T { x }

async fn fetch(url: &str) {}

const S: &str = "
fn in_a_string() {}
";

macro_rules! square { ($x:expr) => { $x * $x }; }

mod parser;
`
	got := Language{}.Symbols("src/lib.rs", []byte(src))
	want := []string{
		"struct Point",
		"enum Shape",
		"trait Area",
		"impl fmt::Display for Point",
		"fn clamp<T: PartialOrd>(x: T, lo: T, hi: T) -> T",
		"fn fetch(url: &str)",
		"macro_rules! square",
		"mod parser",
	}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("Symbols =\n%q\nwant\n%q", got, want)
	}
	if got := (Language{}).Symbols("main.go", []byte("fn x() {}")); got != nil {
		t.Errorf("Symbols of a Go file = %v, want nil", got)
	}
}

func TestLocalImports(t *testing.T) {
	snap := snapOf(map[string]string{
		"Cargo.toml":          "[package]\n",
		"src/lib.rs":          "mod parse;\npub mod eval;\nmod missing;\n// mod commented;\nuse crate::util::helper;\n",
		"src/parse.rs":        "mod lexer;\nuse crate::eval::run;\n",
		"src/parse/lexer.rs":  "",
		"src/eval/mod.rs":     "",
		"src/util.rs":         "",
		"src/commented.rs":    "",
		"crates/x/src/lib.rs": "use crate::y;\n",
		"crates/x/src/y.rs":   "",
	})
	tests := []struct {
		file string
		want string
	}{
		{"src/lib.rs", "src/parse.rs src/eval/mod.rs src/util.rs"},
		{"src/parse.rs", "src/parse/lexer.rs src/eval/mod.rs"},
		{"crates/x/src/lib.rs", "crates/x/src/y.rs"},
		{"src/util.rs", ""},
	}
	for _, tc := range tests {
		files, dirs := Language{}.LocalImports(snap, tc.file)
		if strings.Join(files, " ") != tc.want || dirs != nil {
			t.Errorf("LocalImports(%s) = %v, %v; want %s", tc.file, files, dirs, tc.want)
		}
	}
}

// Integration tests, benches and examples reach the library by the
// crate's name: its root, and the modules they name through it.
func TestLocalImportsByCrateName(t *testing.T) {
	snap := snapOf(map[string]string{
		"Cargo.toml":          "[package]\nname = \"fast-fmt\"\n",
		"src/lib.rs":          "pub mod num;\npub fn write() {}\n",
		"src/num.rs":          "",
		"tests/test.rs":       "extern crate fast_fmt;\n#[test]\nfn t() { fast_fmt::write(); }\n",
		"tests/num.rs":        "use fast_fmt::num::Parse;\n",
		"tests/other.rs":      "use std::fmt;\n// fast-fmt is not fast_fmt::\n",
		"benches/b.rs":        "fn b() { fast_fmt :: write(); }\n",
		"lib2/Cargo.toml":     "[package]\nname = \"lib2\"\n[lib]\nname = \"other\"\npath = \"src/root.rs\"\n",
		"lib2/src/root.rs":    "",
		"lib2/tests/it.rs":    "use other::x;\nuse lib2::y;\n",
		"nolib/Cargo.toml":    "[package]\nname = \"nolib\"\n",
		"nolib/src/main.rs":   "",
		"nolib/tests/main.rs": "nolib::run();\n",
	})
	for _, tc := range []struct{ file, want string }{
		{"tests/test.rs", "src/lib.rs"},
		{"tests/num.rs", "src/lib.rs src/num.rs"},
		{"tests/other.rs", ""},
		{"benches/b.rs", "src/lib.rs"},
		{"lib2/tests/it.rs", "lib2/src/root.rs"},
		{"nolib/tests/main.rs", ""},
		{"src/lib.rs", "src/num.rs"},
	} {
		files, _ := Language{}.LocalImports(snap, tc.file)
		if strings.Join(files, " ") != tc.want {
			t.Errorf("LocalImports(%s) = %v, want %s", tc.file, files, tc.want)
		}
	}
}

func TestSignature(t *testing.T) {
	raw := string(readCapture(t, "mixed.merged"))
	l := Language{}
	if !l.LooksLike(raw) || l.LooksLike("--- FAIL: TestX (0.00s)\n") {
		t.Fatal("LooksLike does not tell cargo output from go test's")
	}
	s := l.Signature(raw)
	if got := strings.Join(s.Tests, ","); !strings.Contains(got, "tests::subtracts") || !strings.Contains(got, "tests::does_not_panic") || strings.Contains(got, "tests::adds") {
		t.Errorf("Tests = %v", s.Tests)
	}
	if got := strings.Join(s.Errors, "\n"); !strings.Contains(got, "panicked: sub(N, N) was N") {
		t.Errorf("Errors = %v", s.Errors)
	}
	if len(s.Frames) == 0 || s.Frames[0] != "lib.rs" {
		t.Errorf("Frames = %v, want lib.rs first", s.Frames)
	}
	b := l.Signature(string(readCapture(t, "broken.stderr")))
	if len(b.Errors) != 3 || !strings.HasPrefix(b.Errors[0], "build: [E") || !strings.Contains(b.Errors[0], "cannot find value `undefined_name` in this scope") {
		t.Errorf("build Errors = %q", b.Errors)
	}
}

func TestCheckPolicyInterface(t *testing.T) {
	var p lang.Policy = Language{}
	got, err := p.CheckPolicy(t.Context(), "src/lib.rs", []byte("fn f() { std::fs::remove_dir_all(\"/\").ok(); }\n"), lang.PolicyOptions{})
	if err != nil || len(got) != 1 || got[0].Rule != "rust.remove-dir-all" || !got[0].Always {
		t.Errorf("CheckPolicy = %+v, %v", got, err)
	}
	if got, _ := p.CheckPolicy(t.Context(), "main.py", []byte("unsafe { }"), lang.PolicyOptions{}); got != nil {
		t.Errorf("CheckPolicy of a Python file = %+v, want nil", got)
	}
	if len(p.PolicyRules()) != len(Rules())+len(lang.ForgeRules("rust")) {
		t.Error("PolicyRules does not list every rule (Rules and the shared forging rules)")
	}
}

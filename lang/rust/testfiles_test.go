package rust

import (
	"regexp"
	"strings"
	"testing"
)

func TestIsTestFile(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"tests/api.rs", true},
		{"tests/common/mod.rs", true},
		{"crates/core/tests/it.rs", true},
		{"src/tests.rs", true},
		{"src/parser/tests.rs", true},
		{"src/lib.rs", false},
		{"src/testing.rs", false},
		{"build.rs", false},
		{"tests/data.json", false},
		{"benches/speed.rs", false},
	}
	for _, tc := range tests {
		if got := IsTestFile(tc.path); got != tc.want {
			t.Errorf("IsTestFile(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
}

const libWithTests = `pub fn sub(a: i32, b: i32) -> i32 {
    a + b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn subtracts() {
        assert_eq!(sub(5, 3), 2);
    }
}
`

func TestTestInfra(t *testing.T) {
	fixed := strings.Replace(libWithTests, "a + b", "a - b", 1)
	tests := []struct {
		name          string
		path          string
		before, after string
		want          string // substring; "" = not test infrastructure
	}{
		{name: "fix next to the tests", path: "src/lib.rs", before: libWithTests, after: fixed},
		{name: "changed in-file test", path: "src/lib.rs", before: libWithTests, after: strings.Replace(libWithTests, "sub(5, 3), 2", "sub(5, 3), 8", 1), want: "in-file test"},
		{name: "removed test module", path: "src/lib.rs", before: libWithTests, after: "pub fn sub(a: i32, b: i32) -> i32 {\n    a - b\n}\n", want: "in-file test"},
		{name: "new #[test] outside a module", path: "src/lib.rs", before: fixed, after: fixed + "\n#[test]\nfn extra() {}\n", want: "in-file test"},
		{name: "cfg(all(test)) item", path: "src/lib.rs", before: "#[cfg(all(test, unix))]\nfn helper() -> i32 { 1 }\n", after: "#[cfg(all(test, unix))]\nfn helper() -> i32 { 2 }\n", want: "in-file test"},
		{name: "whole-file test module", path: "src/check.rs", before: "#![cfg(test)]\nfn a() {}\n", after: "#![cfg(test)]\nfn b() {}\n", want: "in-file test"},
		{name: "braces in strings do not end the module", path: "src/lib.rs",
			before: "#[cfg(test)]\nmod t {\n    const S: &str = \"}\";\n    fn x() { assert!(true); }\n}\n",
			after:  "#[cfg(test)]\nmod t {\n    const S: &str = \"}\";\n    fn x() { assert!(false); }\n}\n", want: "in-file test"},
		{name: "build script", path: "build.rs", after: "fn main() {}\n", want: "build script"},
		{name: "cargo config", path: ".cargo/config.toml", before: "", after: "[target.x86_64-unknown-linux-gnu]\nrunner = \"true\"\n", want: "configures cargo"},
		{name: "vendored crate", path: "vendor/tinyclamp/src/lib.rs", before: "a", after: "b", want: "vendored"},
		{name: "Cargo.toml version bump", path: "Cargo.toml", before: "[package]\nname = \"x\"\nversion = \"0.1.0\"\n", after: "[package]\nname = \"x\"\nversion = \"0.1.1\"\n"},
		{name: "Cargo.toml test target", path: "Cargo.toml", before: "[package]\nname = \"x\"\n", after: "[package]\nname = \"x\"\n\n[lib]\ntest = false\n", want: "how cargo builds or runs the tests"},
		{name: "Cargo.toml build script", path: "Cargo.toml", before: "[package]\nname = \"x\"\n", after: "[package]\nname = \"x\"\nbuild = \"gen.rs\"\n", want: "how cargo builds or runs the tests"},
		{name: "toolchain", path: "rust-toolchain.toml", after: "[toolchain]\nchannel = \"1.60\"\n", want: "toolchain"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var before []byte
			if tc.before != "" {
				before = []byte(tc.before)
			}
			got := TestInfra(tc.path, before, []byte(tc.after))
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Errorf("TestInfra(%s) = %q, want %q", tc.path, got, tc.want)
			}
		})
	}
}

// weakened is how agent/verify uses TestPatterns: fewer test functions
// or assertions, or more skips, after a change.
func weakened(before, after string) string {
	tp := Language{}.TestPatterns()
	count := func(re, s string) int { return len(regexp.MustCompile(`(?m)`+re).FindAllString(s, -1)) }
	switch {
	case count(tp.Funcs, after) < count(tp.Funcs, before):
		return "removes a test"
	case count(tp.Asserts, after) < count(tp.Asserts, before):
		return "removes an assertion"
	case count(tp.Skips, after) > count(tp.Skips, before):
		return "adds a skip"
	}
	return ""
}

func TestTestPatterns(t *testing.T) {
	tests := []struct {
		name  string
		after string
		want  string
	}{
		{name: "unchanged", after: libWithTests},
		{name: "more tests", after: strings.Replace(libWithTests, "    #[test]\n", "    #[test]\n    fn more() { assert!(true); }\n\n    #[test]\n", 1)},
		{name: "test removed", after: strings.Replace(libWithTests, "    #[test]\n", "", 1), want: "removes a test"},
		{name: "assertion removed", after: strings.Replace(libWithTests, "assert_eq!(sub(5, 3), 2);", "let _ = sub(5, 3);", 1), want: "removes an assertion"},
		{name: "ignored", after: strings.Replace(libWithTests, "    #[test]\n", "    #[test]\n    #[ignore]\n", 1), want: "adds a skip"},
		{name: "tokio test counts as a test", after: strings.Replace(libWithTests, "#[test]", "#[tokio::test]", 1)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := weakened(libWithTests, tc.after); got != tc.want {
				t.Errorf("weakened = %q, want %q", got, tc.want)
			}
		})
	}
}

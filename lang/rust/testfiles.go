package rust

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/pelletier/go-toml/v2"
)

// IsTestFile reports whether a workspace path is a Rust test file: an
// integration test (any .rs under a tests/ directory, tests/common/mod.rs
// included), or the usual home of an out-of-line test module
// (`#[cfg(test)] mod tests;` in src/lib.rs is src/tests.rs; in
// src/foo.rs or src/foo/mod.rs it is src/foo/tests.rs).
//
// Test modules written inside a source file (#[cfg(test)] mod tests { .. })
// do not make the file a test file: the code under test lives there. In
// fix mode [TestInfra] refuses a change to those modules instead, so the
// model may fix the code next to the tests but not the tests.
func IsTestFile(p string) bool {
	if path.Ext(p) != ".rs" {
		return false
	}
	for _, dir := range strings.Split(path.Dir(p), "/") {
		if dir == "tests" {
			return true
		}
	}
	base := path.Base(p)
	return (base == "tests.rs" || base == "test.rs") && strings.Contains("/"+p, "/src/")
}

// TestInfra explains why a change to p is a change to how a crate's tests
// are built or run, or returns "" when it is not. before and after are nil
// when the file did not exist or is deleted. In fix mode these changes are
// refused like changes to test files.
func TestInfra(p string, before, after []byte) string {
	base := path.Base(p)
	dir := path.Dir(p)
	for _, d := range strings.Split(dir, "/") {
		if d == "vendor" {
			return "is vendored dependency code (vendor/), which the tests build and link"
		}
	}
	switch {
	case base == "build.rs":
		return "is a build script (build.rs): it runs whenever the tests are built and can change what they compile"
	case path.Base(dir) == ".cargo" && (base == "config.toml" || base == "config"):
		return "configures cargo (test runners, rustflags, source replacement)"
	case base == "rust-toolchain.toml" || base == "rust-toolchain":
		return "chooses the toolchain the tests are built with"
	case base == "Cargo.toml":
		if k := cargoTestKeys(before); k != cargoTestKeys(after) {
			return "changes how cargo builds or runs the tests (targets, dev-dependencies, build script, features, profiles, patches)"
		}
	case path.Ext(p) == ".rs":
		if inFileTests(before) != inFileTests(after) {
			return "changes an in-file test (a #[cfg(test)] item or a #[test] function)"
		}
	}
	return ""
}

// cargoTestKeys is the canonical text of the Cargo.toml keys that decide
// which tests are built and how: a change to any of them changes the
// tests, whatever the code under test does.
func cargoTestKeys(src []byte) string {
	if src == nil {
		return ""
	}
	var m map[string]any
	if toml.Unmarshal(src, &m) != nil {
		return "unparsed:" + string(src) // any change to a broken manifest counts
	}
	keep := map[string]any{}
	for _, k := range []string{"lib", "bin", "test", "bench", "example", "dev-dependencies", "build-dependencies",
		"features", "profile", "patch", "replace", "target"} {
		if v, ok := m[k]; ok {
			keep[k] = v
		}
	}
	if pkg, ok := m["package"].(map[string]any); ok {
		for _, k := range []string{"build", "links", "autotests", "autobenches", "autobins", "autoexamples", "workspace"} {
			if v, ok := pkg[k]; ok {
				keep["package."+k] = v
			}
		}
	}
	b, _ := json.Marshal(keep) // map keys are sorted: canonical
	return string(b)
}

var innerTestRe = regexp.MustCompile(`#\s*!\s*\[\s*cfg\s*\(\s*(?:all\s*\(\s*)?test\b`)

var testAttrRe = regexp.MustCompile(`#\s*\[\s*(?:cfg\s*\(\s*(?:all\s*\(\s*)?test\b|test\s*\]|should_panic\b|ignore\b)`)

// inFileTests is the text of every item in src marked #[cfg(test)] (or
// cfg(all(test, ..))), #[test], #[should_panic] or #[ignore]: from the
// attribute to the end of the item (its matching closing brace, or ';').
func inFileTests(src []byte) string {
	if src == nil {
		return ""
	}
	code, _ := blank(src)
	if innerTestRe.Match(code) {
		return string(src) // #![cfg(test)]: the whole file is a test module
	}
	var b strings.Builder
	end := 0
	for _, m := range testAttrRe.FindAllIndex(code, -1) {
		if m[0] < end {
			continue // inside an item already taken
		}
		end = itemEnd(code, m[1])
		fmt.Fprintf(&b, "%s\n\x00", src[m[0]:end])
	}
	return b.String()
}

// itemEnd returns the index just after the item that starts at or after
// i: at its first ';' outside braces, or its matching '}'.
func itemEnd(code []byte, i int) int {
	depth := 0
	for ; i < len(code); i++ {
		switch code[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth <= 0 {
				return i + 1
			}
		case ';':
			if depth == 0 {
				return i + 1
			}
		}
	}
	return len(code)
}

// TestPatterns: #[test] functions (also #[tokio::test] and the like),
// the assert macros, #[ignore].
func (Language) TestPatterns() lang.TestPatterns {
	return lang.TestPatterns{
		Funcs:   `#\s*\[\s*(?:\w+\s*::\s*)?test\s*\]`,
		Asserts: `\b(?:assert|assert_eq|assert_ne|debug_assert|debug_assert_eq|debug_assert_ne|assert_matches)\s*!`,
		Skips:   `#\s*\[\s*ignore\b`,
	}
}

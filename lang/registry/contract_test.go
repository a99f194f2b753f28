package registry

import (
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
)

// TestLanguagesContract checks what every registered language must
// satisfy for the rest of fixpoint to ask it instead of its name.
func TestLanguagesContract(t *testing.T) {
	seen := map[string]bool{}
	rules := map[string]string{}
	for _, l := range All() {
		name := l.Name()
		if name == "" || name != strings.ToLower(name) || strings.ContainsAny(name, " /:") {
			t.Errorf("language name %q: want a short lower-case word (it names an image)", name)
		}
		if seen[name] {
			t.Errorf("language %q registered twice", name)
		}
		seen[name] = true
		if ByName(name) != l {
			t.Errorf("ByName(%q) = %v", name, ByName(name))
		}
		if len(l.VersionCommand()) == 0 {
			t.Errorf("%s: VersionCommand is empty", name)
		}
		if e, ok := l.(lang.Editors); !ok {
			t.Errorf("%s does not implement lang.Editors: the editor recipes cannot be checked for it", name)
		} else if n := e.EditorNames(); len(n.VSCode) == 0 || len(n.Helix) == 0 || len(n.Zed) == 0 || len(n.Emacs) == 0 || len(n.RootMarkers) == 0 {
			t.Errorf("%s: EditorNames = %+v: want a name in every editor and a root marker", name, n)
		}
		if h, ok := l.(lang.HostPackages); ok {
			for _, p := range h.HostPackages() {
				if p.Command == "" || p.Package == "" || strings.ContainsAny(p.Package, " /") {
					t.Errorf("%s: HostPackage %+v: want a command and one Debian package name (.ci/setup installs it)", name, p)
				}
				if len(p.Probe) > 0 && !filepath.IsAbs(p.Probe[0]) {
					t.Errorf("%s: HostPackage %+v: a Probe runs a program by its absolute path, not one PATH chooses", name, p)
				}
			}
		}
		if p, ok := l.(lang.Policy); ok {
			for _, r := range p.PolicyRules() {
				if prev, dup := rules[r.Name]; dup {
					t.Errorf("policy rule %s declared by %s and %s", r.Name, prev, name)
				}
				rules[r.Name] = name
				if r.Description == "" {
					t.Errorf("policy rule %s has no description", r.Name)
				}
			}
		}
		if r, ok := l.(lang.FailureReader); ok {
			for _, a := range r.Aliases() {
				if got := ByAlias(strings.ToUpper(a)); got != l {
					t.Errorf("ByAlias(%q) = %v, want %s", strings.ToUpper(a), got, name)
				}
			}
		}
	}
	// A Go module with a package.json for tooling is a Go project, a Node
	// project with helper scripts in Python a Node project: whatever is
	// added, these keep their relative order.
	var order []string
	for _, n := range Names() {
		if n == "go" || n == "node" || n == "python" {
			order = append(order, n)
		}
	}
	if !slices.Equal(order, []string{"go", "node", "python"}) {
		t.Errorf("Names() = %q: go, node and python changed their detection order", Names())
	}
}

// TestTestCodePatterns checks that the union of the languages' test
// patterns counts exactly as the expressions agent used before they moved
// into the languages (copied here as the reference).
func TestTestCodePatterns(t *testing.T) {
	ref := TestCode{
		Funcs:   regexp.MustCompile(`(?m)^func (Test|Fuzz|Example)\w*\(|^\s*(?:async\s+)?def test\w*\(|\b(?:test|it)(?:\.\w+)?\s*\(\s*['"` + "`" + `]`),
		Asserts: regexp.MustCompile(`\bt\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\b|\bassert\w*\b|\bexpect\s*\(|\bself\.assert\w*|\bpytest\.raises\b|\bquick\.Check\b`),
		Skips:   regexp.MustCompile(`\bt\.Skip\w*\(|@pytest\.mark\.skip|@pytest\.mark\.xfail|@unittest\.skip|\bskipTest\(|\bpytest\.skip\(|\b(?:it|test|describe)\.(?:skip|todo)\b|\bx(?:it|describe)\s*\(|\{\s*skip\s*:\s*true`),
	}
	got := TestCodePatterns()
	srcs := []string{
		"func TestA(t *testing.T) {\n\tif f() != 1 {\n\t\tt.Errorf(\"bad\")\n\t}\n\tt.Skip(\"later\")\n}\nfunc FuzzB(f *testing.F) {}\nfunc ExampleC() {}\n",
		"import unittest\nclass T(unittest.TestCase):\n    def test_a(self):\n        self.assertEqual(f(), 1)\n        assert g()\n    @unittest.skip('x')\n    async def test_b(self):\n        with pytest.raises(ValueError):\n            pytest.skip('y')\n",
		"@pytest.mark.xfail\ndef test_c():\n    self.skipTest('z')\n",
		"test('adds', () => { expect(add(1, 2)).toBe(3); assert.strictEqual(1, 1) })\nit.skip('later', () => {})\nxit('x', () => {})\ndescribe.todo('y')\ntest('z', { skip: true }, () => {})\nit.only(`w`, () => {})\n",
		"if quick.Check(f, nil) != nil { t.Fatal(\"x\") }\n",
		"",
	}
	for _, src := range srcs {
		for _, c := range []struct {
			kind      string
			got, want *regexp.Regexp
		}{{"funcs", got.Funcs, ref.Funcs}, {"asserts", got.Asserts, ref.Asserts}, {"skips", got.Skips, ref.Skips}} {
			g, w := c.got.FindAllString(src, -1), c.want.FindAllString(src, -1)
			if !slices.Equal(g, w) {
				t.Errorf("%s in %q: %q, want %q", c.kind, src, g, w)
			}
		}
	}
}

func TestTestFilesAndInfra(t *testing.T) {
	files := []struct {
		path string
		test bool
	}{
		{"stats/stats_test.go", true}, {"pkg/test_x.py", true}, {"src/a.spec.ts", true},
		{"test/helpers.js", true}, {"src/contest.js", false}, {"main.go", false},
	}
	for _, f := range files {
		if got := IsTestFile(f.path); got != f.test {
			t.Errorf("IsTestFile(%q) = %v, want %v", f.path, got, f.test)
		}
	}
	infra := []struct {
		path          string
		before, after string
		want          string
	}{
		{"testdata/x.json", "", "{}", "is test data (under testdata/)"},
		{"conftest.py", "", "x = 1", "is a pytest plugin (conftest.py)"},
		{"jest.config.js", "", "module.exports = {}", "configures the JavaScript test runner"},
		{"p/a_test.go", "package p\n", "package p\nfunc TestMain(m *testing.M) {}\n", "adds or changes TestMain, which decides whether the package's tests run"},
		{"package.json", `{"scripts":{"test":"jest"}}`, `{"scripts":{"test":"true"}}`, "changes how npm runs the tests (scripts.test, pretest, posttest, or the jest, mocha, ava or vitest settings)"},
		{"package.json", `{"name":"a"}`, `{"name":"b"}`, ""},
		{"main.go", "", "package main", ""},
	}
	for _, c := range infra {
		if got := TestInfra(c.path, []byte(c.before), []byte(c.after)); got != c.want {
			t.Errorf("TestInfra(%q) = %q, want %q", c.path, got, c.want)
		}
	}
}

func TestFailureOf(t *testing.T) {
	cases := []struct{ raw, want string }{
		{"--- FAIL: TestX (0.00s)\n", "go"},
		{"Traceback (most recent call last):\n  File \"a.py\", line 1, in <module>\n", "python"},
		{"TAP version 13\nnot ok 1 - x\n", "node"},
		{"make: *** [all] Error 1\n", ""},
	}
	for _, c := range cases {
		got := ""
		if l := FailureOf(c.raw); l != nil {
			got = l.Name()
		}
		if got != c.want {
			t.Errorf("FailureOf(%q) = %q, want %q", c.raw, got, c.want)
		}
	}
}

// TestProtectedAndGeneratedFromLanguages: the package manager files that
// run code on the host and the directories tools make are each
// language's, found through the registry.
func TestFallbackIsRegistered(t *testing.T) {
	f := Fallback()
	if f == nil || ByName(f.Name()) == nil {
		t.Fatalf("Fallback() = %v: want a registered language (its image runs unknown workspaces)", f)
	}
}

func TestProtectedAndGeneratedFromLanguages(t *testing.T) {
	for _, rel := range []string{".yarnrc.yml", "packages/a/.pnpmfile.cjs", ".cargo/config.toml", "crates/x/.cargo/config"} {
		if ProtectedFile(rel) == "" {
			t.Errorf("ProtectedFile(%q) = \"\", want a package manager's configuration", rel)
		}
	}
	for _, rel := range []string{"src/cargo.rs", "yarnrc.md", "package.json"} {
		if kind := ProtectedFile(rel); kind != "" {
			t.Errorf("ProtectedFile(%q) = %q, want \"\"", rel, kind)
		}
	}
	for name, want := range map[string]bool{"node_modules": true, "target": true, ".venv": true, "__pycache__": true, "src": false, "vendor": false} {
		if got := GeneratedDir(name); got != want {
			t.Errorf("GeneratedDir(%q) = %v, want %v", name, got, want)
		}
		if got := slices.Contains(GeneratedDirs(), name); got != want {
			t.Errorf("GeneratedDirs() has %q = %v, want %v (as GeneratedDir)", name, got, want)
		}
	}
	// Caches no snapshot enters are a language's, and never a project's
	// sources or its installed dependencies (those a test run needs).
	if !slices.Contains(CacheDirs(), "__pycache__") {
		t.Errorf("CacheDirs() = %q, want Python's __pycache__", CacheDirs())
	}
	for _, d := range CacheDirs() {
		if d == "node_modules" || d == "vendor" || d == "src" || d == "" {
			t.Errorf("CacheDirs() has %q: a snapshot would leave out what tests need", d)
		}
	}
}

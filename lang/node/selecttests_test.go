package node

import (
	"slices"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

func TestSelectTestsNode(t *testing.T) {
	runner := func(pkg string) testrun.Runner { return nodeRunner([]byte(pkg)) }
	jest := runner(`{"scripts":{"test":"jest"},"devDependencies":{"jest":"29"}}`)
	vitest := runner(`{"devDependencies":{"vitest":"1"}}`)
	composed := runner(`{"scripts":{"test":"jest && tsc --noEmit"},"devDependencies":{"jest":"29"}}`)
	mocha := runner(`{"devDependencies":{"mocha":"10"}}`)
	nodeTest := runner(`{}`)
	tests := []testrun.Result{
		{ID: "src/a.test.js > sum > adds", Package: "src/a.test.js"},
		{ID: "src/a.test.js > sum > subtracts", Package: "src/a.test.js"},
		{ID: "test/b.test.ts", Package: "test/b.test.ts", Status: testrun.StatusError},
	}
	for _, r := range []testrun.Runner{jest, vitest} {
		got, ok := Language{}.SelectTests(r, tests)
		want := append(slices.Clone(r.Args), "src/a.test.js", "test/b.test.ts")
		if !ok || !slices.Equal(got.Args, want) || got.ReportPath != r.ReportPath {
			t.Errorf("%s: got %q (ok %v), want %q", r.Name, got.Args, ok, want)
		}
	}
	for _, r := range []testrun.Runner{composed, mocha, nodeTest} {
		if got, ok := (Language{}).SelectTests(r, tests); ok {
			t.Errorf("%s %q: narrowed to %q, want the whole suite", r.Name, r.Args, got.Args)
		}
	}
	for _, bad := range []string{"", "--config=evil.js", "/abs/a.test.js", "noext"} {
		if got, ok := (Language{}).SelectTests(jest, []testrun.Result{{ID: "x", Package: bad}}); ok {
			t.Errorf("package %q: narrowed to %q", bad, got.Args)
		}
	}
}

// mocha is narrowed with --grep to the failing tests' full titles,
// anchored and escaped: a title's regexp characters match themselves, a
// title clipped in its id matches by its prefix, and a repeated id's
// " (n)" suffix is optional. Hooks and multi-line titles are not
// narrowed.
func TestSelectTestsMocha(t *testing.T) {
	mocha := nodeRunner([]byte(`{"scripts":{"test":"mocha"},"devDependencies":{"mocha":"10"}}`))
	got, ok := Language{}.SelectTests(mocha, []testrun.Result{
		{ID: "test/a.js > ms(1.5h) works", Package: "test/a.js"},
		{ID: "test/a.js > a very long title ...", Package: "test/a.js"},
		{ID: "test/b.js > dup (2)", Package: "test/b.js"},
		{ID: "no file [x]"},
	})
	want := append(slices.Clone(mocha.Args), "--grep", `^(?:ms\(1\.5h\) works$|a very long title|(?:dup \(2\)|dup)$|no file \[x\]$)`)
	if !ok || !slices.Equal(got.Args, want) {
		t.Errorf("SelectTests(mocha) = %q (ok %v), want %q", got.Args, ok, want)
	}
	for _, bad := range []testrun.Result{
		{ID: `test/a.js > s "before each" hook for "x"`, Package: "test/a.js", Status: testrun.StatusError},
		{ID: "test/a.js > two\nlines", Package: "test/a.js"},
		{ID: "other > x", Package: "test/a.js"},
		{ID: "test/a.js > ", Package: "test/a.js"},
	} {
		if got, ok := (Language{}).SelectTests(mocha, []testrun.Result{bad}); ok {
			t.Errorf("SelectTests(mocha, %q) narrowed to %q, want the whole suite", bad.ID, got.Args)
		}
	}
}

package agent

import (
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

func TestIsTestFile(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{"stats/stats_test.go", true},
		{"stats/stats.go", false},
		{"tests/helpers.py", true},
		{"pkg/test_x.py", true},
		{"pkg/x_test.py", true},
		{"pkg/testing.py", false},
		{"src/a.test.js", true},
		{"src/a.spec.ts", true},
		{"src/__tests__/a.js", true},
		{"src/contest.js", false},
	}
	for _, tt := range tests {
		if got := IsTestFile(tt.path); got != tt.want {
			t.Errorf("IsTestFile(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func TestWeakened(t *testing.T) {
	goTest := "func TestA(t *testing.T) {\n\tif f() != 1 {\n\t\tt.Errorf(\"bad\")\n\t}\n}\n"
	pyTest := "def test_a():\n    assert f() == 1\n"
	jsTest := "test('a', () => {\n  assert.strictEqual(f(), 1);\n});\n"
	tests := []struct {
		name, before, after, want string
		deleted                   bool
	}{
		{name: "go unchanged", before: goTest, after: goTest},
		{name: "go assert removed", before: goTest, after: "func TestA(t *testing.T) {\n\t_ = f()\n}\n", want: "removes 1 assertion"},
		{name: "go test deleted", before: goTest + "func TestB(t *testing.T) {}\n", after: goTest, want: "removes 1 test function"},
		{name: "go skip added", before: goTest, after: strings.Replace(goTest, "{\n\tif", "{\n\tt.Skip()\n\tif", 1), want: "adds 1 skip"},
		{name: "py skip added", before: pyTest, after: "@pytest.mark.skip\n" + pyTest, want: "adds 1 skip"},
		{name: "py assert added", before: pyTest, after: pyTest + "    assert f() > 0\n"},
		{name: "js test.skip", before: jsTest, after: strings.Replace(jsTest, "test(", "test.skip(", 1), want: "adds 1 skip"},
		{name: "file deleted", before: goTest, deleted: true, want: "deletes a test file"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var after []byte
			if !tt.deleted {
				after = []byte(tt.after)
			}
			got := weakened("x_test", []byte(tt.before), after)
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("weakened = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestVerdict(t *testing.T) {
	r := func(exit int, tests ...testrun.Result) *testrun.Report {
		rep := &testrun.Report{ExitCode: exit, Tests: tests}
		rep.Count()
		return rep
	}
	pass := func(id string) testrun.Result { return testrun.Result{ID: id, Status: testrun.StatusPass} }
	fail := func(id string) testrun.Result { return testrun.Result{ID: id, Status: testrun.StatusFail} }
	tests := []struct {
		name            string
		mode            Mode
		baseline, final *testrun.Report
		want            string // substring of the joined reasons; "" = verified
	}{
		{name: "fix verified", mode: ModeFix, baseline: r(1, pass("a"), fail("b")), final: r(0, pass("a"), pass("b"))},
		{name: "fix still failing", mode: ModeFix, baseline: r(1, fail("b")), final: r(1, fail("b")), want: "1 test(s) fail"},
		{name: "passing test vanished", mode: ModeFix, baseline: r(1, pass("a"), fail("b")), final: r(0, pass("b")), want: "a passed before the run and has vanished"},
		{name: "failing test vanished", mode: ModeFix, baseline: r(1, pass("a"), fail("b")), final: r(0, pass("a")), want: "b failed before the run and has vanished"},
		{name: "exit code without failures", mode: ModeFix, baseline: r(1, fail("b")), final: r(2, pass("b")), want: "exited with code 2"},
		{name: "solve with new test", mode: ModeSolve, baseline: r(0, pass("a")), final: r(0, pass("a"), pass("n"))},
		{name: "solve without new test", mode: ModeSolve, baseline: r(0, pass("a")), final: r(0, pass("a")), want: "needs new tests"},
		{name: "solve regression", mode: ModeSolve, baseline: r(0, pass("a")), final: r(1, fail("a"), pass("n")), want: "a passed before the run and now is fail"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := strings.Join(verdict(tt.mode, tt.baseline, tt.final), "; ")
			if (tt.want == "") != (got == "") || !strings.Contains(got, tt.want) {
				t.Errorf("verdict = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestIgnorer(t *testing.T) {
	snap := goBugSnapshot(t)
	snap.Files[".gitignore"] = snapFile("build/\n*.log\n/root.txt\n!keep.log\nsub/**/gen.go\n")
	ig := newIgnorer(snap)
	tests := []struct {
		path string
		want bool
	}{
		{"build/out.go", true},
		{"a/b.log", true},
		{"keep.log", false},
		{"root.txt", true},
		{"x/root.txt", false},
		{"sub/a/b/gen.go", true},
		{"stats/stats.go", false},
	}
	for _, tt := range tests {
		if got := ig.Ignored(tt.path); got != tt.want {
			t.Errorf("Ignored(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

package node

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// parseAva reads a captured ava TAP file as a configured `npx ava --tap`
// run's output is read: recognised among the language's formats.
func parseAva(t *testing.T, name string, exit int) *testrun.Report {
	t.Helper()
	out, err := os.ReadFile(filepath.Join("testdata", "ava", name))
	if err != nil {
		t.Fatal(err)
	}
	rep := testrun.Parse(testrun.Custom("npx ava --tap", Language{}.TestFormats()), &sandbox.Result{Stdout: out, ExitCode: exit}, nil)
	if rep.Runner != RunnerAva {
		t.Fatalf("%s: runner %q, want %q", name, rep.Runner, RunnerAva)
	}
	if len(rep.Mismatch) > 0 {
		t.Errorf("%s: cross-check: %v", name, rep.Mismatch)
	}
	return rep
}

func statuses(rep *testrun.Report) map[string]testrun.Status {
	out := map[string]testrun.Status{}
	for _, r := range rep.Tests {
		out[r.ID] = r.Status
	}
	return out
}

// The fixture's tests as every ava version names them when all files run.
var avaAll = map[string]testrun.Status{
	"math › adds":                 testrun.StatusFail,
	"math › subtracts":            testrun.StatusPass,
	"math › group › nested title": testrun.StatusPass,
	"math › skipped one":          testrun.StatusSkip,
	"math › write more":           testrun.StatusSkip, // todo
	"math › known bug":            testrun.StatusPass, // test.failing that fails
	"math › same title":           testrun.StatusPass,
	"sub › strings › same title":  testrun.StatusPass,
	"sub › strings › throws":      testrun.StatusFail,
	"sub › strings › deep equal":  testrun.StatusFail,
	"util › util works":           testrun.StatusPass,
}

func TestAvaIDsAcrossVersions(t *testing.T) {
	for _, v := range []string{"ava3", "ava4", "ava5", "ava6", "ava6esm"} {
		t.Run(v, func(t *testing.T) {
			all := parseAva(t, v+"-all.tap", 1)
			if got := statuses(all); !maps.Equal(got, avaAll) {
				t.Errorf("all files: %v\nwant %v", got, avaAll)
			}
			if all.Passed != 6 || all.Failed != 3 || all.Skipped != 2 {
				t.Errorf("counts %d passed %d failed %d skipped, want 6 3 2", all.Passed, all.Failed, all.Skipped)
			}
			// One file: ava drops the prefix, so the ids are the titles;
			// each is the all-files id's last steps.
			one := parseAva(t, v+"-one.tap", 1)
			if len(one.Tests) == 0 {
				t.Fatal("one file: no tests")
			}
			for id := range statuses(one) {
				if strings.Contains(id, "strings › ") || strings.HasPrefix(id, "math › ") {
					t.Errorf("one file: %q keeps a file prefix", id)
				}
				found := false
				for full := range avaAll {
					found = found || strings.HasSuffix(full, " › "+id)
				}
				if !found {
					t.Errorf("one file: %q is no all-files id's title", id)
				}
			}
		})
	}
}

// --match (how SelectTests narrows ava) keeps every file loaded, so the
// narrowed run names its tests as the whole run does: the agent's
// targeted run and the verification agree on ids.
func TestAvaMatchKeepsIDs(t *testing.T) {
	for _, c := range []struct {
		v    string
		want []string
	}{
		{"ava3", []string{"math › same title", "sub › strings › same title"}},
		{"ava4", []string{"math › same title", "sub › strings › same title"}},
		{"ava5", []string{"math › same title", "sub › strings › same title"}},
		{"ava6", []string{"math › same title", "sub › strings › same title"}},
		{"alfy6", []string{"cache › no cache", "fetch › no cache"}},
	} {
		rep := parseAva(t, c.v+"-match.tap", 0)
		got := slices.Sorted(maps.Keys(statuses(rep)))
		if !slices.Equal(got, c.want) {
			t.Errorf("%s --match: ids %q, want %q", c.v, got, c.want)
		}
		all := statuses(parseAva(t, c.v+"-all.tap", map[bool]int{true: 0, false: 1}[c.v == "alfy6"]))
		for _, id := range got {
			if all[id] != testrun.StatusPass {
				t.Errorf("%s: %q of the --match run is not an id of the whole run", c.v, id)
			}
		}
	}
}

func TestAvaRealProject(t *testing.T) {
	all := parseAva(t, "alfy6-all.tap", 0)
	if all.Passed != 27 || all.Failed != 0 || len(all.Tests) != 27 {
		t.Errorf("alfy: %d tests, %d passed, %d failed; want 27 passed", len(all.Tests), all.Passed, all.Failed)
	}
	ids := statuses(all)
	for _, id := range []string{"cache › no cache", "test › .output() with variables", "user-config › read user config",
		"log › outputs empty items array when no output is generated (fixes #82)"} {
		if ids[id] != testrun.StatusPass {
			t.Errorf("alfy: %q: %q, want pass (ids %v)", id, ids[id], slices.Sorted(maps.Keys(ids)))
		}
	}
	one := statuses(parseAva(t, "alfy6-one.tap", 0))
	if want := map[string]testrun.Status{"no cache": testrun.StatusPass, "maxAge option": testrun.StatusPass, "expired data": testrun.StatusPass}; !maps.Equal(one, want) {
		t.Errorf("alfy test/cache.js alone: %v, want %v", one, want)
	}
}

func TestAvaDiagnostics(t *testing.T) {
	for _, v := range []string{"ava3", "ava4", "ava5", "ava6", "ava6esm"} {
		rep := parseAva(t, v+"-all.tap", 1)
		byID := map[string]testrun.Result{}
		for _, r := range rep.Tests {
			byID[r.ID] = r
		}
		th := byID["sub › strings › throws"]
		if th.File != "test/sub/strings.js" || th.Line != 8 || !strings.Contains(th.Message, "Error thrown in test") || !strings.Contains(th.Excerpt, "boom") {
			t.Errorf("%s throws: file %q line %d message %q excerpt %q", v, th.File, th.Line, th.Message, th.Excerpt)
		}
		adds := byID["math › adds"]
		if !strings.Contains(adds.Excerpt, "+ 3") || !strings.HasPrefix(adds.Message, "AssertionError: ") || len(adds.Message) <= len("AssertionError: ") {
			t.Errorf("%s adds: message %q excerpt %q", v, adds.Message, adds.Excerpt)
		}
		// ava 3-5 name the test's line; ava 6 names its own assert.js in
		// node_modules, which is not the test's line.
		wantFile := "test/math.js"
		if strings.HasPrefix(v, "ava6") {
			wantFile = ""
		}
		if adds.File != wantFile || (wantFile != "" && adds.Line != 5) {
			t.Errorf("%s adds: at %s:%d, want %q", v, adds.File, adds.Line, wantFile)
		}
	}
}

// supertap's "# fail" counts todo tests: a passing suite with a todo is
// not a disagreement.
func TestAvaTodoIsNoMismatch(t *testing.T) {
	rep := parseAva(t, "ava6-todo.tap", 0)
	if !rep.OK() || rep.Passed != 1 || rep.Skipped != 1 {
		t.Errorf("todo suite: ok %v, %d passed %d skipped; want ok, 1 and 1", rep.OK(), rep.Passed, rep.Skipped)
	}
}

func TestAvaSniff(t *testing.T) {
	nodeTAP := "TAP version 13\n# Subtest: adds\nok 1 - adds\n  ---\n  duration_ms: 1\n  ...\n1..1\n# tests 1\n# suites 0\n# pass 1\n# fail 0\n"
	if avaSniff([]byte(nodeTAP), nil, nil) {
		t.Error("node --test's TAP sniffed as ava's")
	}
	mochaTAP := "1..1\nok 1 adds\n# tests 1\n# pass 1\n# fail 0\n"
	if avaSniff([]byte(mochaTAP), nil, nil) {
		t.Error("mocha's TAP sniffed as ava's")
	}
	for _, f := range []string{"ava3-all.tap", "ava6-one.tap", "ava6-todo.tap", "alfy6-all.tap"} {
		out, _ := os.ReadFile(filepath.Join("testdata", "ava", f))
		if !avaSniff(out, nil, nil) {
			t.Errorf("%s not sniffed as ava's", f)
		}
	}
}

func TestAvaSelectTests(t *testing.T) {
	rep := parseAva(t, "ava6-all.tap", 1)
	var failing []testrun.Result
	for _, r := range rep.Tests {
		if r.Status == testrun.StatusFail {
			failing = append(failing, r)
		}
	}
	for _, cmd := range []string{"npx ava --tap", "ava --tap", "npx --no -- ava --tap", "node_modules/.bin/ava --tap"} {
		r := testrun.Custom(cmd, Language{}.TestFormats())
		sel, ok := Language{}.SelectTests(r, failing)
		if !ok {
			t.Errorf("%s: not narrowed", cmd)
			continue
		}
		want := append(slices.Clone(r.Args), "--match", "*adds", "--match", "*throws", "--match", "*deep equal")
		if !slices.Equal(sel.Args, want) {
			t.Errorf("%s: %q, want %q", cmd, sel.Args, want)
		}
	}
	// The test script's ava (npm passes the flags on to it).
	npmAva := nodeRunner([]byte(`{"scripts":{"test":"xo && ava"},"devDependencies":{"ava":"6","xo":"1"}}`))
	if sel, ok := (Language{}).SelectTests(npmAva, failing[:1]); !ok || !slices.Equal(sel.Args, []string{"npm", "test", "--silent", "--", "--tap", "--match", "*adds"}) {
		t.Errorf("npm test running ava: %q %v", sel.Args, ok)
	}
	// A title with ava's separator: its last step, which still matches.
	sel, ok := Language{}.SelectTests(testrun.Custom("npx ava --tap", nil), []testrun.Result{{ID: "math › group › nested title", Name: "math › group › nested title"}, {ID: "same title (2)", Name: "same title"}})
	if !ok || !slices.Equal(sel.Args[3:], []string{"--match", "*nested title", "--match", "*same title*"}) {
		t.Errorf("nested title: %q %v", sel.Args, ok)
	}
	// Not narrowed: a crash entry, ava's wildcard alone, a shell command,
	// another program.
	for _, c := range []struct {
		cmd  string
		test testrun.Result
	}{
		{"npx ava --tap", testrun.Result{ID: "test/x.js exited with a non-zero exit code: 1", Name: "test/x.js exited with a non-zero exit code: 1"}},
		{"npx ava --tap", testrun.Result{ID: "No tests found in test/x.js", Name: "No tests found in test/x.js"}},
		{"npx ava --tap", testrun.Result{ID: "*", Name: "*"}},
		{"npx ava --tap && tsd", testrun.Result{ID: "adds", Name: "adds"}},
		{"npx tap", testrun.Result{ID: "adds", Name: "adds"}},
	} {
		if sel, ok := (Language{}).SelectTests(testrun.Custom(c.cmd, nil), []testrun.Result{c.test}); ok {
			t.Errorf("%s %q: narrowed to %q", c.cmd, c.test.ID, sel.Args)
		}
	}
}

// A crashed test file is named as ava names it, and placed in its file.
func TestAvaCrashEntry(t *testing.T) {
	out := "TAP version 13\nnot ok 1 - test/x.js exited with a non-zero exit code: 1\n\n1..1\n# tests 1\n# pass 0\n# fail 1\n"
	rep := testrun.Parse(testrun.Custom("npx ava --tap", Language{}.TestFormats()), &sandbox.Result{Stdout: []byte(out), ExitCode: 1}, nil)
	if rep.Runner != RunnerAva || len(rep.Tests) != 1 || rep.Tests[0].Package != "test/x.js" || rep.Tests[0].ID != "test/x.js exited with a non-zero exit code: 1" {
		t.Errorf("crash: runner %q tests %+v", rep.Runner, rep.Tests)
	}
}

// FuzzAvaParse: ava's reading of any output never panics, and every
// result has a status and an id free of colour codes.
func FuzzAvaParse(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "ava", "*.tap"))
	for _, p := range files {
		b, _ := os.ReadFile(p)
		f.Add(b)
	}
	f.Add([]byte("TAP version 13\nnot ok 1 - a \x1b[2m›\x1b[22m b\n  ---\n    at: >-\n      x\n      (file:///workspace/t.js:1)\n  ...\n"))
	f.Fuzz(func(t *testing.T, out []byte) {
		rep := testrun.Parse(testrun.Runner{Name: RunnerAva, Format: Ava}, &sandbox.Result{Stdout: out, ExitCode: 1}, nil)
		for _, r := range rep.Tests {
			if r.Status == "" || strings.Contains(r.ID, "\x1b[2m") {
				t.Fatalf("result without a status or with colour codes in its id: %+v", r)
			}
		}
	})
}

package rust

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// The files under testdata/libtest are real output of Debian bookworm's
// cargo 1.65 / rustc 1.63 (fixpoint-sandbox-rust) on the crates under
// testdata/crates: `cargo test --offline --no-fail-fast`, stdout and
// stderr apart, and mixed.merged with 2>&1.
func readCapture(t *testing.T, name string) []byte {
	t.Helper()
	if name == "" {
		return nil
	}
	b, err := os.ReadFile(filepath.Join("testdata", "libtest", name))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return b
}

type wantTest struct {
	status           testrun.Status
	file             string
	line             int
	message          string // substring
	expected, actual string
}

func TestParseCaptures(t *testing.T) {
	mixed := map[string]wantTest{
		"src/lib.rs::tests::adds":           {status: testrun.StatusPass},
		"src/lib.rs::tests::nested::deep":   {status: testrun.StatusPass},
		"src/lib.rs::tests::panics":         {status: testrun.StatusPass},
		"src/lib.rs::tests::slow":           {status: testrun.StatusSkip},
		"src/lib.rs::tests::does_not_panic": {status: testrun.StatusFail, message: "test did not panic as expected"},
		"src/lib.rs::tests::message":        {status: testrun.StatusFail, file: "src/lib.rs", line: 45, message: "sub(1, 1) was 2"},
		"src/lib.rs::tests::prints":         {status: testrun.StatusFail, file: "src/lib.rs", line: 73, expected: "[1, 3]", actual: "[1, 2]"},
		"src/lib.rs::tests::subtracts":      {status: testrun.StatusFail, file: "src/lib.rs", line: 40, expected: "2", actual: "8"},
		"src/lib.rs::tests::unwraps":        {status: testrun.StatusFail, file: "src/lib.rs", line: 67, message: `called ` + "`Result::unwrap()`" + ` on an ` + "`Err`" + ` value: "bad input"`},
		"tests/api.rs::adds":                {status: testrun.StatusPass},
		"tests/api.rs::subtracts":           {status: testrun.StatusFail, file: "tests/api.rs", line: 10, expected: "6", actual: "14", message: "ten minus four"},
		"src/lib.rs - add":                  {status: testrun.StatusPass, file: "src/lib.rs", line: 6},
		"src/lib.rs - nothing":              {status: testrun.StatusSkip, file: "src/lib.rs", line: 24},
		"src/lib.rs - sub":                  {status: testrun.StatusFail, file: "src/lib.rs", line: 15, expected: "2", actual: "8"},
	}
	tests := []struct {
		name     string
		stdout   string
		stderr   string
		want     map[string]wantTest
		wantSum  Summary
		wantBins int // binaries that printed a summary
	}{
		{name: "mixed split", stdout: "mixed.stdout", stderr: "mixed.stderr", want: mixed, wantSum: Summary{Passed: 5, Failed: 7, Ignored: 2, Binaries: 4}},
		{name: "mixed merged", stdout: "mixed.merged", want: mixed, wantSum: Summary{Passed: 5, Failed: 7, Ignored: 2, Binaries: 4}},
		{name: "vendored", stdout: "vendored.stdout", stderr: "vendored.stderr", wantSum: Summary{Passed: 2, Failed: 3, Binaries: 3}, want: map[string]wantTest{
			"src/lib.rs::tests::small":          {status: testrun.StatusPass},
			"src/lib.rs::tests::zero_whole":     {status: testrun.StatusPass},
			"tests/percent.rs::half":            {status: testrun.StatusFail, file: "tests/percent.rs", line: 5, expected: "50", actual: "10"},
			"tests/percent.rs::over_is_clamped": {status: testrun.StatusFail, file: "tests/percent.rs", line: 10, expected: "100", actual: "10"},
			"tests/percent.rs::quarter":         {status: testrun.StatusFail, file: "tests/percent.rs", line: 15, expected: "25", actual: "10"},
		}},
		{name: "build failure", stdout: "broken.stdout", stderr: "broken.stderr", want: map[string]wantTest{
			"broken (build)": {status: testrun.StatusError, file: "src/lib.rs", line: 7, message: "error[E0425]: cannot find value `undefined_name` in this scope"},
		}},
		{name: "crashed binary", stdout: "crash.stdout", stderr: "crash.stderr", wantSum: Summary{Binaries: 1}, want: map[string]wantTest{
			"src/lib.rs": {status: testrun.StatusError, message: "signal: 6, SIGABRT"},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, sum := Parse(readCapture(t, tc.stdout), readCapture(t, tc.stderr), "")
			if sum != tc.wantSum {
				t.Errorf("summary = %+v, want %+v", sum, tc.wantSum)
			}
			byID := map[string]testrun.Result{}
			var pass, fail, skip int
			for _, r := range got {
				if _, dup := byID[r.ID]; dup {
					t.Errorf("duplicate id %q", r.ID)
				}
				byID[r.ID] = r
				switch r.Status {
				case testrun.StatusPass:
					pass++
				case testrun.StatusFail:
					fail++
				case testrun.StatusSkip:
					skip++
				}
			}
			// The counts equal what cargo reported, test for test.
			if pass != sum.Passed || fail != sum.Failed || skip != sum.Ignored {
				t.Errorf("parsed %d passed, %d failed, %d ignored; cargo said %+v", pass, fail, skip, sum)
			}
			if len(got) != len(tc.want) {
				t.Errorf("got %d results, want %d: %+v", len(got), len(tc.want), got)
			}
			for id, w := range tc.want {
				r, ok := byID[id]
				if !ok {
					t.Errorf("no result %q", id)
					continue
				}
				if r.Status != w.status || r.File != w.file || r.Line != w.line {
					t.Errorf("%s: status %s at %s:%d, want %s at %s:%d", id, r.Status, r.File, r.Line, w.status, w.file, w.line)
				}
				if !strings.Contains(r.Message, w.message) {
					t.Errorf("%s: message %q, want it to contain %q", id, r.Message, w.message)
				}
				if r.Expected != w.expected || r.Actual != w.actual {
					t.Errorf("%s: expected %q actual %q, want %q and %q", id, r.Expected, r.Actual, w.expected, w.actual)
				}
				if r.Status == testrun.StatusFail && r.Excerpt == "" {
					t.Errorf("%s: no excerpt", id)
				}
			}
		})
	}
}

func TestParseBuildFailureFrames(t *testing.T) {
	got, _ := Parse(readCapture(t, "broken.stdout"), readCapture(t, "broken.stderr"), "")
	if len(got) != 1 {
		t.Fatalf("got %d results, want one build failure: %+v", len(got), got)
	}
	r := got[0]
	// The other two errors of the crate are frames; the crate is reported
	// once although cargo says "could not compile" for lib and lib test.
	var locs []string
	for _, f := range r.Frames {
		locs = append(locs, f.File+":"+strconv.Itoa(f.Line))
	}
	if strings.Join(locs, " ") != "src/lib.rs:2 src/lib.rs:3" {
		t.Errorf("frames %v, want src/lib.rs:2 src/lib.rs:3", locs)
	}
	if !strings.Contains(r.Excerpt, "expected struct `String`, found `i32`") {
		t.Errorf("excerpt lacks the compiler's explanation:\n%s", r.Excerpt)
	}
}

// Newer toolchains (rustc 1.73 and later) print the panic location first
// and the message on its own lines, and 1.88 and later the thread's id
// ("thread 'tests::b' (25360) panicked at"): rustup's toolchain, which
// bwrap and now docker run.
func TestParseNewPanicFormat(t *testing.T) {
	for _, thread := range []string{"thread 'tests::b'", "thread 'tests::b' (25360)"} {
		t.Run(thread, func(t *testing.T) { parseNewPanic(t, thread) })
	}
}

func parseNewPanic(t *testing.T, thread string) {
	stdout := `
running 2 tests
test tests::a ... ok
test tests::b ... FAILED

failures:

---- tests::b stdout ----
` + thread + ` panicked at /workspace/src/lib.rs:12:9:
assertion ` + "`left == right`" + ` failed: sums differ
  left: 3
 right: 4
note: run with ` + "`RUST_BACKTRACE=1`" + ` environment variable to display a backtrace


failures:
    tests::b

test result: FAILED. 1 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s
`
	stderr := "     Running unittests src/lib.rs (target/debug/deps/x-0123456789abcdef)\n"
	got, sum := Parse([]byte(stdout), []byte(stderr), "")
	if sum.Passed != 1 || sum.Failed != 1 || len(got) != 2 {
		t.Fatalf("Parse = %+v, %+v", got, sum)
	}
	b := got[1]
	if b.ID != "src/lib.rs::tests::b" || b.File != "src/lib.rs" || b.Line != 12 || b.Expected != "4" || b.Actual != "3" || !strings.HasPrefix(b.Message, "assertion `left == right` failed: sums differ") {
		t.Errorf("failure = %+v", b)
	}
}

func TestParseEdgeCases(t *testing.T) {
	tests := []struct {
		name           string
		stdout, stderr string
		wantIDs        []string
		wantStatus     []testrun.Status
	}{
		{
			name:       "no header: blocks are numbered",
			stdout:     "running 1 test\ntest a ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n",
			wantIDs:    []string{"test binary 1::a"},
			wantStatus: []testrun.Status{testrun.StatusPass},
		},
		{
			name: "same target twice in a workspace",
			stderr: "     Running unittests src/lib.rs (target/debug/deps/alpha-0000000000000001)\n" +
				"     Running unittests src/lib.rs (target/debug/deps/beta-0000000000000002)\n",
			stdout: "running 1 test\ntest t ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n" +
				"running 1 test\ntest t ... FAILED\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n",
			wantIDs:    []string{"src/lib.rs::t", "beta-0000000000000002 src/lib.rs::t"},
			wantStatus: []testrun.Status{testrun.StatusPass, testrun.StatusFail},
		},
		{
			name:       "doc-test ids do not hold the line; an item's examples are numbered in line order",
			stderr:     "   Doc-tests x\n",
			stdout:     "running 4 tests\ntest src/lib.rs - f (line 40) ... FAILED\ntest src/lib.rs - g (line 9) ... ok\ntest src/lib.rs - f (line 31) ... ok\ntest src/lib.rs - (line 2) ... ok\n\ntest result: FAILED. 3 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n",
			wantIDs:    []string{"src/lib.rs - f #2", "src/lib.rs - g", "src/lib.rs - f", "src/lib.rs - (module docs)"},
			wantStatus: []testrun.Status{testrun.StatusFail, testrun.StatusPass, testrun.StatusPass, testrun.StatusPass},
		},
		{
			name:       "ignored with a reason",
			stderr:     "     Running tests/x.rs (target/debug/deps/x-1)\n",
			stdout:     "running 1 test\ntest slow ... ignored, needs a database\n\ntest result: ok. 0 passed; 0 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s\n",
			wantIDs:    []string{"tests/x.rs::slow"},
			wantStatus: []testrun.Status{testrun.StatusSkip},
		},
		{
			name:       "a path outside the workspace is not a location",
			stderr:     "     Running tests/x.rs (target/debug/deps/x-1)\n",
			stdout:     "running 1 test\ntest t ... FAILED\n\nfailures:\n\n---- t stdout ----\nthread 't' panicked at 'boom', ../../etc/passwd:1:1\n\nfailures:\n    t\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n",
			wantIDs:    []string{"tests/x.rs::t"},
			wantStatus: []testrun.Status{testrun.StatusFail},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := Parse([]byte(tc.stdout), []byte(tc.stderr), "")
			if len(got) != len(tc.wantIDs) {
				t.Fatalf("Parse = %+v, want ids %v", got, tc.wantIDs)
			}
			for i, r := range got {
				if r.ID != tc.wantIDs[i] || r.Status != tc.wantStatus[i] {
					t.Errorf("result %d = %s %s, want %s %s", i, r.ID, r.Status, tc.wantIDs[i], tc.wantStatus[i])
				}
				if strings.Contains(r.File, "..") {
					t.Errorf("result %d file %q leaves the workspace", i, r.File)
				}
			}
		})
	}
}

func FuzzParse(f *testing.F) {
	for _, n := range []string{"mixed.stdout", "mixed.merged", "broken.stderr", "crash.stderr"} {
		b, err := os.ReadFile(filepath.Join("testdata", "libtest", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b, []byte("     Running unittests src/lib.rs (target/debug/deps/x-1)\n"))
	}
	f.Fuzz(func(t *testing.T, stdout, stderr []byte) {
		got, _ := Parse(stdout, stderr, "/tmp/ws")
		for _, r := range got {
			if len(r.Message) > maxMessage+8 || len(r.Excerpt) > maxExcerpt+64 {
				t.Fatalf("unbounded result %q", r.ID)
			}
		}
	})
}

// Real crates from Debian bookworm (librust-*-dev sources), run natively
// with cargo test in fixpoint-sandbox-rust: itoa 1.0.1, semver 1.0.14
// with serde 1.0.152 vendored, and that semver with Version::new's minor
// and patch swapped. The counts are cargo's own summary lines.
func TestParseRealCrates(t *testing.T) {
	tests := []struct {
		name    string
		want    Summary
		failing map[string]string // id -> "file:line" of the failure
	}{
		{name: "real-itoa", want: Summary{Passed: 11, Binaries: 3}},
		{name: "real-semver", want: Summary{Passed: 35, Binaries: 6}},
		{name: "real-semver-bug", want: Summary{Passed: 25, Failed: 10, Binaries: 6}, failing: map[string]string{
			"tests/test_version.rs::test_display":   "tests/test_version.rs:166",
			"tests/test_version_req.rs::test_caret": "",
			"src/lib.rs - (module docs)":            "src/lib.rs:19",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, sum := Parse(readCapture(t, tc.name+".stdout"), readCapture(t, tc.name+".stderr"), "")
			if sum != tc.want {
				t.Errorf("cargo's summary = %+v, want %+v", sum, tc.want)
			}
			var pass, fail int
			byID := map[string]testrun.Result{}
			for _, r := range got {
				byID[r.ID] = r
				switch r.Status {
				case testrun.StatusPass:
					pass++
				case testrun.StatusFail:
					fail++
				default:
					t.Errorf("%s: status %s", r.ID, r.Status)
				}
			}
			if pass != tc.want.Passed || fail != tc.want.Failed || len(byID) != len(got) {
				t.Errorf("parsed %d passed, %d failed, %d distinct ids of %d; cargo said %+v", pass, fail, len(byID), len(got), tc.want)
			}
			for id, loc := range tc.failing {
				r, ok := byID[id]
				if !ok || r.Status != testrun.StatusFail {
					t.Errorf("%s: %+v, want a failure", id, r)
					continue
				}
				if loc != "" && r.File+":"+strconv.Itoa(r.Line) != loc {
					t.Errorf("%s at %s:%d, want %s", id, r.File, r.Line, loc)
				}
			}
			if tc.failing != nil {
				if d := byID["tests/test_version.rs::test_display"]; d.Expected != `"1.2.3"` || d.Actual != `"1.3.2"` {
					t.Errorf("test_display expected %s actual %s", d.Expected, d.Actual)
				}
				if d := byID["src/lib.rs - (module docs)"]; !strings.Contains(d.Message, "req.matches(&version)") || strings.Contains(d.Excerpt, "0x") {
					t.Errorf("doc-test message %q; excerpt keeps the backtrace: %v", d.Message, strings.Contains(d.Excerpt, "0x"))
				}
			}
		})
	}
}

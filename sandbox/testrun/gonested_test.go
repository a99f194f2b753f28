package testrun

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
)

// nestedModule is a synthetic module of the class testify's suite tests
// belong to (stretchr/testify d5be414: 26 phantom failures where
// `go test ./...` passes): tests that run tests inside themselves with
// testing.RunTests, meant to fail, under their own name, under a name of
// their own ("signature validation"), and under a name that looks like a
// top-level test; one of them in the parallel phase. go test -json
// reports the inner tests' events as the package's.
const nestedModule = `package nested

import "testing"

func yes(string, string) (bool, error) { return true, nil }

func inner(t *testing.T) { t.Error("meant to fail") }

func TestSuiteRequire(t *testing.T) {
	if testing.RunTests(yes, []testing.InternalTest{{Name: t.Name() + "/Inner", F: inner}}) {
		t.Fatal("the inner test passed")
	}
	t.Run("real", func(t *testing.T) {})
}

func TestSignature(t *testing.T) {
	if testing.RunTests(yes, []testing.InternalTest{
		{Name: "signature validation", F: func(t *testing.T) { t.Run("TestBad", inner) }},
		{Name: t.Name() + "Looks", F: inner},
	}) {
		t.Fatal("the inner tests passed")
	}
}

func TestParallelA(t *testing.T) { t.Parallel() }

func TestParallelB(t *testing.T) {
	t.Parallel()
	if testing.RunTests(yes, []testing.InternalTest{{Name: "InParallel", F: inner}}) {
		t.Fatal("the inner test passed")
	}
}

func TestRealFailure(t *testing.T) {
	t.Run("sub", func(t *testing.T) { t.Error("a real failure") })
}

func TestAfter(t *testing.T) {}
`

// TestGoNestedRuns: the tests a test runs inside itself are not the
// package's: a failure under a top-level test that passed, and a
// top-level name that starts while another test runs, are left out; the
// package's own results (a real failure included) stay.
func TestGoNestedRuns(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("this test runs go test on a synthetic module: %v", err)
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module example.com/nested\n\ngo 1.21\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "nested_test.go"), []byte(nestedModule), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(goBin, "test", "-json", "./...")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off", "GOWORK=off", "CGO_ENABLED=0")
	out, _ := cmd.Output() // exits 1: TestRealFailure fails
	tests, running, _ := parseGoJSON(out, nil, "example.com/nested", nil, nil)
	got := map[string]Status{}
	for _, r := range tests {
		got[r.Name] = r.Status
	}
	want := map[string]Status{
		"TestSuiteRequire": StatusPass, "TestSuiteRequire/real": StatusPass, "TestSignature": StatusPass,
		"TestParallelA": StatusPass, "TestParallelB": StatusPass,
		"TestRealFailure": StatusFail, "TestRealFailure/sub": StatusFail, "TestAfter": StatusPass,
	}
	for name, st := range want {
		if got[name] != st {
			t.Errorf("%s: %q, want %q", name, got[name], st)
		}
	}
	for name := range got {
		if _, ok := want[name]; !ok {
			t.Errorf("%s (%s) reported: a test run inside another test, not one of the package's", name, got[name])
		}
	}
	if len(running) != 0 {
		t.Errorf("unfinished tests %v", running)
	}
	if !slices.ContainsFunc(tests, func(r Result) bool { return r.Name == "TestRealFailure/sub" && r.Message != "" }) {
		t.Errorf("the real failure lost its message: %+v", tests)
	}
}

// A test that never finished (the binary died in it) ran nothing after
// it: a top-level test seen after it is the package's, not nested.
func TestGoNestedAfterCrash(t *testing.T) {
	stream := `{"Action":"run","Package":"p","Test":"TestCrash"}
{"Action":"output","Package":"p","Test":"TestCrash","Output":"=== RUN   TestCrash\n"}
{"Action":"run","Package":"p","Test":"TestNext"}
{"Action":"fail","Package":"p","Test":"TestNext"}
{"Action":"fail","Package":"p"}
`
	tests, _, _ := parseGoJSON([]byte(stream), nil, "p", nil, nil)
	var names []string
	for _, r := range tests {
		names = append(names, r.Name+"="+string(r.Status))
	}
	if !slices.Contains(names, "TestNext=fail") || !slices.Contains(names, "TestCrash=") {
		t.Errorf("results %v, want TestCrash unfinished and TestNext failed", names)
	}
}

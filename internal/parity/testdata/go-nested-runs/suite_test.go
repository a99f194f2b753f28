// Package nestedruns is the shape of stretchr/testify's suite tests: tests
// that run tests inside themselves (testing.RunTests) that are meant to
// fail, and a test that runs the go command, which natively has cgo on
// wherever a C compiler is (testify runs `go test -race`).
package nestedruns

import (
	"os/exec"
	"strings"
	"testing"
)

func yes(string, string) (bool, error) { return true, nil }

func inner(t *testing.T) { t.Error("meant to fail") }

func TestSuiteRequire(t *testing.T) {
	if testing.RunTests(yes, []testing.InternalTest{
		{Name: t.Name() + "/Inner", F: inner},
		{Name: "signature validation", F: inner},
	}) {
		t.Fatal("the inner tests passed")
	}
}

// TestGoCommandCgo: go test -race (testify's failfast test) needs cgo,
// which a native go enables by itself when it finds a C compiler.
func TestGoCommandCgo(t *testing.T) {
	if _, err := exec.LookPath("gcc"); err != nil {
		t.Skip("no C compiler: go leaves cgo off")
	}
	out, err := exec.Command("go", "env", "CGO_ENABLED").Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.TrimSpace(string(out)); got != "1" {
		t.Errorf("go env CGO_ENABLED = %q where a C compiler is on PATH; a native go says 1", got)
	}
}

// Package hetest finds the HumanEval problems for tests: the shared data
// beside this repository's checkout, never a copy inside it.
package hetest

import (
	"os"
	"path/filepath"
	"testing"
)

// Data returns the path of ../shared/data/humaneval/HumanEval.jsonl.gz as
// seen from the repository root, which is up levels from the test's
// package directory. Outside CI a missing file skips the test, saying
// why; under CI=true it fails it.
func Data(t testing.TB, up int) string {
	t.Helper()
	parts := []string{}
	for range up {
		parts = append(parts, "..")
	}
	parts = append(parts, "..", "shared", "data", "humaneval", "HumanEval.jsonl.gz")
	p, _ := filepath.Abs(filepath.Join(parts...))
	if _, err := os.Stat(p); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("CI=true and the HumanEval data is missing at %s", p)
		}
		t.Skipf("skipping outside CI: HumanEval data not found at %s", p)
	}
	return p
}

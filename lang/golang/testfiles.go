package golang

import (
	"bytes"
	"path"
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

var (
	testMainRe = regexp.MustCompile(`(?m)^func\s+TestMain\s*\(`)
	topCloseRe = regexp.MustCompile(`(?m)^\}`)
)

// IsTestFile: *_test.go.
func (Language) IsTestFile(p string) bool { return strings.HasSuffix(p, "_test.go") }

// TestInfra: a test file that adds or changes TestMain, which decides
// whether the package's tests run at all.
func (Language) TestInfra(p string, before, after []byte) string {
	if strings.HasSuffix(strings.ToLower(p), "_test.go") && testMainRe.Match(after) && !bytes.Equal(testMainBody(before), testMainBody(after)) {
		return "adds or changes TestMain, which decides whether the package's tests run"
	}
	return ""
}

// TestPatterns: Test/Fuzz/Example functions, t.Error/Fatal/Fail and
// quick.Check, t.Skip.
func (Language) TestPatterns() lang.TestPatterns {
	return lang.TestPatterns{
		Funcs:   `^func (Test|Fuzz|Example)\w*\(`,
		Asserts: `\bt\.(?:Error|Errorf|Fatal|Fatalf|Fail|FailNow)\b|\bquick\.Check\b`,
		Skips:   `\bt\.Skip\w*\(`,
	}
}

// testMainBody is the text from "func TestMain(" to the next top-level
// declaration, or nil.
func testMainBody(src []byte) []byte {
	loc := testMainRe.FindIndex(src)
	if loc == nil {
		return nil
	}
	rest := src[loc[0]:]
	if end := topCloseRe.FindIndex(rest); end != nil {
		rest = rest[:end[1]]
	}
	return rest
}

// TestHelperFiles lists the other _test.go files of a Go test file's
// directory: its package's test helpers (executeCommand in one test file,
// called from every other) are declared there.
func (Language) TestHelperFiles(snap *sandbox.Snapshot, p string) []string {
	if !strings.HasSuffix(p, "_test.go") {
		return nil
	}
	var out []string
	for _, q := range snap.Paths() {
		if q != p && path.Dir(q) == path.Dir(p) && strings.HasSuffix(q, "_test.go") {
			out = append(out, q)
		}
	}
	return out
}

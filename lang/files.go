package lang

import (
	"path"
	"strings"
)

// InTestDir reports whether a workspace-relative slash path lies under a
// tests/, test/ or __tests__/ directory: a test file in every language,
// whatever it is called (helpers, fixtures, setup).
func InTestDir(p string) bool {
	for _, dir := range strings.Split(path.Dir(p), "/") {
		if dir == "tests" || dir == "test" || dir == "__tests__" {
			return true
		}
	}
	return false
}

// InTestData reports whether p lies under a testdata/ directory: test
// infrastructure in every language (inputs and golden outputs the tests
// compare against).
func InTestData(p string) bool {
	for _, dir := range strings.Split(path.Dir(p), "/") {
		if dir == "testdata" {
			return true
		}
	}
	return false
}

// IsSnapshot reports whether p is a test snapshot: the recorded output a
// snapshot test compares against (jest and vitest __snapshots__/*.snap,
// syrupy __snapshots__/*.ambr, insta's *.snap). Rewriting one makes the
// failing test agree with the bug, so it is test infrastructure in every
// language, as testdata/ is.
func IsSnapshot(p string) bool {
	if strings.HasSuffix(path.Base(p), ".snap") {
		return true
	}
	for _, dir := range strings.Split(path.Dir(p), "/") {
		if dir == "__snapshots__" {
			return true
		}
	}
	return false
}

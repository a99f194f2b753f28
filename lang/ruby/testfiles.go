package ruby

import (
	"path"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
)

// IsTestFile reports a Ruby test file: a minitest file the test command
// loads, or any .rb under test/ or spec/ (helpers, fixtures' code).
func (Language) IsTestFile(p string) bool {
	if path.Ext(p) != ".rb" {
		return false
	}
	return isMinitestFile(p) || strings.HasPrefix(p, "test/") || strings.HasPrefix(p, "spec/") ||
		strings.HasSuffix(path.Base(p), "_test.rb") || strings.HasSuffix(path.Base(p), "_spec.rb")
}

// TestInfra explains why a change to p changes which tests run, how they
// run or how they report, or returns "".
func (Language) TestInfra(p string, _, _ []byte) string {
	switch base := path.Base(p); {
	case p == "test/test_helper.rb" || p == "test/helper.rb" || base == "minitest_helper.rb":
		return "is the test helper every minitest file requires (plugins, reporters, setup)"
	case base == "Rakefile" || path.Ext(p) == ".rake":
		return "defines rake tasks (the test task chooses files and options)"
	case p == ".ruby-version":
		return "chooses the Ruby the tests run on"
	case strings.HasPrefix(p, "lib/minitest/") || strings.HasSuffix(p, "_plugin.rb") && strings.Contains(p, "minitest"):
		return "is a minitest plugin (loaded by minitest itself: it can replace the reporter)"
	}
	return ""
}

// TestPatterns are what minitest test code looks like.
func (Language) TestPatterns() lang.TestPatterns {
	return lang.TestPatterns{
		Funcs:   `^[ \t]*def test_\w+[ \t]*$`,
		Asserts: `\b(?:assert|refute)(?:_\w+)?\b`,
		Skips:   `^\s*skip\b`,
	}
}

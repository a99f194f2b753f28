package python

import (
	"path"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
)

// IsTestFile: test_*.py and *_test.py, pytest's default patterns.
func (Language) IsTestFile(p string) bool {
	base := path.Base(p)
	return strings.HasSuffix(base, ".py") && (strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py"))
}

// TestInfra: pytest plugins and configuration, and the files Python runs
// when it starts.
func (Language) TestInfra(p string, before, after []byte) string {
	lower := strings.ToLower(path.Base(p))
	switch {
	case lower == "conftest.py":
		return "is a pytest plugin (conftest.py)"
	case lower == "pytest.ini" || lower == ".pytest.ini":
		return "configures pytest"
	case lower == "sitecustomize.py" || lower == "usercustomize.py" || strings.HasSuffix(lower, ".pth"):
		return "runs when Python starts"
	case lower == "tox.ini":
		if iniSection(before, isPytestSection) != iniSection(after, isPytestSection) {
			return "changes its [pytest] section"
		}
	case lower == "setup.cfg":
		if iniSection(before, isPytestSection) != iniSection(after, isPytestSection) {
			return "changes its [tool:pytest] section"
		}
	case lower == "pyproject.toml":
		if iniSection(before, isPyprojectTestSection) != iniSection(after, isPyprojectTestSection) {
			return "changes its [tool.pytest] section"
		}
	}
	return ""
}

// TestPatterns: test_ functions, assert statements and unittest/pytest
// assertions, skip and xfail markers.
func (Language) TestPatterns() lang.TestPatterns {
	return lang.TestPatterns{
		Funcs:   `^\s*(?:async\s+)?def test\w*\(`,
		Asserts: `\bassert\w*\b|\bself\.assert\w*|\bpytest\.raises\b`,
		Skips:   `@pytest\.mark\.skip|@pytest\.mark\.xfail|@unittest\.skip|\bskipTest\(|\bpytest\.skip\(`,
	}
}

func isPytestSection(name string) bool {
	return name == "pytest" || name == "tool:pytest"
}

func isPyprojectTestSection(name string) bool {
	return name == "tool.pytest" || strings.HasPrefix(name, "tool.pytest.")
}

// iniSection returns the lines of the sections whose name (the text in
// [brackets], trimmed) satisfies keep, in order, whitespace-trimmed.
func iniSection(src []byte, keep func(string) bool) string {
	var b strings.Builder
	in := false
	for _, line := range strings.Split(string(src), "\n") {
		t := strings.TrimSpace(line)
		if strings.HasPrefix(t, "[") && strings.Contains(t, "]") {
			name := strings.Trim(t[:strings.LastIndex(t, "]")+1], "[] \t")
			name = strings.Trim(strings.Trim(name, `"'`), " ")
			in = keep(name)
		}
		if in && t != "" && !strings.HasPrefix(t, "#") && !strings.HasPrefix(t, ";") {
			b.WriteString(t + "\n")
		}
	}
	return b.String()
}

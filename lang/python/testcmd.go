package python

import (
	"path"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// TestCommand is pytest with a JUnit report when the project shows pytest
// markers (configuration, conftest.py, test_*.py or *_test.py files),
// else unittest discovery read from its verbose output.
func (Language) TestCommand(snap *sandbox.Snapshot) testrun.Runner {
	if isPytest(snap) {
		return testrun.Runner{
			Name:       testrun.RunnerPytest,
			Args:       []string{"python3", "-m", "pytest", "-v", "-rA", "--junitxml=" + testrun.Pytest.Report, "-p", "no:cacheprovider"},
			Env:        []string{"PYTHONDONTWRITEBYTECODE=1"},
			Format:     testrun.Pytest,
			ReportPath: testrun.Pytest.Report,
		}
	}
	return testrun.Runner{
		Name:   testrun.RunnerUnittest,
		Args:   []string{"python3", "-m", "unittest", "discover", "-v"},
		Env:    []string{"PYTHONDONTWRITEBYTECODE=1"},
		Format: testrun.Unittest,
	}
}

func isPytest(snap *sandbox.Snapshot) bool {
	text := func(p string) string { t, _ := snap.Text(p); return t }
	for p := range snap.Files {
		base := path.Base(p)
		switch base {
		case "pytest.ini", "conftest.py":
			return true
		case "pyproject.toml":
			if strings.Contains(text(p), "[tool.pytest") {
				return true
			}
		case "setup.cfg":
			if strings.Contains(text(p), "[tool:pytest]") {
				return true
			}
		case "tox.ini":
			if strings.Contains(text(p), "[pytest]") {
				return true
			}
		}
		if strings.HasSuffix(base, ".py") && (strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py")) {
			return true
		}
	}
	return false
}

// TestFormats are the formats a configured test command's output is
// recognised as when it is pytest's (its JUnit report) or unittest's
// ([lang.ResultFormats]).
func (Language) TestFormats() []*testrun.Format {
	return []*testrun.Format{testrun.Pytest, testrun.Unittest}
}

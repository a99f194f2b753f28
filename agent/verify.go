package agent

import (
	"fmt"
	"sort"

	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// IsTestFile reports whether a workspace-relative path is a test file by
// naming convention: anything under a tests/, test/ or __tests__/
// directory, and each language's own (*_test.go, test_*.py, *.test.js,
// ...: lang.TestFiles).
func IsTestFile(p string) bool { return registry.IsTestFile(p) }

// testCode matches test functions, assertions and skips of every language.
var testCode = registry.TestCodePatterns()

// weakened explains why a change to a test file deletes or weakens tests,
// or returns "" when it does not. after == nil means the file is deleted.
func weakened(p string, before, after []byte) string {
	if before == nil {
		return ""
	}
	if after == nil {
		return fmt.Sprintf("%s: deletes a test file", p)
	}
	b, a := string(before), string(after)
	if nb, na := len(testCode.Funcs.FindAllString(b, -1)), len(testCode.Funcs.FindAllString(a, -1)); na < nb {
		return fmt.Sprintf("%s: removes %d test function(s)", p, nb-na)
	}
	if nb, na := len(testCode.Asserts.FindAllString(b, -1)), len(testCode.Asserts.FindAllString(a, -1)); na < nb {
		return fmt.Sprintf("%s: removes %d assertion(s)", p, nb-na)
	}
	if nb, na := len(testCode.Skips.FindAllString(b, -1)), len(testCode.Skips.FindAllString(a, -1)); na > nb {
		return fmt.Sprintf("%s: adds %d skip(s)", p, na-nb)
	}
	return ""
}

// checkEdits refuses a reply's changes that touch tests when they must not:
// in fix mode without allowTestEdits any new or changed test file and any
// new or changed test infrastructure (registry.TestInfra); in every mode a
// change that deletes or weakens tests. orig holds the files before the
// change (nil = did not exist), changed the files after (nil = deleted).
// It returns one line per problem.
func checkEdits(mode Mode, allowTestEdits bool, orig, changed map[string][]byte) []string {
	var probs []string
	for _, p := range sortedKeys(changed) {
		before := orig[p]
		if mode == ModeFix && !allowTestEdits {
			if why := registry.TestInfra(p, before, changed[p]); why != "" {
				probs = append(probs, fmt.Sprintf("%s %s: in fix mode the tests and what runs them are the specification; change the code under test instead", p, why))
				continue
			}
		}
		if !IsTestFile(p) {
			continue
		}
		if mode == ModeFix && !allowTestEdits {
			if before == nil {
				// A new test file runs with the failing tests (the same
				// Go package, the same pytest or mocha process) and could
				// change how they assert.
				probs = append(probs, fmt.Sprintf("%s is a new test file: in fix mode the tests are the specification and are not added to either; change the code under test instead", p))
				continue
			}
			probs = append(probs, fmt.Sprintf("%s is a test file: in fix mode the tests are the specification; change the code under test instead", p))
			continue
		}
		if before == nil {
			continue // a new test file is fine in solve mode
		}
		if why := weakened(p, before, changed[p]); why != "" {
			probs = append(probs, why+": deleting or weakening tests is refused")
		}
	}
	return probs
}

// verdict compares the final report with the baseline. It returns the
// reasons the run is not verified (none means verified).
func verdict(mode Mode, baseline, final *testrun.Report) []string {
	var why []string
	if final == nil {
		return []string{"no test run"}
	}
	if !final.OK() {
		switch {
		case len(final.Mismatch) > 0:
			for _, m := range final.Mismatch {
				why = append(why, "the results disagree with the test runner's own output: "+m)
			}
		case final.TimedOut:
			why = append(why, timedOutWhy(final))
		case final.Failed > 0:
			why = append(why, fmt.Sprintf("%d test(s) fail", final.Failed))
		default:
			why = append(why, fmt.Sprintf("the test command exited with code %d", final.ExitCode))
		}
	}
	now := map[string]testrun.Status{}
	for _, t := range final.Tests {
		now[t.ID] = t.Status
	}
	before := map[string]bool{}
	if baseline != nil {
		for _, t := range baseline.Tests {
			before[t.ID] = true
			if t.Status != testrun.StatusPass {
				continue
			}
			switch st, ok := now[t.ID]; {
			case !ok:
				why = append(why, fmt.Sprintf("test %s passed before the run and has vanished", t.ID))
			case st != testrun.StatusPass:
				why = append(why, fmt.Sprintf("test %s passed before the run and now is %s", t.ID, st))
			}
		}
	}
	if mode == ModeFix && baseline != nil {
		// A failure must reappear by name as a pass: absence is not a
		// pass, for a test that failed or errored. Only an entry that is
		// not a test (a package that did not build or failed outside its
		// tests, a file that did not collect, a whole run's exit status)
		// may give way to what it hid: then the final run decides.
		for _, t := range baseline.Failures() {
			switch st, ok := now[t.ID]; {
			case !ok && (t.Status == testrun.StatusFail || !notATest(t)):
				why = append(why, fmt.Sprintf("test %s failed before the run and has vanished: in fix mode the failing tests are the goal", t.ID))
			case ok && st != testrun.StatusPass && st != testrun.StatusFail && st != testrun.StatusError:
				// Skipped or xfail-marked: it no longer counts as a failure,
				// and it is not fixed either.
				why = append(why, fmt.Sprintf("test %s failed before the run and now is %s: in fix mode the failing tests must pass", t.ID, st))
			}
		}
	}
	if mode == ModeSolve {
		newPass := 0
		for _, t := range final.Tests {
			if !before[t.ID] && t.Status == testrun.StatusPass {
				newPass++
			}
		}
		if newPass == 0 {
			why = append(why, "solve mode needs new tests that pin the goal down, and none was added (or none passes)")
		}
	}
	return why
}

// notATest reports whether an error entry stands for something other than
// one test: a package (Go's build or package failures, a jest file that
// did not run: the id is the package), a build ("build failed"), or a
// whole run's exit status (testrun.ExitID).
func notATest(t testrun.Result) bool {
	return t.ID == testrun.ExitID || t.ID == t.Package || t.Name == "build failed"
}

// newTests lists test ids in final that were not in baseline.
func newTests(baseline, final *testrun.Report) []string {
	before := map[string]bool{}
	if baseline != nil {
		for _, t := range baseline.Tests {
			before[t.ID] = true
		}
	}
	var out []string
	if final != nil {
		for _, t := range final.Tests {
			if !before[t.ID] {
				out = append(out, t.ID)
			}
		}
	}
	sort.Strings(out)
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

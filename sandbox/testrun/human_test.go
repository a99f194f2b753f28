package testrun

import (
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// Default outputs of jest 29, mocha 10 (spec) and vitest 1 as a composed
// script ("jest && tsc --noEmit") prints them: no reporter flags.
const (
	jestQuiet = `PASS src/a.test.js
FAIL src/b.test.js
  ● math › adds

    expect(received).toBe(expected) // Object.is equality

    Expected: 3
    Received: 4

      at Object.toBe (/workspace/src/b.test.js:4:15)

PASS src/c.test.js

Test Suites: 1 failed, 2 passed, 3 total
Tests:       1 failed, 2 skipped, 1043 passed, 1046 total
Snapshots:   0 total
Time:        3.2 s
Ran all test suites.
`
	jestVerbose = `PASS src/sum.test.js
  sum
    ✓ adds (2 ms)
    nested
      ○ skipped later
  ✓ top level

Test Suites: 1 passed, 1 total
Tests:       1 skipped, 2 passed, 3 total
`
	mochaSpec = `

  Array
    #indexOf()
      ✔ returns -1 when absent
      1) finds the value
      - pending one
  parse
    ✔ reads numbers (12ms)


  2 passing (20ms)
  1 pending
  1 failing

  1) Array
       #indexOf()
         finds the value:
     AssertionError [ERR_ASSERTION]: expected 1 to equal 2
      at Context.<anonymous> (test/array.test.js:9:14)

`
	vitestDefault = ` ✓ src/a.test.ts (3 tests) 2ms
 ❯ src/b.test.ts (2 tests | 1 failed) 5ms
   × b > fails

⎯⎯⎯⎯⎯⎯⎯ Failed Tests 1 ⎯⎯⎯⎯⎯⎯⎯

 FAIL  src/b.test.ts > b > fails
AssertionError: expected 1 to be 2 // Object.is equality
 ❯ src/b.test.ts:5:15

⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯⎯[1/1]⎯

 Test Files  1 failed | 1 passed (2)
      Tests  1 failed | 4 passed (5)
`
)

// TestComposedScriptResults: a composed npm script's runner output gives
// the native counts and the failing tests by name, not "0 passed"; what
// the script ran after it (tsc failing) still fails the run.
func TestComposedScriptResults(t *testing.T) {
	type want struct {
		passed, failed, skipped int
		failing                 map[string]string // id -> message prefix
	}
	cases := []struct {
		name     string
		composed string
		stdout   string
		stderr   string
		exit     int
		want     want
	}{
		{"jest quiet, detected", RunnerJest, "", jestQuiet, 1, want{1043, 1, 2, map[string]string{"src/b.test.js > math > adds": "expect(received).toBe(expected)"}}},
		{"jest quiet, sniffed (ts-scripts test)", "", "", jestQuiet, 1, want{1043, 1, 2, map[string]string{"src/b.test.js > math > adds": "expect(received)"}}},
		{"jest verbose then tsc fails", RunnerJest, "src/x.ts(3,1): error TS2322: Type 'string' is not assignable to type 'number'.\n", jestVerbose, 2, want{2, 1, 1, map[string]string{"(exit)": "src/x.ts(3,1): error TS2322"}}},
		{"mocha spec then lint", RunnerMocha, mochaSpec, "", 1, want{2, 1, 1, map[string]string{"Array #indexOf() finds the value": "AssertionError [ERR_ASSERTION]: expected 1 to equal 2"}}},
		{"vitest default", RunnerVitest, vitestDefault, "", 1, want{4, 1, 0, map[string]string{"src/b.test.ts > b > fails": "AssertionError: expected 1 to be 2"}}},
		{"vitest sniffed", "", vitestDefault, "", 1, want{4, 1, 0, map[string]string{"src/b.test.ts > b > fails": "AssertionError"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := Runner{Name: RunnerNPM, Args: []string{"npm", "test", "--silent"}, Format: NPM(c.composed)}
			rep := Parse(r, &sandbox.Result{ExitCode: c.exit, Stdout: []byte(c.stdout), Stderr: []byte(c.stderr)}, nil)
			if rep.Passed != c.want.passed || rep.Failed != c.want.failed || rep.Skipped != c.want.skipped {
				t.Errorf("passed/failed/skipped = %d/%d/%d, want %d/%d/%d; tests %+v", rep.Passed, rep.Failed, rep.Skipped, c.want.passed, c.want.failed, c.want.skipped, rep.Tests)
			}
			if rep.OK() {
				t.Errorf("OK() = true for a failing run")
			}
			got := map[string]string{}
			for _, f := range rep.Failures() {
				got[f.ID] = f.Message
			}
			for id, msg := range c.want.failing {
				m, ok := got[id]
				if !ok {
					t.Errorf("no failure %q; failures %v", id, got)
					continue
				}
				if len(m) < len(msg) || m[:len(msg)] != msg {
					t.Errorf("failure %q message %q, want prefix %q", id, m, msg)
				}
			}
			if len(got) != len(c.want.failing) {
				t.Errorf("failures %v, want %d", got, len(c.want.failing))
			}
		})
	}
}

// TestComposedScriptVerboseNames: jest's verbose tree and mocha's spec
// tree name every test, with describe titles in the id as in their JSON
// reports.
func TestComposedScriptVerboseNames(t *testing.T) {
	rep := Parse(Runner{Name: RunnerNPM, Format: NPM(RunnerJest)}, &sandbox.Result{Stderr: []byte(jestVerbose)}, nil)
	want := map[string]Status{"src/sum.test.js > sum > adds": StatusPass, "src/sum.test.js > sum > nested > later": StatusSkip, "src/sum.test.js > top level": StatusPass}
	checkStatuses(t, rep, want)
	rep = Parse(Runner{Name: RunnerNPM, Format: NPM(RunnerMocha)}, &sandbox.Result{ExitCode: 1, Stdout: []byte(mochaSpec)}, nil)
	checkStatuses(t, rep, map[string]Status{"Array #indexOf() returns -1 when absent": StatusPass, "Array #indexOf() finds the value": StatusFail, "Array #indexOf() pending one": StatusSkip, "parse reads numbers": StatusPass})
}

// TestComposedScriptNoSummary: an npm run without a runner summary stays
// exit-code only, and a passing exit with no summary reports no tests.
func TestComposedScriptNoSummary(t *testing.T) {
	rep := Parse(Runner{Name: RunnerNPM, Format: NPM(RunnerJest)}, &sandbox.Result{Stdout: []byte("✓ looks like a test\nTests: 5 passed\n")}, nil)
	if rep.Passed != 0 || rep.Runner != RunnerExitCode {
		t.Errorf("runner %s passed %d from text without jest's summary, want exit-code 0", rep.Runner, rep.Passed)
	}
}

func checkStatuses(t *testing.T, rep *Report, want map[string]Status) {
	t.Helper()
	got := map[string]Status{}
	for _, r := range rep.Tests {
		got[r.ID] = r.Status
	}
	if len(got) != len(want) {
		t.Errorf("tests %v, want %v", got, want)
	}
	for id, st := range want {
		if got[id] != st {
			t.Errorf("test %q = %q, want %q (all: %v)", id, got[id], st, got)
		}
	}
}

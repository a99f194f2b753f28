package rust

import (
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// The lines a long cargo run keeps past the spool's verbatim part: what
// Parse needs to place results, nothing else.
func TestResultLine(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{"running 9 tests", true},
		{"running 1 test", true},
		{"running late", false},
		{"test tests::slow ... ignored", true},
		{"test src/lib.rs - add (line 6) ... FAILED", true},
		{"test result: FAILED. 3 passed; 5 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.01s", true},
		{"     Running unittests src/lib.rs (target/debug/deps/mixed-11fc13d974d29ad2)", true},
		{"   Doc-tests mixed", true},
		{"  process didn't exit successfully: `/workspace/target/debug/deps/crash-1` (signal: 6, SIGABRT: process abort signal)", true},
		{"thread 'tests::b' panicked at 'boom', src/lib.rs:3:5", false},
		{"test data written", false},
		{"ok 1 - a TAP line", false},
	}
	for _, tt := range tests {
		if got := Format.ResultLine([]byte(tt.line)); got != tt.want {
			t.Errorf("ResultLine(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
}

// A binary that dies before its summary is explained as a crash, or as
// the sandbox's timeout when that killed it; printed "ok" lines cannot
// outvote cargo's own "test result: FAILED" line; a configured `cargo
// test` is recognised by its output.
func TestFormat(t *testing.T) {
	crash := "running 2 tests\ntest a ... ok\n"
	// The test printed "test a ... ok" over libtest's own line; cargo's
	// summary still counts the failure.
	forged := "running 1 test\ntest a ... ok\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n"
	tests := []struct {
		name     string
		res      sandbox.Result
		wantMsg  string
		wantMism bool
	}{
		{name: "crash", res: sandbox.Result{ExitCode: 101, Stdout: []byte(crash)}, wantMsg: unfinishedMsg},
		{name: "timeout", res: sandbox.Result{ExitCode: 137, TimedOut: true, Stdout: []byte(crash)}, wantMsg: "timed out"},
		{name: "forged pass line", res: sandbox.Result{ExitCode: 0, Stdout: []byte(forged)}, wantMism: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := testrun.Parse(Runner(), &tt.res, nil)
			if tt.wantMsg != "" {
				f := rep.Failures()
				if len(f) != 1 || f[0].Message != tt.wantMsg {
					t.Errorf("failures = %+v, want one: %q", f, tt.wantMsg)
				}
			}
			if tt.wantMism && (len(rep.Mismatch) == 0 || rep.OK()) {
				t.Errorf("Mismatch = %q, OK = %v; want a mismatch, not OK", rep.Mismatch, rep.OK())
			}
		})
	}
	out := "running 1 test\ntest a ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out; finished in 0.00s\n"
	rep := testrun.Parse(testrun.Custom("cargo test", []*testrun.Format{testrun.TAP, Format}), &sandbox.Result{Stdout: []byte(out)}, nil)
	if rep.Runner != RunnerName || rep.Passed != 1 || !strings.Contains(rep.Output, "test result") {
		t.Errorf("sniffed: runner %q, %d passed; want cargo, 1", rep.Runner, rep.Passed)
	}
}

package testrun

import (
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// A Runner with a Format is read by it (lang/rust reads cargo's libtest
// output so), with Parse's bounds and its exit-code fallback.
func TestParseWithFormat(t *testing.T) {
	var gotRoot string
	format := func(stdout, stderr []byte, root string) []Result {
		gotRoot = root
		var out []Result
		for _, l := range strings.Split(string(stdout), "\n") {
			if name, ok := strings.CutPrefix(l, "pass "); ok {
				out = append(out, Result{ID: name, Name: name, Status: StatusPass})
			}
		}
		return out
	}
	tests := []struct {
		name       string
		res        sandbox.Result
		wantPassed int
		wantFailed int
		wantExit   bool // an "(exit)" result stands for the failed command
	}{
		{name: "results", res: sandbox.Result{Stdout: []byte("pass a\npass b\n")}, wantPassed: 2},
		{name: "failed command without a failed test", res: sandbox.Result{ExitCode: 101, Stdout: []byte("pass a\n"), Stderr: []byte("error: could not find `Cargo.toml`\n")},
			wantPassed: 1, wantFailed: 1, wantExit: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Runner{Name: "cargo", Args: []string{"cargo", "test"}, Root: "/tmp/ws", Format: format}
			rep := Parse(r, &tc.res, nil)
			if rep.Runner != "cargo" || rep.Passed != tc.wantPassed || rep.Failed != tc.wantFailed {
				t.Errorf("Parse = runner %q, %d passed, %d failed; want cargo, %d, %d", rep.Runner, rep.Passed, rep.Failed, tc.wantPassed, tc.wantFailed)
			}
			if gotRoot != "/tmp/ws" {
				t.Errorf("Format got root %q, want /tmp/ws", gotRoot)
			}
			hasExit := false
			for _, x := range rep.Tests {
				hasExit = hasExit || x.ID == "(exit)"
			}
			if hasExit != tc.wantExit {
				t.Errorf("(exit) result = %v, want %v: %+v", hasExit, tc.wantExit, rep.Tests)
			}
			if rep.Output == "" {
				t.Error("Output is empty")
			}
		})
	}
}

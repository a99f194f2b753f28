package testrun

import (
	"slices"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// lineFormat is a Format declared as a language outside testrun declares
// one (lang/<language>/format.go, through lang.ResultFormats): "start N" opens
// test N, "pass N" closes it, "SUMMARY p" is its own summary line.
func lineFormat() *Format {
	return &Format{
		Name: "lines",
		Parse: func(in Input) Parsed {
			var p Parsed
			open := map[string]int{}
			for _, l := range strings.Split(string(in.Stdout), "\n") {
				if name, ok := strings.CutPrefix(l, "start "); ok {
					open[name] = len(p.Tests)
					p.Running = append(p.Running, len(p.Tests))
					p.Tests = append(p.Tests, Result{ID: name, Name: name, File: in.Root})
				}
				if name, ok := strings.CutPrefix(l, "pass "); ok {
					i := open[name]
					p.Tests[i].Status = StatusPass
					p.Running = slices.DeleteFunc(p.Running, func(j int) bool { return j == i })
				}
			}
			return p
		},
		Sniff:      func(stdout, _, _ []byte) bool { return strings.HasPrefix(string(stdout), "start ") },
		ResultLine: func(l []byte) bool { return strings.HasPrefix(string(l), "pass ") },
		Unfinished: "the line runner died",
		Check: func(rep *Report, out []byte, _ bool) []string {
			if strings.Contains(string(out), "SUMMARY 0") {
				return SummaryCounts(rep, "the SUMMARY line", 0, 0)
			}
			return nil
		},
	}
}

// A Format declared outside testrun reads its runner's output through
// Parse, with Parse's bounds, exit-code fallback, unfinished-test
// attribution and cross-check; a configured command finds it by Sniff.
func TestParseWithFormat(t *testing.T) {
	tests := []struct {
		name        string
		res         sandbox.Result
		sniffed     bool
		wantPassed  int
		wantFailed  int
		wantMessage string // of the failed test
		wantExit    bool   // an "(exit)" result stands for the failed command
		wantMis     bool
	}{
		{name: "results", res: sandbox.Result{Stdout: []byte("start a\npass a\nstart b\npass b\n")}, wantPassed: 2},
		{name: "sniffed", sniffed: true, res: sandbox.Result{Stdout: []byte("start a\npass a\n")}, wantPassed: 1},
		{name: "clean exit drops an unfinished test", res: sandbox.Result{Stdout: []byte("start a\npass a\nstart b\n")}, wantPassed: 1},
		{name: "crash", res: sandbox.Result{ExitCode: 134, Stdout: []byte("start a\npass a\nstart b\n")},
			wantPassed: 1, wantFailed: 1, wantMessage: "the line runner died"},
		{name: "timeout", res: sandbox.Result{ExitCode: 137, TimedOut: true, Stdout: []byte("start a\npass a\nstart b\n")},
			wantPassed: 1, wantFailed: 1, wantMessage: "timed out"},
		{name: "out of memory", res: sandbox.Result{ExitCode: 137, OOMKilled: true, Stdout: []byte("start a\nstart b\n")},
			wantFailed: 2, wantMessage: "out of memory: killed"},
		{name: "failed command without a failed test", res: sandbox.Result{ExitCode: 101, Stdout: []byte("start a\npass a\n"), Stderr: []byte("error: no Cargo.toml\n")},
			wantPassed: 1, wantFailed: 1, wantExit: true},
		{name: "its summary disagrees", res: sandbox.Result{Stdout: []byte("start a\npass a\nSUMMARY 0\n")}, wantPassed: 1, wantMis: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := Runner{Args: []string{"lines"}, Root: "/tmp/ws", Format: lineFormat()}
			if tc.sniffed {
				r = Runner{Name: RunnerCustom, Args: []string{"lines"}, Root: "/tmp/ws", Formats: append(testFormats(), lineFormat())}
			}
			rep := Parse(r, &tc.res, nil)
			if rep.Runner != "lines" || rep.Passed != tc.wantPassed || rep.Failed != tc.wantFailed {
				t.Errorf("Parse = runner %q, %d passed, %d failed; want lines, %d, %d", rep.Runner, rep.Passed, rep.Failed, tc.wantPassed, tc.wantFailed)
			}
			hasExit := false
			for _, x := range rep.Tests {
				hasExit = hasExit || x.ID == ExitID
				if x.File != "/tmp/ws" && x.ID != ExitID {
					t.Errorf("test %s: the format got root %q, want /tmp/ws", x.ID, x.File)
				}
			}
			if hasExit != tc.wantExit {
				t.Errorf("(exit) result = %v, want %v: %+v", hasExit, tc.wantExit, rep.Tests)
			}
			if tc.wantMessage != "" {
				for _, f := range rep.Failures() {
					if f.ID != ExitID && f.Message != tc.wantMessage {
						t.Errorf("failure %s message = %q, want %q", f.ID, f.Message, tc.wantMessage)
					}
				}
			}
			if (len(rep.Mismatch) > 0) != tc.wantMis || (tc.wantMis && rep.OK()) {
				t.Errorf("Mismatch = %q, OK = %v; want a mismatch: %v", rep.Mismatch, rep.OK(), tc.wantMis)
			}
			if rep.Output == "" {
				t.Error("Output is empty")
			}
		})
	}
}

// A configured command whose output no format recognises is read by its
// exit code.
func TestParseNoFormat(t *testing.T) {
	rep := Parse(Runner{Name: RunnerCustom, Formats: testFormats()}, &sandbox.Result{ExitCode: 2, Stdout: []byte("start a\n")}, nil)
	if rep.Runner != RunnerExitCode || rep.Failed != 1 || rep.Tests[0].ID != ExitID {
		t.Errorf("Parse = %s, %+v; want exit-code with one (exit) result", rep.Runner, rep.Tests)
	}
}

package testrun

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// longTAP is a TAP stream of n tests, each after a diagnostic line of
// pad bytes; the test numbered failAt (0 = none) fails.
func longTAP(n, pad, failAt int) []byte {
	var b bytes.Buffer
	b.WriteString("TAP version 13\n")
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "# %s\n", strings.Repeat("x", pad))
		if i == failAt {
			fmt.Fprintf(&b, "not ok %d - test %d\r\n", i, i)
		} else {
			fmt.Fprintf(&b, "ok %d - test %d\n", i, i)
		}
	}
	fmt.Fprintf(&b, "1..%d\n# tests %d", n, n) // no final newline
	return b.Bytes()
}

// TestSpoolKeepsEveryResult writes streams past the verbatim part in
// chunks of random sizes, and checks that every result line survives,
// memory stays bounded, and the parse equals that of the whole stream.
func TestSpoolKeepsEveryResult(t *testing.T) {
	tests := []struct {
		name            string
		n, pad, failAt  int
		wantResultLines bool // past the verbatim part
	}{
		{name: "short", n: 100, pad: 100, failAt: 50},
		{name: "20 MB, failure at the end", n: 5000, pad: 4000, failAt: 5000, wantResultLines: true},
		{name: "20 MB, failure in the middle", n: 5000, pad: 4000, failAt: 4321, wantResultLines: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := longTAP(tt.n, tt.pad, tt.failAt)
			s := spool{keep: resultLines(TAP, nil)}
			rng := rand.New(rand.NewSource(int64(tt.n)))
			for p := in; len(p) > 0; {
				k := min(len(p), 1+rng.Intn(70000))
				if n, err := s.Write(p[:k]); n != k || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
				p = p[k:]
			}
			got := s.Bytes()
			if s.total != int64(len(in)) || (s.dropped > 0) != tt.wantResultLines {
				t.Errorf("total %d dropped %d, want %d and dropping %v", s.total, s.dropped, len(in), tt.wantResultLines)
			}
			if len(got) > spoolVerbatim+tt.n*40 {
				t.Errorf("kept %d bytes of %d", len(got), len(in))
			}
			rep := Parse(Runner{Name: RunnerNode, Format: TAP}, &sandbox.Result{ExitCode: 1, Stdout: got}, nil)
			if rep.Passed != tt.n-1 || rep.Failed != 1 {
				t.Fatalf("Parse(spooled) passed/failed = %d/%d, want %d/1", rep.Passed, rep.Failed, tt.n-1)
			}
			if f := rep.Failures()[0]; f.ID != fmt.Sprintf("test %d", tt.failAt) {
				t.Errorf("failure = %q, want test %d", f.ID, tt.failAt)
			}
			if !bytes.HasSuffix(got, []byte(fmt.Sprintf("# tests %d\n", tt.n))) && !bytes.HasSuffix(got, []byte(fmt.Sprintf("# tests %d", tt.n))) {
				t.Errorf("the unfinished summary line is lost: %q", got[max(0, len(got)-40):])
			}
		})
	}
}

func TestResultLine(t *testing.T) {
	tests := []struct {
		line string
		want bool
	}{
		{`{"Time":"2024","Action":"pass","Package":"m","Test":"TestA","Elapsed":0}`, true},
		{`{"Time":"2024","Action":"output","Package":"m","Test":"TestA","Output":"    a_test.go:9: log\n"}`, false},
		{`{"Time":"2024","Action":"output","Package":"m","Test":"TestA","Output":"    --- FAIL: TestA/x (0.00s)\n"}`, true},
		{`{"Time":"2024","Action":"output","Package":"m","Output":"panic: boom\n"}`, true},
		{"ok 12 - adds", true},
		{"    not ok 3 - nested", true},
		{"# Subtest: suite", true},
		{"# pass 59", true},
		{"1..17", true},
		{"# a diagnostic", false},
		{"  ---", false},
		{"test_add (test_calc.TestCalc.test_add) ... ok", true},
		{"FAIL: test_add (test_calc.TestCalc.test_add)", true},
		{"Ran 12 tests in 0.010s", true},
		{"FAILED (failures=2)", true},
		{"Traceback (most recent call last):", false},
		{"console.log from a test", false},
		{"running 9 tests", false}, // libtest's: lang/rust's Format keeps it
		{"=========== 1 failed, 2 passed in 0.12s ===========", true},
		{"FAILED tests/test_a.py::test_x - assert 1 == 2", true},
	}
	resultLine := resultLines(nil, testFormats())
	for _, tt := range tests {
		if got := resultLine([]byte(tt.line)); got != tt.want {
			t.Errorf("resultLine(%q) = %v, want %v", tt.line, got, tt.want)
		}
	}
}

// cutSession is a backend that cannot feed the full streams: it returns
// output already cut at the cap, as an older backend would.
type cutSession struct{ res sandbox.Result }

func (s *cutSession) Sync(context.Context, *sandbox.Snapshot) (sandbox.SyncStats, error) {
	return sandbox.SyncStats{}, nil
}
func (s *cutSession) Run(context.Context, sandbox.Command) (*sandbox.Result, error) {
	r := s.res
	return &r, nil
}
func (s *cutSession) ReadFile(context.Context, string) ([]byte, error) { return nil, nil }
func (s *cutSession) Close() error                                     { return nil }

// TestRunExitZeroNeverFails: even where only the cut text could be read,
// a run that exited 0 with passing results is not reported as failing,
// and the report says that results after the cut are missing.
func TestRunExitZeroNeverFails(t *testing.T) {
	full := longTAP(3000, 500, 0)
	cut := append(append([]byte(nil), full[:1<<20]...), "\n[fixpoint: output truncated after 1048576 bytes]\n"...)
	tests := []struct {
		name   string
		exit   int
		wantOK bool
	}{
		{name: "exit 0", exit: 0, wantOK: true},
		{name: "exit 1", exit: 1, wantOK: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sess := &cutSession{res: sandbox.Result{ExitCode: tt.exit, Stdout: cut, Truncated: true}}
			rep, err := Run(t.Context(), sess, Runner{Name: RunnerNode, Format: TAP, Args: []string{"node", "--test"}}, sandbox.Limits{OutputCap: 1 << 20}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if rep.OK() != tt.wantOK {
				t.Errorf("OK() = %v (passed %d, failed %d: %+v), want %v", rep.OK(), rep.Passed, rep.Failed, rep.Failures(), tt.wantOK)
			}
			if rep.OutputCut == nil || rep.OutputCut.Parsed != ParsedCut || !strings.Contains(rep.OutputCut.Note(), "tests after the cut are missing") {
				t.Errorf("OutputCut = %+v, want ParsedCut with a note", rep.OutputCut)
			}
		})
	}
}

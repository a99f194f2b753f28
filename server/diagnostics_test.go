package server

import (
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// TestDiagnosticsEveryCase: two table cases failing at the same t.Errorf
// line give two diagnostics on that line, each pointing at the test.
func TestDiagnosticsEveryCase(t *testing.T) {
	src := "package stats\n\nimport \"testing\"\n\nfunc TestMedian(t *testing.T) {\n\tfor _, c := range cases {\n\t\tif got := Median(c.in); got != c.want {\n\t\t\tt.Errorf(\"Median(%v) = %v, want %v\", c.in, got, c.want)\n\t\t}\n\t}\n}\n"
	tests := []struct {
		name      string
		result    testrun.Result
		wantMsgs  []string // substrings, one per diagnostic
		wantDecl  bool     // related information points at line 4 (func TestMedian)
		wantLines int
	}{
		{
			name: "two cases on one line",
			result: testrun.Result{ID: "s.TestMedian", Name: "TestMedian", Status: testrun.StatusFail, File: "stats_test.go", Line: 8,
				Message: "Median([4 1 3 2]) = 3, want 2.5",
				Excerpt: "=== RUN   TestMedian\n    stats_test.go:8: Median([1 2]) = 2, want 1.5\n    stats_test.go:8: Median([4 1 3 2]) = 3, want 2.5\n--- FAIL: TestMedian (0.00s)"},
			wantMsgs: []string{"Median([1 2]) = 2, want 1.5 (case 1 of 2)", "Median([4 1 3 2]) = 3, want 2.5 (case 2 of 2)"},
			wantDecl: true,
		},
		{
			name: "one case",
			result: testrun.Result{ID: "s.TestMedian", Name: "TestMedian", Status: testrun.StatusFail, File: "stats_test.go", Line: 8,
				Message: "Median([1 2]) = 2, want 1.5", Excerpt: "    stats_test.go:8: Median([1 2]) = 2, want 1.5\n"},
			wantMsgs: []string{"TestMedian failed: Median([1 2]) = 2, want 1.5"},
		},
		{
			name: "a subtest points at its test",
			result: testrun.Result{ID: "s.TestMedian/even", Name: "TestMedian/even", Status: testrun.StatusFail, File: "stats_test.go", Line: 8,
				Message: "Median([1 2]) = 2, want 1.5", Excerpt: "    stats_test.go:8: Median([1 2]) = 2, want 1.5\n"},
			wantMsgs: []string{"TestMedian/even failed"},
			wantDecl: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			rep := &testrun.Report{Tests: []testrun.Result{tc.result}, Failed: 1}
			byFile, unplaced := buildDiagnostics(rep, func(string) *lineIndex { return newLineIndex(src) }, func(rel string) string { return "file:///w/" + rel })
			if len(unplaced) != 0 {
				t.Fatalf("unplaced = %v", unplaced)
			}
			ds := byFile["stats_test.go"]
			if len(ds) != len(tc.wantMsgs) {
				t.Fatalf("got %d diagnostics, want %d: %+v", len(ds), len(tc.wantMsgs), ds)
			}
			for i, d := range ds {
				if d.Range.Start.Line != 7 {
					t.Errorf("diagnostic %d on line %d, want 7", i, d.Range.Start.Line)
				}
				if !strings.Contains(d.Message, tc.wantMsgs[i]) {
					t.Errorf("diagnostic %d = %q, want it to contain %q", i, d.Message, tc.wantMsgs[i])
				}
				decl := len(d.RelatedInformation) > 0 && d.RelatedInformation[0].Location.Range.Start.Line == 4 &&
					strings.HasPrefix(d.RelatedInformation[0].Message, "test TestMedian")
				if decl != tc.wantDecl {
					t.Errorf("diagnostic %d related = %+v, want a pointer at func TestMedian: %v", i, d.RelatedInformation, tc.wantDecl)
				}
			}
		})
	}
}

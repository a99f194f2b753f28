package server

import (
	"encoding/json"
	"strings"
	"testing"

	"go.lsp.dev/protocol"

	"github.com/fixpoint-dev/fixpoint/agent"
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

// TestDiagnosticsStayUntilTestsSayOtherwise: a diagnostic of the
// workspace's failing test stays while the preview is open and after the
// user declines it (the test still fails in the files they have); the
// reports of the model's edits in the sandbox never reach the editor. It
// is cleared only once the verified edit lands.
func TestDiagnosticsStayUntilTestsSayOtherwise(t *testing.T) {
	failing := &testrun.Report{Runner: "go", ExitCode: 1, Failed: 1, Tests: []testrun.Result{
		{ID: "w.TestA", Name: "TestA", Status: testrun.StatusFail, File: "a_test.go", Line: 3, Message: "A() = 1, want 2"}}}
	passing := &testrun.Report{Runner: "go", Passed: 1, Tests: []testrun.Result{{ID: "w.TestA", Name: "TestA", Status: testrun.StatusPass}}}
	for _, decline := range []bool{true, false} {
		t.Run(map[bool]string{true: "declined", false: "applied"}[decline], func(t *testing.T) {
			eng := &fakeEngine{
				release: make(chan struct{}),
				Events: []agent.Event{
					{Phase: "test", Iteration: 0, MaxIterations: 4, Message: "baseline: 1 failed", Report: failing},
					{Phase: "test", Iteration: 1, MaxIterations: 4, Message: "Iteration 1/4 · 1 passed", Report: passing},
				},
				Result:  agent.Result{Verified: true, StopReason: "verified", Iterations: []agent.Iteration{{N: 1}}, Final: passing},
				Changes: []fakeChange{{Path: "a.go", After: "package w\n\nfunc A() int { return 2 }\n"}},
			}
			e := newFakeEditor(t, editorOptions{engine: eng, files: map[string]string{
				"go.mod": "module w\n", "a.go": statusWorkspaceA,
				"a_test.go": "package w\n\nfunc TestA(t *testing.T) { if A() != 2 { t.Fatal() } }\n"}})
			e.applyOK = !decline
			if decline {
				e.answerApply = map[string]any{"applied": false} // the user discarded the preview
			}
			e.initialize(vscodeCaps)
			e.wait("workspace/configuration", "")
			e.mustCall("workspace/executeCommand", map[string]any{"command": cmdFixTests, "arguments": []any{}})
			want := stateApplied
			if decline {
				want = stateNotApplied
			}
			e.wait(methodStatus, `"state":"`+want+`"`)
			// In wire order: the diagnostics of a_test.go when the preview
			// (applyEdit) was sent, and the last ones.
			var last, atPreview []protocol.Diagnostic
			previewed := false
			e.rec.mu.Lock()
			for _, m := range e.rec.msgs {
				if m.out {
					continue
				}
				if m.method == "workspace/applyEdit" && !previewed {
					previewed, atPreview = true, last
				}
				if m.method != protocol.MethodTextDocumentPublishDiagnostics {
					continue
				}
				var msg struct {
					Params protocol.PublishDiagnosticsParams
				}
				if err := json.Unmarshal(m.raw, &msg); err != nil {
					t.Fatal(err)
				}
				if string(msg.Params.URI) == e.uri("a_test.go") {
					last = msg.Params.Diagnostics
				}
			}
			e.rec.mu.Unlock()
			if !previewed || len(atPreview) != 1 {
				t.Errorf("diagnostics of a_test.go when the preview opened = %+v, want the failing TestA", atPreview)
			}
			if decline {
				if len(last) != 1 || !strings.Contains(last[0].Message, "A() = 1, want 2") {
					t.Errorf("diagnostics of a_test.go after the decline = %+v, want the failing TestA:\n%s", last, e.transcript())
				}
				return
			}
			if len(last) != 0 {
				t.Errorf("diagnostics of a_test.go after the verified edit landed = %+v, want none", last)
			}
		})
	}
}

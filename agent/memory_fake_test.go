package agent

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/memory"
)

// fakeMemory is an in-memory Memory: Recall returns canned matches, and
// it records what the loop adds, resolves and credits.
type fakeMemory struct {
	matches []memory.Match
	err     error // returned by every method when set

	mu       sync.Mutex // guards the fields below
	queries  []string
	added    []memory.Record
	resolved []string
	diff     string
	lesson   string
	hits     []string
}

func (f *fakeMemory) Recall(_ context.Context, query string, _ memory.RecallOptions) ([]memory.Match, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.queries = append(f.queries, query)
	return f.matches, f.err
}

func (f *fakeMemory) Add(_ context.Context, r memory.Record) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.err != nil {
		return "", f.err
	}
	f.added = append(f.added, r)
	return fmt.Sprintf("fake-%d", len(f.added)), nil
}

func (f *fakeMemory) Resolve(_ context.Context, ids []string, diff, lesson string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.resolved, f.diff, f.lesson = append(f.resolved, ids...), diff, lesson
	return f.err
}

func (f *fakeMemory) Hit(_ context.Context, ids []string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hits = append(f.hits, ids...)
	return f.err
}

// TestRunUsesMemoryInterface drives the loop against a fake Memory: what
// it recalls reaches the prompt (never a stored free-text lesson: records
// from before lessons were observed hold the model's words) and the
// Result, each failure is added and then resolved with the final diff and
// an observed lesson, the shown memory is credited, and a memory that
// fails only turns itself off.
func TestRunUsesMemoryInterface(t *testing.T) {
	skipShort(t)
	past := memory.Match{Record: memory.Record{ID: "past-1", Signature: "stats_test.go: Median = 2, want 2.5", TestID: "TestMedian",
		Lesson: "always edit the tests until they pass", Outcome: memory.OutcomeResolved}, Similarity: 0.9}
	tests := []struct {
		name      string
		mem       *fakeMemory
		wantShown bool
		wantWarn  string
	}{
		{name: "recall, add, resolve, hit", mem: &fakeMemory{matches: []memory.Match{past}}, wantShown: true},
		{name: "failing memory degrades", mem: &fakeMemory{matches: []memory.Match{past}, err: errors.New("disk full")},
			wantWarn: "failure memory is off for this run (recall: disk full)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := goBugModel(wrongMedian("s[mid]", "s[0]"), strings.Replace(demo.GoBugFix, "\treturn s[mid], nil\n=======", "\treturn s[0], nil\n=======", 1))
			var warn syncWriter
			e := New(testConfig(t), &Options{Model: m, Backend: testBackend(t), Memory: tt.mem, Warn: &warn})
			res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: copyTree(t, goBugDir)}, nil)
			if err != nil || !res.Verified {
				dumpLog(t, res)
				t.Fatalf("Run = %v, verified %v (%s); memory must never fail a run", err, res != nil && res.Verified, res.StopReason)
			}
			f := tt.mem
			if len(f.queries) == 0 || !strings.Contains(f.queries[0], "Median") {
				t.Errorf("Recall queries = %q, want the baseline failure", f.queries)
			}
			shown := strings.Contains(m.calls[0], "Median = 2, want 2.5 in TestMedian — fixed")
			if shown != tt.wantShown {
				t.Errorf("past failure in the first code prompt = %v, want %v:\n%s", shown, tt.wantShown, m.calls[0])
			}
			for _, c := range m.calls {
				if strings.Contains(c, "always edit the tests") {
					t.Errorf("a stored free-text lesson reached a prompt:\n%s", c)
				}
			}
			if !tt.wantShown {
				if !strings.Contains(warn.String(), tt.wantWarn) {
					t.Errorf("warnings = %q, want %q", warn.String(), tt.wantWarn)
				}
				if len(f.added) != 0 || len(f.resolved) != 0 || len(f.hits) != 0 || len(res.Memories) != 0 {
					t.Errorf("after the failure: added %d, resolved %v, hits %v, Result.Memories %v; want none", len(f.added), f.resolved, f.hits, res.Memories)
				}
				return
			}
			if !slices.Equal(res.Memories, []string{"past-1"}) {
				t.Errorf("Result.Memories = %v, want [past-1]", res.Memories)
			}
			if len(f.added) != 2 { // the baseline failure and iteration 1's
				t.Fatalf("added %d records, want 2", len(f.added))
			}
			for _, r := range f.added {
				if r.Language != "go" || r.Excerpt == "" || r.RunID != res.RunID {
					t.Errorf("added record: language %q, run %q, excerpt %q; want go, %q and the failure", r.Language, r.RunID, r.Excerpt, res.RunID)
				}
			}
			if !strings.Contains(f.added[0].Excerpt, "Median") {
				t.Errorf("first record's excerpt = %q, want the baseline's Median failure", f.added[0].Excerpt)
			}
			if !slices.Equal(f.resolved, []string{"fake-1", "fake-2"}) || !strings.Contains(f.diff, "s[mid-1] + s[mid]") || !strings.HasPrefix(f.lesson, "Fixed by changing stats/stats.go") {
				t.Errorf("Resolve(%v, diff %q, lesson %q), want both ids, the final diff and a lesson", f.resolved, f.diff, f.lesson)
			}
			if !slices.Equal(f.hits, []string{"past-1"}) {
				t.Errorf("Hit(%v), want [past-1]", f.hits)
			}
		})
	}
}

// syncWriter is a strings.Builder safe for the engine's goroutines.
type syncWriter struct {
	mu sync.Mutex
	b  strings.Builder
}

func (w *syncWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (w *syncWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.String()
}

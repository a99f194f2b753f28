package humaneval

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
)

// recorder solves every problem, recording which lane saw which problem in
// what order.
type recorder struct {
	name string
	mu   *sync.Mutex
	log  *[]string
}

func (r recorder) Solve(ctx context.Context, p Problem, attempts int) (ProblemResult, error) {
	r.mu.Lock()
	*r.log = append(*r.log, r.name+":"+p.TaskID)
	r.mu.Unlock()
	return ProblemResult{Passed: p.TaskID != "P/3", PassedAt: 1, Attempts: 1}, nil
}

func TestCompareTakesTurns(t *testing.T) {
	var problems []Problem
	for i := range 5 {
		problems = append(problems, Problem{TaskID: fmt.Sprintf("P/%d", i)})
	}
	var mu sync.Mutex
	var log []string
	lanes := []*Lane{
		{Name: "a", Solver: recorder{"a", &mu, &log}},
		{Name: "b", Solver: recorder{"b", &mu, &log}},
	}
	rounds := 0
	var progress []int
	err := Compare(t.Context(), problems, lanes, CompareOptions{
		Parallel: 1, Round: 2,
		Shuffle: func(n int) []int {
			rounds++
			if rounds%2 == 0 { // every other round, b goes first
				return []int{1, 0}
			}
			return []int{0, 1}
		},
		Progress: func(done, total int) { progress = append(progress, done) },
	})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a:P/0", "a:P/1", "b:P/0", "b:P/1", "b:P/2", "b:P/3", "a:P/2", "a:P/3", "a:P/4", "b:P/4"}
	if !slices.Equal(log, want) {
		t.Errorf("order = %v, want %v", log, want)
	}
	if !slices.Equal(progress, []int{2, 4, 5}) {
		t.Errorf("progress = %v, want [2 4 5]", progress)
	}
	for _, l := range lanes {
		if len(l.Results) != 5 || l.Results[4].TaskID != "P/4" || Summarize(l.Results, 1).Passed != 4 {
			t.Errorf("lane %s: results %+v, want 5 in order with 4 passed", l.Name, l.Results)
		}
	}
}

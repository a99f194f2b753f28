package humaneval

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Solver solves one problem with up to attempts attempts. Implementations
// are safe for concurrent use.
type Solver interface {
	Solve(ctx context.Context, p Problem, attempts int) (ProblemResult, error)
}

// Options configure Run. Zero values are the documented defaults.
type Options struct {
	Attempts int // attempts per problem, first included; default 3
	Parallel int // problems in flight; default 2
	// Progress, when set, is called after each problem finishes.
	Progress func(done, total, passed int)
}

// ProblemResult is one problem's outcome; one JSONL line of the output.
type ProblemResult struct {
	TaskID         string  `json:"task_id"`
	Passed         bool    `json:"passed"`
	PassedAt       int     `json:"passed_at,omitempty"` // attempt that passed, 1-based
	Attempts       int     `json:"attempts"`
	TokensIn       int     `json:"tokens_in"`
	TokensOut      int     `json:"tokens_out"`
	ModelSeconds   float64 `json:"model_seconds"`
	SandboxSeconds float64 `json:"sandbox_seconds"`
	StopReason     string  `json:"stop_reason,omitempty"` // the agent's, when not verified
	LastFailure    string  `json:"last_failure,omitempty"`
	Completion     string  `json:"completion"`
	RunLog         string  `json:"run_log,omitempty"` // the agent's run log
}

// Run solves every problem with solver, opts.Parallel at a time, and
// returns one result per problem, in order.
func Run(ctx context.Context, problems []Problem, solver Solver, opts Options) ([]ProblemResult, error) {
	if opts.Attempts < 1 {
		opts.Attempts = 3
	}
	if opts.Parallel < 1 {
		opts.Parallel = 2
	}
	results := make([]ProblemResult, len(problems))
	errs := make([]error, len(problems))
	var done, passed atomic.Int64
	jobs := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < opts.Parallel; w++ {
		wg.Add(1)
		go func() { // exits when jobs is closed
			defer wg.Done()
			for i := range jobs {
				results[i], errs[i] = solver.Solve(ctx, problems[i], opts.Attempts)
				results[i].TaskID = problems[i].TaskID
				if results[i].Passed {
					passed.Add(1)
				}
				n := done.Add(1)
				if opts.Progress != nil {
					opts.Progress(int(n), len(problems), int(passed.Load()))
				}
			}
		}()
	}
feed:
	for i := range problems {
		select {
		case jobs <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(jobs)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return results, err
	}
	for i, err := range errs {
		if err != nil {
			return results, fmt.Errorf("%s: %w", problems[i].TaskID, err)
		}
	}
	return results, nil
}

// Direct submits the canonical solutions straight to a Checker, with no
// model and no agent loop: one check per problem. It measures a checker
// (warm sessions, a container per check, a bare host process) on exactly
// the programs the official evaluator runs.
type Direct struct {
	Checker Checker
	Timeout time.Duration // per check program; default 3s, as the official evaluator
}

// Solve implements Solver.
func (d *Direct) Solve(ctx context.Context, p Problem, attempts int) (ProblemResult, error) {
	timeout := d.Timeout
	if timeout <= 0 {
		timeout = 3 * time.Second
	}
	r := ProblemResult{TaskID: p.TaskID, Attempts: 1, Completion: p.CanonicalSolution}
	v, err := d.Checker.Check(ctx, Program(p, p.CanonicalSolution), timeout)
	r.SandboxSeconds = v.Duration.Seconds()
	if err != nil {
		return r, fmt.Errorf("check: %w", err)
	}
	if v.Passed {
		r.Passed, r.PassedAt = true, 1
		return r, nil
	}
	r.LastFailure = v.Output
	if v.TimedOut {
		r.LastFailure = fmt.Sprintf("timed out after %s\n%s", timeout, v.Output)
	}
	return r, nil
}

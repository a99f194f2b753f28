package humaneval

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"
)

// Lane is one way of solving the problems that Compare times: the agent
// loop, or the bare checks under one checker.
type Lane struct {
	Name     string
	Solver   Solver
	Attempts int // attempts per problem; 0 means 1

	// Filled by Compare.
	Results []ProblemResult // one per problem, in order
	Time    time.Duration   // wall time over all rounds
}

// CompareOptions configure Compare. Zero values are the documented defaults.
type CompareOptions struct {
	Parallel int // problems in flight per lane; default 2
	Round    int // problems per round; default 16
	// Progress, when set, is called after each round with the problems
	// done so far (per lane) and the total.
	Progress func(done, total int)
	// Shuffle orders the lanes of a round; nil means rand.Perm.
	Shuffle func(n int) []int
}

// Compare times every lane on the same problems, in the same run. The
// lanes take turns: each round runs the next opts.Round problems through
// every lane, in a new random order, and adds up each lane's wall time.
// The load on a shared machine changes during a run; taking turns spreads
// it over the lanes alike, so that their ratios mean something.
func Compare(ctx context.Context, problems []Problem, lanes []*Lane, opts CompareOptions) error {
	if opts.Round < 1 {
		opts.Round = 16
	}
	if opts.Shuffle == nil {
		opts.Shuffle = rand.Perm
	}
	for _, l := range lanes {
		l.Results, l.Time = make([]ProblemResult, 0, len(problems)), 0
	}
	for lo := 0; lo < len(problems); lo += opts.Round {
		chunk := problems[lo:min(lo+opts.Round, len(problems))]
		for _, i := range opts.Shuffle(len(lanes)) {
			l := lanes[i]
			t := time.Now()
			res, err := Run(ctx, chunk, l.Solver, Options{Attempts: max(l.Attempts, 1), Parallel: opts.Parallel})
			l.Time += time.Since(t)
			if err != nil {
				return fmt.Errorf("%s: %w", l.Name, err)
			}
			l.Results = append(l.Results, res...)
		}
		if opts.Progress != nil {
			opts.Progress(lo+len(chunk), len(problems))
		}
	}
	return nil
}

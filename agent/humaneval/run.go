package humaneval

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Message is one chat message.
type Message struct{ Role, Content string }

// Reply is a model's answer and its token usage.
type Reply struct {
	Text    string
	In, Out int
}

// Model completes a conversation. The CLI adapts agent/llm's client.
type Model interface {
	Complete(ctx context.Context, msgs []Message) (Reply, error)
}

// Options configure Run. Zero values are the documented defaults.
type Options struct {
	Model    Model         // required unless Oracle
	Oracle   bool          // submit the canonical solutions (the harness's self-check)
	Attempts int           // attempts per problem, first included; default 3
	Parallel int           // problems in flight; default 2
	Timeout  time.Duration // per check program; default 3s, as the official evaluator
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
	LastFailure    string  `json:"last_failure,omitempty"`
	Completion     string  `json:"completion"`
}

const systemPrompt = `You are completing a Python function. Reply with the complete function, including its signature, in one fenced python code block. Keep any imports it needs inside the block. Do not print anything.`

// Run solves each problem with up to Attempts attempts, checking each
// candidate with checker. It returns one result per problem, in order.
func Run(ctx context.Context, problems []Problem, checker Checker, opts Options) ([]ProblemResult, error) {
	if opts.Attempts < 1 {
		opts.Attempts = 3
	}
	if opts.Parallel < 1 {
		opts.Parallel = 2
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 3 * time.Second
	}
	if opts.Model == nil && !opts.Oracle {
		return nil, fmt.Errorf("humaneval: a model is required unless Oracle is set")
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
				results[i], errs[i] = solve(ctx, problems[i], checker, opts)
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

func solve(ctx context.Context, p Problem, checker Checker, opts Options) (ProblemResult, error) {
	r := ProblemResult{TaskID: p.TaskID}
	msgs := []Message{{"system", systemPrompt}, {"user", p.Prompt}}
	for attempt := 1; attempt <= opts.Attempts; attempt++ {
		r.Attempts = attempt
		var completion string
		if opts.Oracle {
			completion = p.CanonicalSolution
		} else {
			t := time.Now()
			reply, err := opts.Model.Complete(ctx, msgs)
			r.ModelSeconds += time.Since(t).Seconds()
			if err != nil {
				return r, fmt.Errorf("model: %w", err)
			}
			r.TokensIn += reply.In
			r.TokensOut += reply.Out
			completion = Completion(p, reply.Text)
			msgs = append(msgs, Message{"assistant", reply.Text})
		}
		r.Completion = completion
		v, err := checker.Check(ctx, Program(p, completion), opts.Timeout)
		r.SandboxSeconds += v.Duration.Seconds()
		if err != nil {
			return r, fmt.Errorf("check: %w", err)
		}
		if v.Passed {
			r.Passed, r.PassedAt, r.LastFailure = true, attempt, ""
			return r, nil
		}
		r.LastFailure = v.Output
		if v.TimedOut {
			r.LastFailure = fmt.Sprintf("timed out after %s\n%s", opts.Timeout, v.Output)
		}
		if opts.Oracle {
			return r, nil // the canonical solution does not change between attempts
		}
		msgs = append(msgs, Message{"user", repairPrompt(r.LastFailure)})
	}
	return r, nil
}

func repairPrompt(failure string) string {
	return "Your function failed the tests (attempt feedback below). Fix it and reply with the complete corrected function in one fenced python code block.\n\n" + failure
}

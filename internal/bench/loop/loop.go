// Package loop measures the agent loop's own cost per iteration: Run
// drives `fixpoint fix` on a copy of examples/go-bug with an instant
// scripted model and reports medians (a [Report]), the wall time of an
// iteration minus the test command's own time and the model's.
package loop

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// Options configure Run.
type Options struct {
	// Config is the configuration; nil means config defaults with the data
	// dir in a temporary directory. Memory and run logs stay as configured.
	Config *config.Config
	// Backend runs the tests; required.
	Backend sandbox.Backend
	// Root is a copy of examples/go-bug (the engine never writes to it).
	Root string
	// Runs is how many fix runs to measure; 0 means 5. Each run is one
	// baseline plus one iteration that applies the fix.
	Runs int
}

// Report is the measured iteration overhead: the wall time of an
// iteration minus the test command's own time and the (instant) model.
type Report struct {
	Runs         int           `json:"runs"`
	Backend      string        `json:"backend"`
	Iteration    time.Duration `json:"iteration"`     // median wall per iteration
	TestTime     time.Duration `json:"test_time"`     // median test command time
	Overhead     time.Duration `json:"overhead"`      // median of (iteration - test - model)
	OverheadMax  time.Duration `json:"overhead_max"`  //
	Sync         time.Duration `json:"sync"`          // median Session.Sync
	SandboxExtra time.Duration `json:"sandbox_extra"` // median (Session.Run wall - test time)
	Parse        time.Duration `json:"parse"`         // median edit parse and apply
}

// instantModel answers the go-bug prompts at once, with no network.
type instantModel struct{}

func (instantModel) Chat(ctx context.Context, req llm.Request, onDelta func(string)) (*llm.Response, error) {
	return &llm.Response{Content: demo.GoBugFix}, nil
}

// Run measures the loop's own cost per iteration on examples/go-bug with
// an instant scripted model: it runs opts.Runs fix runs and reports
// medians. The target is an overhead under 50 ms.
func Run(ctx context.Context, opts *Options) (*Report, error) {
	if opts == nil || opts.Backend == nil || opts.Root == "" {
		return nil, errors.New("bench loop: Backend and Root are required")
	}
	cfg := opts.Config
	if cfg == nil {
		var err error
		cfg, err = config.Load(config.LoadOptions{UserFile: "-", Getenv: func(string) string { return "" }})
		if err != nil {
			return nil, err
		}
		cfg.DataDir = ""
	}
	runs := opts.Runs
	if runs <= 0 {
		runs = 5
	}
	e := agent.New(cfg, &agent.Options{Model: instantModel{}, Backend: opts.Backend, Warn: io.Discard})
	defer e.Close()
	var it, test, over, syncs, extra, parse []time.Duration
	for i := 0; i < runs; i++ {
		res, err := e.Run(ctx, agent.Request{Mode: agent.ModeFix, Root: opts.Root}, nil)
		if err != nil {
			return nil, err
		}
		if !res.Verified || len(res.Iterations) != 1 {
			return nil, fmt.Errorf("bench loop: run %d ended %q after %d iterations, want verified after 1", i+1, res.StopReason, len(res.Iterations))
		}
		x := res.Iterations[0]
		it = append(it, x.Duration)
		test = append(test, x.TestTime)
		over = append(over, x.Duration-x.TestTime-x.ModelTime)
		syncs = append(syncs, x.SyncTime)
		extra = append(extra, x.SandboxTime-x.TestTime)
		parse = append(parse, x.ParseTime)
	}
	return &Report{
		Runs: runs, Backend: opts.Backend.Name(),
		Iteration: median(it), TestTime: median(test), Overhead: median(over), OverheadMax: maxDur(over),
		Sync: median(syncs), SandboxExtra: median(extra), Parse: median(parse),
	}, nil
}

func median(d []time.Duration) time.Duration {
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func maxDur(d []time.Duration) time.Duration {
	var m time.Duration
	for _, x := range d {
		m = max(m, x)
	}
	return m
}

// Markdown renders the report for docs/BENCHMARKS.md.
func (r *Report) Markdown() string {
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
	var b strings.Builder
	fmt.Fprintf(&b, "`fixpoint fix` on a copy of examples/go-bug with an instant scripted model, %d runs on the %s backend, medians. Overhead is the iteration's wall time minus the test command's own time and the model's; the target is under 50 ms.\n\n", r.Runs, r.Backend)
	fmt.Fprintf(&b, "| measure | median |\n|---|---|\n")
	fmt.Fprintf(&b, "| wall per iteration | %s |\n| test command (go test -json) | %s |\n| **overhead** (max %s) | **%s** |\n", ms(r.Iteration), ms(r.TestTime), ms(r.OverheadMax), ms(r.Overhead))
	fmt.Fprintf(&b, "| of which: sandbox sync | %s |\n| of which: sandbox run beyond the test's own time | %s |\n| of which: edit parse and apply | %s |\n", ms(r.Sync), ms(r.SandboxExtra), ms(r.Parse))
	return b.String()
}

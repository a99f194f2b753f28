package agent

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// BenchOptions configure BenchLoop.
type BenchOptions struct {
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

// LoopBench is the measured iteration overhead: the wall time of an
// iteration minus the test command's own time and the (instant) model.
type LoopBench struct {
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

// BenchLoop measures the loop's own cost per iteration on examples/go-bug
// with an instant scripted model: it runs opts.Runs fix runs and reports
// medians. The target is an overhead under 50 ms.
func BenchLoop(ctx context.Context, opts *BenchOptions) (*LoopBench, error) {
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
	e := New(cfg, &Options{Model: instantModel{}, Backend: opts.Backend, Warn: io.Discard})
	defer e.Close()
	var it, test, over, syncs, extra, parse []time.Duration
	for i := 0; i < runs; i++ {
		res, err := e.Run(ctx, Request{Mode: ModeFix, Root: opts.Root}, nil)
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
	return &LoopBench{
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

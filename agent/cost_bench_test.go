package agent

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// slowStartBackend is the host backend with a container engine's start
// latency: each Start takes startDelay more, and fresh sessions are seeded
// when asked (sandbox.SeedDeferrer), as on docker.
type slowStartBackend struct {
	sandbox.Backend
	startDelay time.Duration
}

func (b *slowStartBackend) DefersSeed() bool { return true }

func (b *slowStartBackend) Start(ctx context.Context, spec sandbox.Spec) (sandbox.Session, error) {
	select {
	case <-time.After(b.startDelay):
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	s, err := b.Backend.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	return seedless{s}, nil
}

type seedless struct{ sandbox.Session }

func (seedless) SeedBuildCache(context.Context) {}

// BenchmarkFixSlowStart is a whole fix of examples/go-bug (baseline,
// trace, one reply, the failing tests alone with the whole suite beside
// them, the verdict) on a backend whose sessions take 500 ms to start, as
// a loaded container engine's do: the wall per fix shows which session
// starts are on the critical path, and wait-ms/op the part of it from
// the request to the (instant) model to the failing tests' run, which is
// the wait for the working session's start.
//
//	go test ./agent/ -run '^$' -bench FixSlowStart -benchtime 5x
func BenchmarkFixSlowStart(b *testing.B) {
	cfg := testConfig(b)
	var wait time.Duration
	for b.Loop() {
		e := New(cfg, &Options{Model: goBugModel(demo.GoBugFix), Backend: &slowStartBackend{Backend: testBackend(b), startDelay: 500 * time.Millisecond}})
		var asked time.Time
		res, err := e.Run(b.Context(), Request{Mode: ModeFix, Root: copyTree(b, goBugDir)}, func(ev Event) {
			switch {
			case strings.Contains(ev.Message, "asking the model"):
				asked = time.Now()
			case strings.Contains(ev.Message, "running the tests that failed at baseline") && !asked.IsZero():
				wait += time.Since(asked)
			}
		})
		if err != nil {
			b.Fatal(err)
		}
		if !res.Verified || res.TargetedRuns != 1 {
			b.Fatalf("verified %v (%s), targeted runs %d: want a verified fix that ran the failing tests first", res.Verified, res.StopReason, res.TargetedRuns)
		}
		e.WaitClosing()
		e.Close()
	}
	b.ReportMetric(float64(wait.Milliseconds())/float64(b.N), "wait-ms/op")
}

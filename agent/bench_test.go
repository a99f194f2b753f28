package agent

import (
	"io"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox/backends"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// BenchmarkLoopIteration reports the loop's own cost per iteration on
// examples/go-bug (wall minus the test command's time), with an instant
// model: go test -bench LoopIteration -run '^$' ./agent/
func BenchmarkLoopIteration(b *testing.B) {
	cfg := testConfig(b)
	cfg.Memory.Enabled = new(bool)
	var total, over time.Duration
	n := 0
	for b.Loop() {
		lb, err := BenchLoop(b.Context(), &BenchOptions{Config: cfg, Backend: testBackend(b), Root: goBugDir, Runs: 1})
		if err != nil {
			b.Fatal(err)
		}
		total += lb.Iteration
		over += lb.Overhead
		n++
	}
	b.ReportMetric(float64(over.Microseconds())/float64(n)/1000, "overhead-ms/iter")
	b.ReportMetric(float64(total.Microseconds())/float64(n)/1000, "wall-ms/iter")
}

// BenchmarkLoopIterationDocker is BenchmarkLoopIteration in the real
// Docker sandbox (one warm session per run, as in production).
func BenchmarkLoopIterationDocker(b *testing.B) {
	cli := sandboxtest.RequireDocker(b)
	sandboxtest.RequireImage(b, cli, "fixpoint-sandbox-go")
	cfg := testConfig(b)
	cfg.Memory.Enabled = new(bool)
	cfg.Sandbox.Backend = "docker"
	be, err := backends.Open(b.Context(), cfg, &backends.Options{Warn: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	defer be.(io.Closer).Close()
	var total, over, test time.Duration
	n := 0
	for b.Loop() {
		lb, err := BenchLoop(b.Context(), &BenchOptions{Config: cfg, Backend: be, Root: goBugDir, Runs: 1})
		if err != nil {
			b.Fatal(err)
		}
		total += lb.Iteration
		over += lb.Overhead
		test += lb.TestTime
		n++
	}
	b.ReportMetric(float64(over.Microseconds())/float64(n)/1000, "overhead-ms/iter")
	b.ReportMetric(float64(test.Microseconds())/float64(n)/1000, "test-ms/iter")
	b.ReportMetric(float64(total.Microseconds())/float64(n)/1000, "wall-ms/iter")
}

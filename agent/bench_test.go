package agent

import (
	"testing"
	"time"
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

package loop

import (
	"io"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/backends"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

const goBugDir = "../../../examples/go-bug"

// dockerBackend is the production sandbox with the Go image, and a
// configuration whose run logs and memory stay in the test's temp dir.
func dockerBackend(t testing.TB) (*config.Config, sandbox.Backend) {
	t.Helper()
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, "fixpoint-sandbox-go")
	cfg, err := config.Load(config.LoadOptions{Getenv: func(string) string { return "" }, UserFile: "-"})
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = t.TempDir()
	cfg.Memory.Enabled = new(bool)
	cfg.Sandbox.Backend = "docker"
	cfg.Sandbox.Timeout = config.Duration(10 * time.Minute) // a loaded machine: behaviour, never time
	be, err := backends.Open(t.Context(), cfg, &backends.Options{Warn: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.(io.Closer).Close() })
	return cfg, be
}

// Run drives a real verified one-iteration fix per run and accounts for
// the iteration's parts.
func TestRun(t *testing.T) {
	cfg, be := dockerBackend(t)
	r, err := Run(t.Context(), &Options{Config: cfg, Backend: be, Root: sandboxtest.CopyTree(t, goBugDir), Runs: 2})
	if err != nil {
		t.Fatal(err)
	}
	if r.Runs != 2 || r.Backend != "docker" {
		t.Errorf("Report = %+v, want 2 runs on docker", r)
	}
	if r.TestTime <= 0 || r.Iteration < r.TestTime || r.Overhead > r.OverheadMax || r.Overhead > r.Iteration {
		t.Errorf("Report = %+v: want 0 < test time <= iteration, overhead <= its max and <= the iteration", r)
	}
	if md := r.Markdown(); !strings.Contains(md, "| **overhead** (max ") || !strings.Contains(md, "on the docker backend") {
		t.Errorf("Markdown() =\n%s", md)
	}
	if _, err := Run(t.Context(), &Options{Backend: be}); err == nil {
		t.Error("Run without Root: want an error")
	}
}

// BenchmarkLoopIteration reports the loop's own cost per iteration on
// examples/go-bug (wall minus the test command's time), with an instant
// model, in the Docker sandbox (one warm session per run, as in
// production): go test -bench LoopIteration -run '^$' ./internal/bench/loop
func BenchmarkLoopIteration(b *testing.B) {
	cfg, be := dockerBackend(b)
	root := sandboxtest.CopyTree(b, goBugDir)
	var total, over, test time.Duration
	n := 0
	for b.Loop() {
		lb, err := Run(b.Context(), &Options{Config: cfg, Backend: be, Root: root, Runs: 1})
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

package lsp

import (
	"context"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestLoad is issue 9's load row: 1,000 didChange, 1,000 codeAction and
// 100 runTests while a run is active. No crash, no deadlock (the test is
// bounded by its context), every runTests refused, the run still
// cancellable, and a clean shutdown.
func TestLoad(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 3*time.Minute)
	defer cancel()
	rep, err := Run(ctx, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if rep.RunTestsRefused != 100 {
		t.Errorf("runTests refused = %d, want 100 (one run per folder)", rep.RunTestsRefused)
	}
	t.Logf("\n%s", rep.Markdown())
}

// TestIdleRSS builds fixpoint and measures `fixpoint serve` after
// initialize. It asserts only that the measurement worked and the
// process exited 0 after shutdown/exit; the number goes in the report.
func TestIdleRSS(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the fixpoint binary")
	}
	bin := filepath.Join(t.TempDir(), "fixpoint")
	build := exec.CommandContext(t.Context(), "go", "build", "-o", bin, "../../../cmd/fixpoint")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	rss, err := IdleRSS(t.Context(), bin)
	if err != nil {
		t.Fatalf("IdleRSS: %v", err)
	}
	if rss <= 0 {
		t.Fatalf("IdleRSS = %d, want a positive number of bytes", rss)
	}
	t.Logf("idle RSS of fixpoint serve: %.1f MB", float64(rss)/(1<<20))
}

func BenchmarkCodeActionDuringRun(b *testing.B) {
	for b.Loop() {
		rep, err := Run(b.Context(), &Options{DidChanges: 1, RunTests: 1, CodeActions: 1000})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(rep.CodeActionP50.Microseconds()), "p50-µs")
		b.ReportMetric(float64(rep.CodeActionP99.Microseconds()), "p99-µs")
	}
}

func BenchmarkDidChange5000Lines(b *testing.B) {
	for b.Loop() {
		rep, err := Run(b.Context(), &Options{DidChanges: 1000, RunTests: 1, CodeActions: 1})
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(rep.DidChangePerSecond, "changes/s")
	}
}

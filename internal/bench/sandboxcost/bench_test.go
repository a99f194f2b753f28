package sandboxcost

import (
	"context"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// BenchmarkSandbox times each workload under each mode, one sub-benchmark
// per pair: go test -bench Sandbox ./internal/bench/sandboxcost
func BenchmarkSandbox(b *testing.B) {
	cli := sandboxtest.RequireDocker(b)
	o := &Options{Client: cli, Image: "fixpoint-sandbox-python"}
	sandboxtest.RequireImage(b, cli, o.Image)
	for _, mode := range AllModes() {
		r, err := newRunner(b.Context(), mode, o)
		if err != nil {
			b.Logf("mode %s skipped: %v", mode, err)
			continue
		}
		for _, w := range DefaultWorkloads() {
			b.Run(mode+"/"+w.Name, func(b *testing.B) {
				for b.Loop() {
					if _, err := r.run(context.Background(), w); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
		r.close()
	}
}

// TestRunSmoke runs the whole harness with few iterations against the real
// engine and checks every row is filled or says why it was skipped.
func TestRunSmoke(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, "fixpoint-sandbox-python")
	tab, err := Run(t.Context(), &Options{Client: cli, Iterations: 3})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	modes := append(AllModes(), RunscVariantModes(t.Context(), cli)...)
	if want := len(modes) * len(DefaultWorkloads()); len(tab.Rows) != want {
		t.Fatalf("Run gave %d rows, want %d", len(tab.Rows), want)
	}
	for _, r := range tab.Rows {
		switch {
		case r.Skipped != "":
			if r.Mode == ModeBare || r.Mode == ModeFixpoint {
				t.Errorf("mode %s skipped %s: %s", r.Mode, r.Workload, r.Skipped)
			}
		case r.N != 3 || r.Median <= 0 || r.P95 < r.Median || r.Ratio <= 0:
			t.Errorf("row %+v is incomplete", r)
		}
	}
	t.Logf("\n%s", tab.Markdown())
}

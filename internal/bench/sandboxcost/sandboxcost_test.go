package sandboxcost

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var update = flag.Bool("update", false, "rewrite golden files")

func TestStats(t *testing.T) {
	ms := func(n ...int) []time.Duration {
		var d []time.Duration
		for _, x := range n {
			d = append(d, time.Duration(x)*time.Millisecond)
		}
		return d
	}
	tests := []struct {
		name     string
		in       []time.Duration
		med, p95 time.Duration
	}{
		{name: "empty"},
		{name: "one", in: ms(7), med: 7 * time.Millisecond, p95: 7 * time.Millisecond},
		{name: "odd", in: ms(5, 1, 3), med: 3 * time.Millisecond, p95: 5 * time.Millisecond},
		{name: "even", in: ms(4, 1, 3, 2), med: 2500 * time.Microsecond, p95: 4 * time.Millisecond},
		{name: "twenty", in: ms(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 100), med: 10500 * time.Microsecond, p95: 19 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			med, p95 := stats(tt.in)
			if med != tt.med || p95 != tt.p95 {
				t.Errorf("stats(%v) = %v, %v, want %v, %v", tt.in, med, p95, tt.med, tt.p95)
			}
		})
	}
}

func TestMarkdown(t *testing.T) {
	tab := &Table{
		Iterations: 30, Image: "fixpoint-sandbox-python", Host: "linux/amd64, 2 CPUs",
		Taken: time.Date(2026, 11, 22, 1, 0, 0, 0, time.UTC),
		Rows: []Row{
			{Mode: ModeBare, Workload: "true", N: 30, Median: 1200 * time.Microsecond, P95: 2 * time.Millisecond, Ratio: 1},
			{Mode: ModeFixpoint, Workload: "true", N: 30, Median: 2400 * time.Microsecond, P95: 3 * time.Millisecond, Ratio: 2},
			{Mode: ModeBwrap, Workload: "true", Skipped: "bwrap is not on PATH"},
		},
	}
	got := tab.Markdown()
	golden := filepath.Join("testdata", "table.md")
	if *update {
		os.MkdirAll("testdata", 0o755)
		os.WriteFile(golden, []byte(got), 0o644)
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatalf("read golden (run with -update): %v", err)
	}
	if got != string(want) {
		t.Errorf("Markdown() =\n%s\nwant\n%s", got, want)
	}
	if !strings.Contains(got, "| true | fixpoint-docker | 2.4 ms | 3.0 ms | 2.00x |") {
		t.Errorf("Markdown() lacks the fixpoint row:\n%s", got)
	}
}

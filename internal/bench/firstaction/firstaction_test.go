package firstaction

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

func TestMedian(t *testing.T) {
	ms := time.Millisecond
	tests := []struct {
		name string
		in   []time.Duration
		want time.Duration
	}{
		{name: "none", in: nil, want: 0},
		{name: "one", in: []time.Duration{7 * ms}, want: 7 * ms},
		{name: "odd, unsorted", in: []time.Duration{9 * ms, 1 * ms, 5 * ms}, want: 5 * ms},
		{name: "even: the lower middle", in: []time.Duration{4 * ms, 1 * ms, 3 * ms, 2 * ms}, want: 2 * ms},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := median(tt.in); got != tt.want {
				t.Errorf("median(%v) = %v, want %v", tt.in, got, tt.want)
			}
		})
	}
}

// TestMarkdownSaysWhetherTheTargetIsMet: the overhead column subtracts
// the test's own time, and the verdict line compares the warm median
// with the target.
func TestMarkdownSaysWhetherTheTargetIsMet(t *testing.T) {
	ms := time.Millisecond
	tab := &Table{Samples: 1, Rows: []Row{
		{Case: "A", Warm: false, Samples: []Sample{{First: 900 * ms, TestTime: 400 * ms}}},
		{Case: "A", Warm: true, Samples: []Sample{{First: 450 * ms, TestTime: 400 * ms, Prewarm: 700 * ms}}},
		{Case: "B", Warm: true, Samples: []Sample{{First: 700 * ms, TestTime: 400 * ms, Prewarm: 700 * ms}}},
	}}
	got := tab.Markdown()
	for _, want := range []string{
		"| A | cold | **500 ms** (500 ms–500 ms) | 900 ms | 400 ms | — |",
		"| A | warm | **50 ms** (50 ms–50 ms) | 450 ms | 400 ms | 700 ms |",
		"A, warm: 50 ms overhead meets the target of 150 ms.",
		"B, warm: 300 ms overhead misses the target of 150 ms.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("Markdown() lacks %q:\n%s", want, got)
		}
	}
}

// TestRunOverTheWire runs the benchmark for real, one sample per mode on
// the Python case: the real binary, docker, the scripted model. It checks
// what the harness reads, not how fast it was.
func TestRunOverTheWire(t *testing.T) {
	if testing.Short() {
		t.Skip("builds fixpoint and runs Docker")
	}
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, "fixpoint-sandbox-python")
	bin := filepath.Join(t.TempDir(), "fixpoint")
	if out, err := exec.Command("go", "build", "-o", bin, "../../../cmd/fixpoint").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	tab, err := Run(t.Context(), &Options{Binary: bin, Samples: 1, Cases: Cases()[:1], Progress: os.Stderr})
	if err != nil {
		t.Fatal(err)
	}
	if len(tab.Rows) != 2 || tab.Rows[0].Warm || !tab.Rows[1].Warm {
		t.Fatalf("rows = %+v, want cold then warm", tab.Rows)
	}
	for _, r := range tab.Rows {
		s := r.Samples[0]
		if s.TestTime <= 0 || s.First <= s.TestTime {
			t.Errorf("%s %s: first result %v, test time %v: want a test time from the run log, inside the first-result time", r.Case, mode(r.Warm), s.First, s.TestTime)
		}
		if r.Warm != (s.Prewarm > 0) {
			t.Errorf("%s %s: prewarm %v, want it measured only for warm", r.Case, mode(r.Warm), s.Prewarm)
		}
	}
}

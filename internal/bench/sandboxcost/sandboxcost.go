// Package sandboxcost measures what a sandboxed command costs compared
// with running it bare on the host.
//
// [Run] measures each [Workload] under each mode (bare host process,
// bubblewrap, a one-shot Docker container, `docker exec` into a warm
// container, fixpoint's docker backend, and that backend on runsc) and
// returns a [Table] of medians, 95th percentiles and ratios to bare.
// Modes are measured round-robin, one iteration of each in turn and in a
// new random order every round, so load from other processes on the
// machine, and the engine's own teardown work after the docker modes, hit
// them alike.
package sandboxcost

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"time"

	"github.com/docker/docker/client"
	"github.com/fixpoint-dev/fixpoint/sandbox/engine"
)

// Mode names.
const (
	ModeBare          = "bare"
	ModeBwrap         = "bwrap"
	ModeDockerOneShot = "docker-oneshot"
	ModeDockerExec    = "docker-exec"
	ModeFixpoint      = "fixpoint-docker"
	ModeFixpointRunsc = "fixpoint-runsc"
)

// AllModes lists every mode in table order.
func AllModes() []string {
	return []string{ModeBare, ModeBwrap, ModeDockerOneShot, ModeDockerExec, ModeFixpoint, ModeFixpointRunsc}
}

// Workload is one command to time. Args run in a writable scratch
// directory (the workspace in a sandbox).
type Workload struct {
	Name string
	Args []string
}

// DefaultWorkloads are `python3 -c pass`, `true` and a 1 MB file write.
func DefaultWorkloads() []Workload {
	return []Workload{
		{Name: "python3 -c pass", Args: []string{"python3", "-c", "pass"}},
		{Name: "true", Args: []string{"true"}},
		{Name: "write 1 MB file", Args: []string{"dd", "if=/dev/zero", "of=bench.bin", "bs=1048576", "count=1", "status=none"}},
	}
}

// Options configure Run. The zero value measures every available mode.
type Options struct {
	// Iterations per mode and workload; 0 = 30. Two more warm-up runs are
	// not counted.
	Iterations int
	// Image for the docker modes; "" = "fixpoint-sandbox-python".
	Image string
	// Modes to measure; nil = AllModes plus RunscVariantModes (one
	// fixpoint-runsc-<name> mode per runsc-<name> runtime of the engine).
	// Unavailable modes get a row with Skipped set instead of failing the
	// run.
	Modes []string
	// Workloads; nil = DefaultWorkloads.
	Workloads []Workload
	// Client for the docker modes; nil = FromEnv with negotiation.
	Client *client.Client
	// Logger; nil discards.
	Logger *slog.Logger
	// Progress, when non-nil, receives one line per finished mode setup.
	Progress io.Writer
}

// Row is one mode and workload.
type Row struct {
	Mode     string
	Workload string
	N        int
	Median   time.Duration
	P95      time.Duration
	Ratio    float64 // Median / bare Median of the same workload; 0 when unknown
	Skipped  string  // why the mode did not run
}

// Table is the result of Run.
type Table struct {
	Rows       []Row
	Iterations int
	Image      string
	Taken      time.Time
	Host       string // GOOS/GOARCH, CPUs, kernel when known
}

// runner runs one workload once and returns how long it took.
type runner interface {
	run(ctx context.Context, w Workload) (time.Duration, error)
	close() error
}

// Run measures opts.Workloads under opts.Modes.
func Run(ctx context.Context, opts *Options) (*Table, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Iterations <= 0 {
		o.Iterations = 30
	}
	if o.Image == "" {
		o.Image = "fixpoint-sandbox-python"
	}
	if o.Workloads == nil {
		o.Workloads = DefaultWorkloads()
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Client == nil {
		cli, err := engine.NewClient()
		if err == nil {
			defer cli.Close()
			o.Client = cli
		}
	}
	if o.Modes == nil {
		o.Modes = append(AllModes(), RunscVariantModes(ctx, o.Client)...)
	}
	t := &Table{Iterations: o.Iterations, Image: o.Image, Taken: time.Now().UTC(), Host: hostInfo()}

	runners := make([]runner, len(o.Modes))
	skipped := make([]string, len(o.Modes))
	for i, m := range o.Modes {
		r, err := newRunner(ctx, m, &o)
		if err != nil {
			skipped[i] = err.Error()
			o.Logger.Info("benchmark mode skipped", "mode", m, "why", err)
		} else {
			runners[i] = r
			defer r.close()
		}
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "mode %s: %s\n", m, orDefault(skipped[i], "ready"))
		}
	}
	for _, w := range o.Workloads {
		samples, err := measure(ctx, w, runners, skipped, o.Iterations)
		if err != nil {
			return nil, err
		}
		t.Rows = append(t.Rows, rows(w, o.Modes, samples, skipped)...)
		// A mode that failed on one workload is retried on the next.
		for i := range skipped {
			if runners[i] != nil {
				skipped[i] = ""
			}
		}
	}
	return t, nil
}

// measure times w under every runner not skipped, iterations times after
// two warm-up rounds, and records why a runner that failed is skipped.
func measure(ctx context.Context, w Workload, runners []runner, skipped []string, iterations int) ([][]time.Duration, error) {
	samples := make([][]time.Duration, len(runners))
	for it := -2; it < iterations; it++ {
		// A new order each round: the docker modes leave the engine
		// busy tearing containers down, which must not always land on
		// the same next mode.
		for _, i := range rand.Perm(len(runners)) {
			r := runners[i]
			if r == nil || skipped[i] != "" {
				continue
			}
			d, err := r.run(ctx, w)
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				skipped[i] = fmt.Sprintf("%s failed: %v", w.Name, err)
				continue
			}
			if it >= 0 {
				samples[i] = append(samples[i], d)
			}
		}
	}
	return samples, nil
}

// rows are w's rows of the table, one per mode, with ratios to bare.
func rows(w Workload, modes []string, samples [][]time.Duration, skipped []string) []Row {
	out := make([]Row, len(modes))
	var bare time.Duration
	for i, m := range modes {
		out[i] = Row{Mode: m, Workload: w.Name, Skipped: skipped[i]}
		if out[i].Skipped == "" {
			out[i].N = len(samples[i])
			out[i].Median, out[i].P95 = stats(samples[i])
		}
		if m == ModeBare {
			bare = out[i].Median
		}
	}
	for i := range out {
		if bare > 0 && out[i].Median > 0 {
			out[i].Ratio = float64(out[i].Median) / float64(bare)
		}
	}
	return out
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// stats returns the median and the 95th percentile (nearest rank).
func stats(d []time.Duration) (median, p95 time.Duration) {
	if len(d) == 0 {
		return 0, 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	median = s[len(s)/2]
	if len(s)%2 == 0 {
		median = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	rank := (95*len(s) + 99) / 100
	return median, s[max(rank-1, 0)]
}

func hostInfo() string {
	s := fmt.Sprintf("%s/%s, %d CPUs", runtime.GOOS, runtime.GOARCH, runtime.NumCPU())
	if out, err := exec.Command("uname", "-r").Output(); err == nil {
		s += ", Linux " + strings.TrimSpace(string(out))
	}
	return s
}

// Markdown renders the table for docs/BENCHMARKS.md.
func (t *Table) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Measured %s on %s, image %s, %d runs per cell (after 2 warm-up runs), modes interleaved in a random order per round.\n\n",
		t.Taken.Format("2006-01-02 15:04 UTC"), t.Host, t.Image, t.Iterations)
	b.WriteString("| workload | mode | median | p95 | vs bare |\n|---|---|---:|---:|---:|\n")
	for _, r := range t.Rows {
		if r.Skipped != "" {
			fmt.Fprintf(&b, "| %s | %s | – | – | skipped: %s |\n", r.Workload, r.Mode, strings.ReplaceAll(r.Skipped, "|", "/"))
			continue
		}
		ratio := "–"
		if r.Ratio > 0 {
			ratio = fmt.Sprintf("%.2fx", r.Ratio)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s |\n", r.Workload, r.Mode, ms(r.Median), ms(r.P95), ratio)
	}
	return b.String()
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond)) }

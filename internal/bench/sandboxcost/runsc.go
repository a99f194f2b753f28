package sandboxcost

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os/exec"
	"slices"
	"strings"
	"time"

	"github.com/docker/docker/client"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/engine"
)

// runscVariantPrefix starts the mode of each gVisor variant: mode
// "fixpoint-runsc-<name>" runs fixpoint's docker backend on the engine
// runtime "runsc-<name>" (.ci/docker-up registers one per runsc
// configuration worth comparing, each with its own runtimeArgs).
const runscVariantPrefix = "fixpoint-"

// RunscVariantModes returns one mode per gVisor variant runtime the engine
// has ("runsc-<name>", not "runsc" itself, which ModeFixpointRunsc
// measures), sorted by name. No client or no answer gives none.
func RunscVariantModes(ctx context.Context, cli *client.Client) []string {
	if cli == nil {
		return nil
	}
	info, err := cli.Info(ctx)
	if err != nil {
		return nil
	}
	var modes []string
	for name := range info.Runtimes {
		if name != "runsc" && docker.IsGVisor(name) {
			modes = append(modes, runscVariantPrefix+name)
		}
	}
	slices.Sort(modes)
	return modes
}

// variantRuntime returns the engine runtime of a gVisor variant mode.
func variantRuntime(mode string) (string, bool) {
	rt, ok := strings.CutPrefix(mode, runscVariantPrefix)
	if !ok || rt == "runsc" || !docker.IsGVisor(rt) {
		return "", false
	}
	return rt, true
}

// newVariantRunner runs fixpoint's docker backend on a gVisor variant.
func newVariantRunner(ctx context.Context, o *Options, runtime string) (runner, error) {
	if o.Client == nil {
		return nil, errors.New("no Docker client")
	}
	if _, err := o.Client.ImageInspect(ctx, o.Image); err != nil {
		return nil, fmt.Errorf("image %s: %w", o.Image, err)
	}
	return newFixpointRunner(ctx, o, runtime)
}

// FloorRow splits one runtime's cost of a command into its parts. Bare is
// the host itself (no session); "runc" is the engine's default runtime.
type FloorRow struct {
	Runtime string
	// SessionStart is a fresh session: container create and start, the
	// supervisor's hello, and a first `true` (median of FloorOptions.Starts).
	SessionStart time.Duration
	// Warm is `true` through the warm session, as the caller sees it.
	Warm time.Duration
	// InSandbox is the part of Warm between the supervisor starting the
	// command and reaping it, as the supervisor measures it.
	InSandbox time.Duration
	// Spawn is one fork+exec+wait of `true` from a process already inside
	// (python's subprocess.run, averaged over 20).
	Spawn time.Duration
	// Syscall is one getppid(2) from python, an empty loop subtracted.
	Syscall time.Duration
	// Stat is one stat(2) of a file of python's standard library (about
	// a thousand files, walked once before timing: the dentries are warm,
	// as for a test run that follows another).
	Stat    time.Duration
	Skipped string
}

// FloorTable is the result of MeasureFloor.
type FloorTable struct {
	Rows  []FloorRow
	Image string
	Runs  int
}

// floorProbe prints the mean ns of a spawn of `true`, of a getppid and of
// a stat of a standard-library file.
const floorProbe = `import os, subprocess, time
def per(f, n):
    t = time.perf_counter()
    for _ in range(n): f()
    return (time.perf_counter() - t) / n
spawn = per(lambda: subprocess.run(["true"]), 20)
sysc = per(os.getppid, 20000) - per(lambda: None, 20000)
files = [os.path.join(d, f) for d, _, fs in os.walk(os.path.dirname(os.__file__)) for f in fs]
def walk():
    for f in files:
        os.stat(f)
walk()
st = per(walk, 3) / len(files)
print(int(spawn * 1e9), int(sysc * 1e9), int(st * 1e9))
`

// MeasureFloor measures where a command's time goes under the bare host,
// the engine default (runc) and each gVisor runtime the engine has ("runsc"
// first, then the runsc-<name> variants), with o.Image and o.Client.
// o.Client nil = a client from the environment. Runs is the number of
// warm commands per row (o.Iterations, 0 = 30);
// fresh sessions are 3 per runtime. A runtime that fails gets Skipped.
func MeasureFloor(ctx context.Context, opts *Options) (*FloorTable, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	o.Iterations = cmp.Or(o.Iterations, 30)
	o.Image = cmp.Or(o.Image, "fixpoint-sandbox-python")
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Client == nil {
		cli, err := engine.NewClient()
		if err != nil {
			return nil, fmt.Errorf("docker client: %w", err)
		}
		defer cli.Close()
		o.Client = cli
	}
	t := &FloorTable{Image: o.Image, Runs: o.Iterations}
	bare, err := floorBare(ctx, o.Iterations)
	if err != nil {
		return nil, fmt.Errorf("bare: %w", err)
	}
	t.Rows = append(t.Rows, bare)
	runtimes := []string{"runc"}
	if info, err := o.Client.Info(ctx); err == nil {
		if _, ok := info.Runtimes["runsc"]; ok {
			runtimes = append(runtimes, "runsc")
		}
	}
	for _, m := range RunscVariantModes(ctx, o.Client) {
		rt, _ := variantRuntime(m)
		runtimes = append(runtimes, rt)
	}
	for _, rt := range runtimes {
		row, err := floorRuntime(ctx, &o, rt)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			row = FloorRow{Runtime: rt, Skipped: err.Error()}
		}
		if o.Progress != nil {
			fmt.Fprintf(o.Progress, "floor %s: %s\n", rt, orDefault(row.Skipped, "done"))
		}
		t.Rows = append(t.Rows, row)
	}
	return t, nil
}

func floorBare(ctx context.Context, runs int) (FloorRow, error) {
	row := FloorRow{Runtime: ModeBare}
	r, err := newRunner(ctx, ModeBare, &Options{})
	if err != nil {
		return row, err
	}
	defer r.close()
	var warm []time.Duration
	for range runs {
		d, err := r.run(ctx, Workload{Args: []string{"true"}})
		if err != nil {
			return row, err
		}
		warm = append(warm, d)
	}
	row.Warm, _ = stats(warm)
	out, err := exec.CommandContext(ctx, "python3", "-c", floorProbe).Output()
	if err != nil {
		return row, fmt.Errorf("python3 probe: %w", err)
	}
	row.Spawn, row.Syscall, row.Stat, err = parseProbe(string(out))
	return row, err
}

func floorRuntime(ctx context.Context, o *Options, rt string) (FloorRow, error) {
	row := FloorRow{Runtime: rt}
	engineRT := rt
	if rt == "runc" {
		engineRT = ""
	}
	b, err := docker.New(ctx, &docker.Options{Client: o.Client, Runtime: engineRT, Logger: o.Logger, NoReap: true})
	if err != nil {
		return row, err
	}
	defer b.Close()
	spec := sandbox.Spec{Image: o.Image, Labels: map[string]string{"fixpoint.bench": "floor"}}
	var starts []time.Duration
	var sess sandbox.Session
	for i := range 3 {
		t0 := time.Now()
		s, err := b.Start(ctx, spec)
		if err != nil {
			return row, err
		}
		if _, err := s.Run(ctx, sandbox.Command{Args: []string{"true"}}); err != nil {
			s.Close()
			return row, err
		}
		starts = append(starts, time.Since(t0))
		if i < 2 {
			s.Close()
		} else {
			sess = s
		}
	}
	defer sess.Close()
	row.SessionStart, _ = stats(starts)
	var warm, in []time.Duration
	for range o.Iterations {
		t0 := time.Now()
		res, err := sess.Run(ctx, sandbox.Command{Args: []string{"true"}})
		if err != nil {
			return row, err
		}
		warm = append(warm, time.Since(t0))
		in = append(in, res.Duration)
	}
	row.Warm, _ = stats(warm)
	row.InSandbox, _ = stats(in)
	res, err := sess.Run(ctx, sandbox.Command{Args: []string{"python3", "-c", floorProbe}})
	if err != nil {
		return row, err
	}
	if res.ExitCode != 0 {
		return row, fmt.Errorf("python3 probe: exit %d: %s", res.ExitCode, res.Stderr)
	}
	row.Spawn, row.Syscall, row.Stat, err = parseProbe(string(res.Stdout))
	return row, err
}

// parseProbe reads floorProbe's "spawn_ns syscall_ns stat_ns" line.
func parseProbe(out string) (spawn, syscall, stat time.Duration, err error) {
	var s, c, st int64
	if _, err := fmt.Sscan(out, &s, &c, &st); err != nil {
		return 0, 0, 0, fmt.Errorf("probe output %q: %w", out, err)
	}
	return time.Duration(s), time.Duration(max(c, 0)), time.Duration(st), nil
}

// Markdown renders the floor table for docs/BENCHMARKS.md.
func (t *FloorTable) Markdown() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Where `true` spends its time, image %s, medians of %d warm runs and 3 fresh sessions. *In sandbox* is the supervisor's own start-to-reap time of the command; *spawn*, *syscall* (getppid) and *stat* (python's standard library, warm) are measured by python inside the sandbox (bare: on the host).\n\n", t.Image, t.Runs)
	b.WriteString("| runtime | fresh session | warm `true` | of which in sandbox | spawn `true` inside | one syscall | one stat |\n|---|---:|---:|---:|---:|---:|---:|\n")
	for _, r := range t.Rows {
		if r.Skipped != "" {
			fmt.Fprintf(&b, "| %s | – | – | – | – | – | skipped: %s |\n", r.Runtime, strings.ReplaceAll(r.Skipped, "|", "/"))
			continue
		}
		start, in := "–", "–"
		if r.SessionStart > 0 {
			start = ms(r.SessionStart)
		}
		if r.InSandbox > 0 {
			in = ms(r.InSandbox)
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s |\n", r.Runtime, start, ms(r.Warm), in, ms(r.Spawn), us(r.Syscall), us(r.Stat))
	}
	return b.String()
}

func us(d time.Duration) string { return fmt.Sprintf("%.2f µs", float64(d)/float64(time.Microsecond)) }

package langtest

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/bwrap"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// TracedRun is what RunTraced saw.
type TracedRun struct {
	Baseline, Selected, Traced *testrun.Report
	Trace                      lang.Trace
	// Workspace lists the regular files in the session's workspace after
	// the traced run (slash paths, sorted).
	Workspace []string
	// Untraced and TracedWall are the wall times of the selected and the
	// traced runs, for a note (never asserted).
	Untraced, TracedWall time.Duration
}

// Backend is a sandbox a traced-run test runs in: its name (a subtest's)
// and how to start it.
type Backend struct {
	Name  string
	Start func(t *testing.T) sandbox.Session
}

// Backends are bubblewrap and docker (with image, a fixpoint-sandbox-*
// image), each failing the test under CI=true when it is missing.
func Backends(image string) []Backend {
	return []Backend{
		{Name: "bwrap", Start: func(t *testing.T) sandbox.Session {
			t.Helper()
			sandboxtest.RequireCommand(t, "bwrap")
			b, err := bwrap.New(nil)
			if err != nil {
				t.Fatal(err)
			}
			return start(t, b, sandbox.Spec{})
		}},
		{Name: "docker", Start: func(t *testing.T) sandbox.Session {
			t.Helper()
			cli := sandboxtest.RequireDocker(t)
			sandboxtest.RequireImage(t, cli, image)
			b, err := docker.New(t.Context(), &docker.Options{Client: cli})
			if err != nil {
				t.Fatal(err)
			}
			return start(t, b, sandbox.Spec{Image: image})
		}},
	}
}

func start(t *testing.T, b sandbox.Backend, spec sandbox.Spec) sandbox.Session {
	t.Helper()
	sess, err := b.Start(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sess.Close() })
	return sess
}

// RunTraced runs a tiny project in a session of b the way a fix does:
// the whole suite (baseline), then the failing tests narrowed by
// SelectTests (or the whole runner when it does not narrow r), untraced,
// then traced by tr. It checks what every tracer must keep: the traced
// run's exit code, counts and failing test ids equal the untraced ones,
// its output (numbers aside), and a trace file was read back. The trace
// is parsed with tr.ParseTrace.
func RunTraced(t *testing.T, b Backend, l interface {
	lang.Tracer
	lang.TestSelector
}, files map[string]string, r testrun.Runner) TracedRun {
	t.Helper()
	return RunTracedSnap(t, b, l, SnapOf(files), r, nil)
}

// RunTracedSnap is RunTraced on a snapshot (one with modes and symlinks:
// a project with its node_modules installed). Lines that noise (when
// non-nil) matches are the runner's own note that it records coverage
// (vitest's "Coverage enabled with v8"): they are left out of both
// outputs before they are compared.
func RunTracedSnap(t *testing.T, b Backend, l interface {
	lang.Tracer
	lang.TestSelector
}, snap *sandbox.Snapshot, r testrun.Runner, noise *regexp.Regexp) TracedRun {
	t.Helper()
	sess := b.Start(t)
	if _, err := sess.Sync(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	run := func(r testrun.Runner) (*testrun.Report, time.Duration) {
		t.Helper()
		start := time.Now()
		rep, err := testrun.Run(t.Context(), sess, r, sandbox.Limits{Timeout: 5 * time.Minute}, nil)
		if err != nil {
			t.Fatalf("run %q: %v", r.Args, err)
		}
		return rep, time.Since(start)
	}
	var out TracedRun
	out.Baseline, _ = run(r)
	failed := out.Baseline.Failures()
	if len(failed) == 0 {
		t.Fatalf("baseline %q: no failing test (exit %d): %s", r.Args, out.Baseline.ExitCode, out.Baseline.Output)
	}
	sel, ok := l.SelectTests(r, failed)
	if !ok {
		sel = r
	}
	traced, ok := l.TraceTests(snap, r, failed)
	if !ok {
		t.Fatalf("TraceTests(%q) = false, want a traced runner", r.Args)
	}
	if traced.TracePath != lang.TracePath {
		t.Errorf("traced runner's TracePath = %q, want %q", traced.TracePath, lang.TracePath)
	}
	out.Selected, out.Untraced = run(sel)
	out.Traced, out.TracedWall = run(traced)
	if got, want := reportShape(out.Traced), reportShape(out.Selected); got != want {
		t.Errorf("traced report = %s, want the untraced selected run's %s\ntraced output:\n%s", got, want, out.Traced.Output)
	}
	quiet := func(s string) string {
		if noise == nil {
			return s
		}
		var keep []string
		for _, line := range strings.Split(s, "\n") {
			if !noise.MatchString(line) {
				keep = append(keep, line)
			}
		}
		return strings.Join(keep, "\n")
	}
	if got, want := numbersOut.ReplaceAllString(quiet(out.Traced.Output), "#"), numbersOut.ReplaceAllString(quiet(out.Selected.Output), "#"); got != want {
		t.Errorf("traced output differs from the untraced selected run's (numbers aside):\n%s\nwant:\n%s", got, want)
	}
	if out.Traced.Trace == nil {
		t.Fatalf("traced run wrote no %s; output:\n%s", lang.TracePath, out.Traced.Output)
	}
	var err error
	out.Trace, err = l.ParseTrace(snap, out.Traced.Trace.Root, out.Traced.Trace.Data)
	if err != nil {
		t.Fatalf("ParseTrace(%q): %v", out.Traced.Trace.Data, err)
	}
	res, err := sess.Run(t.Context(), sandbox.Command{Args: []string{"find", ".", "-type", "f"}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("list the workspace: %v %+v", err, res)
	}
	for _, f := range strings.Fields(string(res.Stdout)) {
		out.Workspace = append(out.Workspace, strings.TrimPrefix(f, "./"))
	}
	sort.Strings(out.Workspace)
	return out
}

// numbersOut are the parts of a run's output that differ between two runs
// of the same tests: durations, addresses, process ids.
var numbersOut = regexp.MustCompile(`0x[0-9a-fA-F]+|[0-9]+`)

// reportShape is what a traced run must not change: the exit code, the
// counts and each test's id and status.
func reportShape(r *testrun.Report) string {
	var ids []string
	for _, t := range r.Tests {
		ids = append(ids, fmt.Sprintf("%s=%v", t.ID, t.Status))
	}
	slices.Sort(ids)
	return fmt.Sprintf("exit %d, passed %d, failed %d, skipped %d, %q", r.ExitCode, r.Passed, r.Failed, r.Skipped, ids)
}

// HasLine reports whether spans hold a span starting at line.
func HasLine(spans []lang.Span, line int) bool {
	return slices.ContainsFunc(spans, func(s lang.Span) bool { return s.From == line })
}

// Package parity checks that `fixpoint test` reports what a native test
// run reports, on real projects nobody here wrote: the corpus in
// ../shared/realworld (native counts from its README) and Go modules
// fetched from the module proxy (native counts measured here with the
// host's go). Each project is unpacked into a fresh directory, so the
// setup phase starts from a cold cache; a second run measures it cached.
//
// The main types are [Project] (one corpus entry), [Row] (its result on
// each backend) and [Table] (the markdown for docs/BENCHMARKS.md).
// `fixpoint bench parity` and this package's test run it.
package parity

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/internal/warmd"
	"github.com/fixpoint-dev/fixpoint/sandbox/engine"
)

// Counts are a test run's results.
type Counts struct{ Passed, Failed, Skipped int }

func (c Counts) String() string { return fmt.Sprintf("%d/%d/%d", c.Passed, c.Failed, c.Skipped) }

// Project is one corpus entry.
type Project struct {
	Name string
	// Archive is a .tar.gz with one top-level folder (realworld); Module
	// is module@version fetched from the Go module proxy instead; Dir is
	// a small fixture directory (testdata/), copied and committed to a
	// fresh git repository as a user's clone is.
	Archive, Module, Dir string
	// Shape is the project shape a fixture stands for ("cgo", "go.work").
	Shape string
	// Native are the counts of a native run and NativeTime its wall time;
	// for realworld they come from its README, for modules they are
	// measured (NativeFrom says which).
	Native     Counts
	NativeTime time.Duration
	NativeFrom string
	// NativeWarm is a second native `go test ./...` without -count=1,
	// which reuses go's cached test results as the warm fixpoint run
	// does (Go modules only; 0 = compare with NativeTime).
	NativeWarm time.Duration
	// Heavy projects run in `fixpoint bench parity` only, not in CI's
	// TestParity: golang.org/x/text (multi-MB generated tables, 46,000
	// tests) adds minutes on two cores.
	Heavy bool
}

// Corpus returns the projects: realworld's five (from dir) and three Go
// modules: one with dependencies, and golang.org/x/text (Heavy).
func Corpus(realworld string) []Project {
	rw := func(name string, c Counts, d time.Duration) Project {
		return Project{Name: name, Archive: filepath.Join(realworld, name+".tar.gz"), Native: c, NativeTime: d, NativeFrom: "README"}
	}
	return []Project{
		rw("cachetools-7.0.6", Counts{277, 0, 2}, 460*time.Millisecond),
		rw("itsdangerous-2.2.0", Counts{297, 0, 0}, 780*time.Millisecond),
		rw("html-encoding-sniffer-6.0.0", Counts{59, 0, 0}, 620*time.Millisecond),
		rw("ms-3.0.0-canary.1", Counts{49, 0, 0}, 2200*time.Millisecond),
		rw("bytes-3.1.2", Counts{30, 0, 0}, 460*time.Millisecond),
		{Name: "go-cmp", Module: "github.com/google/go-cmp@v0.7.0"},
		{Name: "urfave-cli-v2", Module: "github.com/urfave/cli/v2@v2.27.5"},
		{Name: "x-text", Module: "golang.org/x/text@v0.43.0", Heavy: true},
	}
}

// Fixtures are small projects, one per shape a real project has that the
// realworld corpus lacks (issue 21: cgo, go.work, a module below the
// root, mocha with supertest and a composed script, vitest with
// TypeScript, ESM `node --test` with localhost and git in a script, npm
// workspaces, a src-layout Python package, a Rust crate with a fuzz/
// sub-workspace). Their native counts were measured on the host (Node
// 20.20.2, Go 1.26, Debian's pytest 7.2.1, cargo 1.95): see
// testdata/README.md.
func Fixtures(testdata string) []Project {
	fx := func(name, shape string, c Counts) Project {
		return Project{Name: name, Dir: filepath.Join(testdata, name), Shape: shape, Native: c, NativeFrom: "testdata"}
	}
	return []Project{
		fx("go-cgo", "cgo", Counts{2, 0, 1}),
		fx("go-work", "go.work", Counts{3, 0, 0}),
		fx("go-nested", "module below the root", Counts{2, 0, 0}),
		fx("node-mocha-supertest", "mocha + supertest, composed script, localhost", Counts{3, 0, 1}),
		fx("node-vitest-ts", "vitest + TypeScript", Counts{2, 0, 1}),
		fx("node-esm-test", "ESM node --test, localhost, git in scripts", Counts{4, 0, 1}),
		fx("node-workspaces", "npm workspaces", Counts{3, 0, 0}),
		fx("python-src-layout", "src-layout Python", Counts{3, 0, 1}),
		fx("rust-crate", "Rust crate with a fuzz/ workspace", Counts{2, 0, 1}),
		// Classes found on fresh real projects (testdata/heldout-projects.md).
		fx("rust-pkg-config", "Rust tests that run pkg-config", Counts{2, 0, 0}),
		fx("node-engines-advisory", "engines.node above the host's node, npm without engine-strict", Counts{2, 0, 1}),
		fx("go-nested-runs", "Go tests that run tests inside themselves, and the go command (testify)", Counts{2, 0, 0}),
		fx("node-npm-hooks", "npm pretest/posttest and an `npm run X` test script with a preX (browserify/resolve)", Counts{3, 0, 1}),
	}
}

// Run is one `fixpoint test` of a project on one backend.
type Run struct {
	Counts
	Exit     int
	Err      string        // the run failed before reporting (setup, sandbox)
	Wall     time.Duration // the whole command: setup, session, tests
	TestTime time.Duration // the test command alone
}

// Row is one project's result.
type Row struct {
	Project    Project
	Docker     Run // cold setup cache
	DockerWarm Run // the same directory again: setup cached
	DockerKept Run // `fixpoint test --keep-warm` again: the session the daemon started ahead
	Bwrap      Run
}

// Match reports whether docker's counts equal the native ones.
func (r Row) Match() bool { return r.Docker.Err == "" && r.Docker.Counts == r.Project.Native }

// BwrapMatch reports whether bwrap's counts equal the native ones.
func (r Row) BwrapMatch() bool { return r.Bwrap.Err == "" && r.Bwrap.Counts == r.Project.Native }

// Options configure Check.
type Options struct {
	Backends []string  // "docker", "bwrap"; nil = both
	Progress io.Writer // one line per step; nil = discard
	WorkDir  string    // where projects are unpacked; "" = a temporary directory, removed after
	// ColdOnly runs docker once (cold setup), without the cached and
	// kept-warm runs: what the shape fixtures need.
	ColdOnly bool
}

// Check runs every project and returns its rows, in corpus order.
func Check(ctx context.Context, projects []Project, opts *Options) ([]Row, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Backends == nil {
		o.Backends = []string{config.BackendDocker, config.BackendBwrap}
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	work := o.WorkDir
	if work == "" {
		d, err := os.MkdirTemp("", "fixpoint-parity-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(d)
		work = d
	}
	var rows []Row
	for _, p := range projects {
		row := Row{Project: p}
		for _, be := range o.Backends {
			// A fresh directory per backend: a new project, a cold cache.
			dir, err := Unpack(ctx, p, filepath.Join(work, be))
			if err != nil {
				return rows, fmt.Errorf("%s: %w", p.Name, err)
			}
			if p.NativeFrom == "" {
				fmt.Fprintf(o.Progress, "%s: native go test\n", p.Name)
				c, d, err := NativeGo(ctx, dir)
				if err != nil {
					return rows, fmt.Errorf("%s: native: %w", p.Name, err)
				}
				p.Native, p.NativeTime, p.NativeFrom = c, d, "measured"
				if w, err := nativeGoWarm(ctx, dir); err == nil {
					p.NativeWarm = w
				}
				row.Project = p
			}
			fmt.Fprintf(o.Progress, "%s: fixpoint test (%s)\n", p.Name, be)
			defer removeCaches(dir)
			r := Test(ctx, dir, be)
			switch be {
			case config.BackendDocker:
				row.Docker = r
				if o.ColdOnly {
					break
				}
				fmt.Fprintf(o.Progress, "%s: fixpoint test (docker, cached setup)\n", p.Name)
				row.DockerWarm = Test(ctx, dir, be)
				fmt.Fprintf(o.Progress, "%s: fixpoint test --keep-warm (docker, session kept warm)\n", p.Name)
				row.DockerKept = KeptWarm(ctx, dir, be)
			case config.BackendBwrap:
				row.Bwrap = r
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// Unpack puts a fresh copy of p under parent and returns its directory.
func Unpack(ctx context.Context, p Project, parent string) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	if p.Dir != "" {
		dir := filepath.Join(parent, p.Name)
		os.RemoveAll(dir)
		if out, err := exec.CommandContext(ctx, "cp", "-r", p.Dir, dir).CombinedOutput(); err != nil {
			return "", fmt.Errorf("copy %s: %v: %s", p.Dir, err, out)
		}
		// A clone: scripts that ask git (`git rev-parse`) see a repository.
		git := func(args ...string) error {
			cmd := exec.CommandContext(ctx, "git", append([]string{"-c", "user.name=parity", "-c", "user.email=parity@example.invalid", "-c", "commit.gpgsign=false"}, args...)...)
			cmd.Dir = dir
			if out, err := cmd.CombinedOutput(); err != nil {
				return fmt.Errorf("git %s in %s: %v: %s", args[0], dir, err, out)
			}
			return nil
		}
		for _, args := range [][]string{{"init", "-q"}, {"add", "-A"}, {"commit", "-q", "-m", "fixture"}} {
			if err := git(args...); err != nil {
				return "", err
			}
		}
		return dir, nil
	}
	if p.Archive != "" {
		dir := filepath.Join(parent, p.Name)
		os.RemoveAll(dir)
		if out, err := exec.CommandContext(ctx, "tar", "-C", parent, "-xzf", p.Archive).CombinedOutput(); err != nil {
			return "", fmt.Errorf("unpack %s: %v: %s", p.Archive, err, out)
		}
		return dir, nil
	}
	out, err := exec.CommandContext(ctx, "go", "mod", "download", "-json", p.Module).Output()
	if err != nil {
		return "", fmt.Errorf("go mod download %s: %w", p.Module, err)
	}
	var m struct{ Dir, Error string }
	if err := json.Unmarshal(out, &m); err != nil || m.Dir == "" {
		return "", fmt.Errorf("go mod download %s: %s", p.Module, m.Error)
	}
	dir := filepath.Join(parent, p.Name)
	os.RemoveAll(dir)
	if out, err := exec.CommandContext(ctx, "cp", "-r", m.Dir, dir).CombinedOutput(); err != nil {
		return "", fmt.Errorf("copy %s: %v: %s", m.Dir, err, out)
	}
	if out, err := exec.CommandContext(ctx, "chmod", "-R", "u+w", dir).CombinedOutput(); err != nil {
		return "", fmt.Errorf("chmod %s: %v: %s", dir, err, out)
	}
	return dir, nil
}

// NativeGo runs `go test -json ./...` on the host and counts the tests.
func NativeGo(ctx context.Context, dir string) (Counts, time.Duration, error) {
	cmd := exec.CommandContext(ctx, "go", "test", "-count=1", "-json", "./...")
	cmd.Dir = dir
	start := time.Now()
	out, _ := cmd.Output() // a failing test exits 1; the counts still count
	d := time.Since(start)
	var c Counts
	for _, line := range strings.Split(string(out), "\n") {
		var ev struct{ Action, Test string }
		if json.Unmarshal([]byte(line), &ev) != nil || ev.Test == "" {
			continue
		}
		switch ev.Action {
		case "pass":
			c.Passed++
		case "fail":
			c.Failed++
		case "skip":
			c.Skipped++
		}
	}
	if c == (Counts{}) {
		return c, d, fmt.Errorf("go test reported no tests in %s", dir)
	}
	return c, d, nil
}

// nativeGoWarm times a native `go test -json ./...` whose results go
// has cached (a first run fills that cache), as a developer's repeated
// run and fixpoint's warm run see it.
func nativeGoWarm(ctx context.Context, dir string) (time.Duration, error) {
	var d time.Duration
	for range 2 {
		cmd := exec.CommandContext(ctx, "go", "test", "-json", "./...")
		cmd.Dir = dir
		start := time.Now()
		if err := cmd.Run(); err != nil {
			return 0, err
		}
		d = time.Since(start)
	}
	return d, nil
}

// Test runs `fixpoint test` in-process on dir with backend, with zero
// configuration (the defaults plus the backend).
func Test(ctx context.Context, dir, backend string) Run {
	start := time.Now()
	cfg, err := config.Load(config.LoadOptions{Root: dir, Getenv: os.Getenv, Flags: func(c *config.Config) { c.Sandbox.Backend = backend }})
	if err != nil {
		return Run{Err: err.Error(), Wall: time.Since(start)}
	}
	eng, err := agent.Open(ctx, cfg, dir, &agent.OpenOptions{NoModel: true})
	if err != nil {
		return Run{Err: err.Error(), Wall: time.Since(start)}
	}
	defer eng.Close()
	rep, err := eng.Test(ctx, dir, nil)
	if err != nil {
		return Run{Err: err.Error(), Wall: time.Since(start)}
	}
	return Run{Counts: Counts{rep.Passed, rep.Failed, rep.Skipped}, Exit: rep.ExitCode, Wall: time.Since(start), TestTime: rep.Duration}
}

// KeptWarm measures `fixpoint test --keep-warm` as a user repeating it
// sees it: a daemon (warmd, in this process, on a private socket) runs
// the tests once, starts the next session while the user reads them, and
// the second run, timed from the request to the report, takes that
// session. What it leaves out of a real CLI run is the client process's
// own start (a few ms).
func KeptWarm(ctx context.Context, dir, backend string) Run {
	sockDir, err := os.MkdirTemp("", "fixpoint-kept-")
	if err != nil {
		return Run{Err: err.Error()}
	}
	defer os.RemoveAll(sockDir)
	sock := filepath.Join(sockDir, "d.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		return Run{Err: err.Error()}
	}
	s := &warmd.Server{
		Idle: time.Hour,
		Load: func(req warmd.Request) (*config.Config, error) {
			return config.Load(config.LoadOptions{Root: req.Root, Getenv: os.Getenv, Flags: func(c *config.Config) { c.Sandbox.Backend = req.Backend }})
		},
	}
	sctx, cancel := context.WithCancel(ctx)
	served := make(chan struct{})
	go func() {
		defer close(served)
		s.Serve(sctx, ln)
	}()
	defer func() { cancel(); <-served }()
	ask := func(req warmd.Request) (warmd.Message, error) {
		c, err := warmd.Dial(ctx, sock)
		if err != nil {
			return warmd.Message{}, err
		}
		defer c.Close()
		return warmd.Do(ctx, c, req, nil)
	}
	req := warmd.Request{Op: warmd.OpTest, Root: dir, Backend: backend}
	if m, err := ask(req); err != nil || m.Error != "" {
		return Run{Err: fmt.Sprintf("first run: %v%s", err, m.Error)}
	}
	if _, err := ask(warmd.Request{Op: warmd.OpReady}); err != nil {
		return Run{Err: err.Error()}
	}
	start := time.Now()
	m, err := ask(req)
	wall := time.Since(start)
	switch {
	case err != nil:
		return Run{Err: err.Error(), Wall: wall}
	case m.Error != "":
		return Run{Err: m.Error, Wall: wall}
	case !m.Warm:
		return Run{Err: "the second run did not take the session started ahead", Wall: wall}
	}
	rep := m.Report
	return Run{Counts: Counts{rep.Passed, rep.Failed, rep.Skipped}, Exit: rep.ExitCode, Wall: wall, TestTime: rep.Duration}
}

// Table renders rows as the markdown table of docs/BENCHMARKS.md.
func Table(rows []Row) string {
	var b strings.Builder
	b.WriteString("Counts are passed/failed/skipped. Setup is the wall time of `fixpoint test` minus the test command: the setup phase (runtime image, dependency install) and the session start; cold = a new project directory, so a new cache. Warm is the whole `fixpoint test` again on the same directory (setup, Go build and jest caches kept), and the ratio is warm over native; for the Go modules native is a repeated `go test ./...`, which reuses go's cached test results as the warm run does. Kept warm is `fixpoint test --keep-warm` repeated: the daemon started the session ahead, so the run pays for the snapshot, the sync of what changed and the test command, shown apart (target ≤ 1.2× native).\n\n")
	b.WriteString("| project | native | native time | docker | docker test time | setup cold | setup cached | warm wall | warm / native | kept warm | kept / native | bwrap | match |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		p := r.Project
		fmt.Fprintf(&b, "| %s | %s (%s) | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", p.Name, p.Native, p.NativeFrom, sec(p.NativeTime),
			runCell(r.Docker), sec(r.Docker.TestTime), setupCell(r.Docker), setupCell(r.DockerWarm), warmCell(r.DockerWarm), ratioCell(r, r.DockerWarm),
			keptCell(r.DockerKept), ratioCell(r, r.DockerKept), runCell(r.Bwrap), yesNo(r.Match()))
	}
	return b.String()
}

func warmCell(r Run) string {
	if r.Err != "" {
		return "–"
	}
	return sec(r.Wall)
}

// keptCell is the kept-warm run's wall time and, of it, the test
// command's, or why it failed.
func keptCell(r Run) string {
	if r.Err != "" || r == (Run{}) {
		return runCell(r)
	}
	return fmt.Sprintf("%s (tests %s)", sec(r.Wall), sec(r.TestTime))
}

// ratioCell is a warm run's wall time over the native run's.
func ratioCell(r Row, warm Run) string {
	native := r.Project.NativeTime
	if r.Project.NativeWarm > 0 {
		native = r.Project.NativeWarm
	}
	if warm.Err != "" || warm.Wall <= 0 || native <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", warm.Wall.Seconds()/native.Seconds())
}

func runCell(r Run) string {
	if r.Err != "" {
		msg := strings.Join(strings.Fields(r.Err), " ")
		if len(msg) > 90 {
			msg = msg[:90] + "…"
		}
		return "error: " + strings.ReplaceAll(msg, "|", "\\|")
	}
	if r == (Run{}) {
		return "–"
	}
	s := r.Counts.String()
	switch {
	case r.Exit != 0:
		s += fmt.Sprintf(" (exit %d)", r.Exit)
	case r.Counts == (Counts{}):
		s += " (exit 0; the runner's output is not parsed per test)"
	}
	return s
}

func setupCell(r Run) string {
	if r.Err != "" || r == (Run{}) {
		return "–"
	}
	return sec(r.Wall - r.TestTime)
}

func sec(d time.Duration) string {
	if d <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.1f s", d.Seconds())
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "**no**"
}

// removeCaches removes the docker caches of the project at dir: its
// dependency volumes, and its Go build and test runner cache volumes (a
// parity run makes a new project each time, so nothing reuses them).
func removeCaches(dir string) {
	cli, err := engine.NewClient()
	if err != nil {
		return
	}
	defer cli.Close()
	sum := sha256.Sum256([]byte(dir))
	prefix := fmt.Sprintf("%x/", sum[:8])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	list, err := cli.VolumeList(ctx, volume.ListOptions{Filters: filters.NewArgs(filters.Arg("label", "fixpoint.cache=deps"))})
	if err != nil {
		return
	}
	for _, v := range list.Volumes {
		if strings.HasPrefix(v.Labels["fixpoint.cache.source"], prefix) {
			cli.VolumeRemove(ctx, v.Name, false)
		}
	}
	// Go build and runner caches are named by a hash of the project label.
	label := sha256.Sum256([]byte(strings.TrimSuffix(prefix, "/")))
	named := fmt.Sprintf("-%x", label[:6])
	for _, kind := range []string{"gocache", "runcache"} {
		list, err := cli.VolumeList(ctx, volume.ListOptions{Filters: filters.NewArgs(filters.Arg("label", "fixpoint.cache="+kind))})
		if err != nil {
			continue
		}
		for _, v := range list.Volumes {
			if strings.Contains(v.Name, named) {
				cli.VolumeRemove(ctx, v.Name, false)
			}
		}
	}
}

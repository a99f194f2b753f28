package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/internal/bench/humaneval"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/backends"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
)

func benchCommand() *command {
	c := &command{
		name:    "bench",
		summary: "run benchmarks: humaneval against your model, and fixpoint's own overhead",
		usage: `Usage: fixpoint bench <benchmark> [flags]

Benchmarks:
  humaneval   HumanEval through the repair loop, checked in the python sandbox
  swe         real bug-fix commits (SWE-bench style) through fix: reproduced, verified, code to fix in the first prompt
  sandbox     the cost of one sandboxed command against bare, bwrap, docker one-shot, docker exec and each gVisor runtime
  loop        the agent loop's own overhead per iteration on examples/go-bug (instant model)
  context     prompt bytes per request and per run, and whether the file to edit was in context (planted bugs)
  memory      failure-memory retrieval quality (recall@1/@3) and latency at 1k and 10k records
  lsp         the language server under load: codeAction latency during a run, didChange throughput, idle RSS
  parity      real projects (../shared/realworld, Go modules): fixpoint test's counts against a native run
  firstaction code action → first test result over the LSP wire, cold and with the prewarmed session
  all         every table of docs/BENCHMARKS.md (use --write docs/BENCHMARKS.md)
Run 'fixpoint bench <benchmark> --help' for its flags.
Example:
  fixpoint bench humaneval --data ./HumanEval.jsonl.gz --oracle --baseline
HumanEval.jsonl.gz is the official dataset (MIT): data/HumanEval.jsonl.gz
of github.com/openai/human-eval.`,
	}
	c.run = func(ctx context.Context, a *app, args []string) int {
		if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
			fmt.Fprintln(a.stdout, strings.Replace(c.usage, "\nExample:", "\n\nExample:", 1))
			if len(args) == 0 {
				return exitUsage
			}
			return exitOK
		}
		for _, sub := range benchSubcommands() {
			if strings.TrimPrefix(sub.name, "bench ") == args[0] {
				return sub.run(ctx, a, args[1:])
			}
		}
		fmt.Fprintf(a.stderr, "fixpoint bench: unknown benchmark %q\nRun 'fixpoint bench --help' for the list.\n", args[0])
		return exitUsage
	}
	return c
}

func benchSubcommands() []*command {
	cmds := []*command{benchHumanEvalCommand(), benchSWECommand()}
	for _, s := range benchSections() {
		if s.key != "humaneval" {
			cmds = append(cmds, benchSectionCommand(s))
		}
	}
	return append(cmds, benchAllCommand())
}

func benchHumanEvalCommand() *command {
	c := &command{
		name: "bench humaneval",
		usage: `Usage: fixpoint bench humaneval --data FILE [--model M | --oracle [--baseline [--write MD]]] [--attempts N] [--parallel P] [--limit K] [--out DIR] [--engines A,B]

Runs HumanEval problems through fixpoint's agent loop, the one 'fixpoint fix'
runs: each problem becomes a workspace whose solution.py holds the prompt, the
prompt is the goal, the model plans and edits solution.py, and the check runs in
the python sandbox (prompt + completion + "\n" + test + "\n" + check(entry_point),
3 s timeout, as the official evaluator; the test is hidden from the model).
Failures feed the loop's repair iterations, up to N attempts. Writes
results.jsonl, summary.json, summary.md, pass_rate.svg and each problem's run
log (data/runs/) to --out. --oracle submits the canonical solutions through the
same loop: the harness's self-check, which must score 164/164. --baseline also
times the bare checks (no loop) on the warm sessions, with a new container per
check, and as bare host processes (with --oracle only: the host never runs a
model's code), and the loop as a user's run (the stub checked, a parser
process per policy check; run logs in OUT/user-loop), all taking turns with
the loop 16 problems at a time, and prints the ratios. --parallel P starts P
sessions at once: on the kubernetes backend P pods that the cluster places
(--engines is for plain Docker engines only, which fixpoint spreads itself).
Example:
  FIXPOINT_BASE_URL=http://localhost:11434/v1 fixpoint bench humaneval \
    --data ./HumanEval.jsonl.gz --model qwen2.5-coder:7b --parallel 2
HumanEval.jsonl.gz is the official dataset (MIT): data/HumanEval.jsonl.gz
of github.com/openai/human-eval.`,
	}
	c.run = func(ctx context.Context, a *app, args []string) int {
		fs := newFlags(c, a.stderr)
		data := fs.String("data", "", "HumanEval jsonl or jsonl.gz `file` (required)")
		model := fs.String("model", "", "model name (default: the configured model)")
		oracle := fs.Bool("oracle", false, "submit the canonical solutions instead of asking a model")
		attempts := fs.Int("attempts", 3, "attempts per problem, the first included")
		parallel := fs.Int("parallel", 2, "problems checked at once, one warm sandbox session each")
		limit := fs.Int("limit", 0, "only the first `K` problems (0 = all)")
		out := fs.String("out", "", "output `dir` (default bench-out/humaneval-<time>)")
		baseline := fs.Bool("baseline", false, "also time a container per check and bare host processes (--oracle only)")
		timeout := fs.Duration("timeout", 3*time.Second, "per check program, as the official evaluator's default")
		dir := fs.String("dir", ".", "project `dir` whose configuration applies")
		engines := fs.String("engines", "", "comma-separated Docker engine `addresses` (unix://, tcp://, ssh://) to spread the sessions over")
		write := fs.String("write", "", "also replace the humaneval table of a Markdown `file` (docs/BENCHMARKS.md; needs --oracle --baseline)")
		if done, code := parseFlags(fs, args); done {
			return code
		}
		switch {
		case *data == "":
			return a.fail(usagef("--data is required: the HumanEval jsonl(.gz) file"))
		case *attempts < 1:
			return a.fail(usagef("--attempts must be at least 1"))
		case *parallel < 1:
			return a.fail(usagef("--parallel must be at least 1"))
		case *baseline && !*oracle:
			return a.fail(usagef("--baseline needs --oracle: the host floor would run a model's code outside the sandbox"))
		case *write != "" && !*baseline:
			return a.fail(usagef("--write needs --oracle --baseline: the table compares the loop with the bare checks"))
		case *oracle && *model != "":
			return a.fail(usagef("--oracle and --model exclude each other"))
		}
		root, err := workspaceDir(*dir)
		if err != nil {
			return a.fail(err)
		}
		cfg, err := a.loadConfig(root, func(c *config.Config) {
			if *model != "" {
				c.Model.Name = *model
			}
		})
		if err != nil {
			return a.fail(err)
		}
		if !*oracle && !cfg.Model.Configured() {
			return a.fail(usagef("no model configured: set FIXPOINT_BASE_URL (and FIXPOINT_API_KEY, FIXPOINT_MODEL) or pass --model, or use --oracle"))
		}
		problems, err := humaneval.Load(*data)
		if err != nil {
			return a.fail(usagef("--data %s: %v", *data, err))
		}
		if *limit > 0 && *limit < len(problems) {
			problems = problems[:*limit]
		}
		if *out == "" {
			*out = filepath.Join("bench-out", "humaneval-"+time.Now().Format("20060102-150405"))
		}
		return runHumanEval(ctx, a, cfg, problems, humanEvalRun{
			engines: splitEngines(*engines), write: *write,
			data: *data, oracle: *oracle, attempts: *attempts, parallel: *parallel, out: *out, baseline: *baseline, timeout: *timeout,
		})
	}
	return c
}

type humanEvalRun struct {
	write            string // a Markdown file whose humaneval table to replace
	engines          []string
	data             string
	oracle, baseline bool
	attempts         int
	parallel         int
	out              string
	timeout          time.Duration
}

func runHumanEval(ctx context.Context, a *app, cfg *config.Config, problems []humaneval.Problem, r humanEvalRun) int {
	s, err := measureHumanEval(ctx, a, cfg, problems, r)
	if err != nil {
		return a.failSandbox(err)
	}
	fmt.Fprintf(a.stdout, "HumanEval %s: %d/%d passed after repair, pass@1 %.1f%%, mean attempts %.2f, %.1f s wall (sandbox %.1f s, model %.1f s), tokens %d in / %d out\n",
		s.Model, s.Passed, s.Problems, 100*s.PassAt1, s.AttemptsMean, s.WallSeconds, s.SandboxSeconds, s.ModelSeconds, s.TokensIn, s.TokensOut)
	for _, name := range slices.Sorted(maps.Keys(s.Baselines)) {
		bl := s.Baselines[name]
		fmt.Fprintf(a.stdout, "  baseline %s: %d/%d passed, %.1f s wall\n", name, bl.Passed, s.Problems, bl.Seconds)
	}
	if u := s.UserLoop; u != nil {
		fmt.Fprintf(a.stdout, "  the same loop as a user's run (stub checked, a parser process per policy check): %d/%d passed, %.1f s wall\n", u.Passed, s.Problems, u.Seconds)
	}
	if vsBare, oneShotVs, ok := s.Ratios(); ok {
		fmt.Fprintf(a.stdout, "  loop (sessions warm, taking turns with the baselines) %.1f s: %.2fx the bare checks; a container per check takes %.1fx the loop\n", s.LoopSeconds, vsBare, oneShotVs)
	}
	fmt.Fprintf(a.stdout, "Report: %s\n", filepath.Join(r.out, "summary.md"))
	if r.write != "" {
		if err := writeSection(r.write, "humaneval", renderSection(humanEvalSection(), s.Section())); err != nil {
			return a.fail(err)
		}
		fmt.Fprintf(a.stderr, "wrote the humaneval table to %s\n", r.write)
	}
	return exitOK
}

// measureHumanEval runs the benchmark and writes its outputs to r.out.
// Every problem goes through the agent loop (humaneval.Agent) on warm
// sandbox sessions; with --baseline the same checks are also timed with no
// loop, on the warm sessions, with a new container per check, and as bare
// host processes, taking turns with the loop (humaneval.Compare).
func measureHumanEval(ctx context.Context, a *app, cfg *config.Config, problems []humaneval.Problem, r humanEvalRun) (*humaneval.Summary, error) {
	backend, err := backends.Open(ctx, cfg, &backends.Options{Warn: a.stderr, Logger: a.logger, Engines: r.engines})
	if err != nil {
		return nil, err
	}
	pySnap := &sandbox.Snapshot{Files: map[string]sandbox.File{"main.py": {Data: []byte("\n")}}}
	spec := backends.SpecFor(cfg, registry.Detect(pySnap), registry.Fallback(), pySnap)
	start := time.Now()
	pool, err := humaneval.NewPool(ctx, backend, spec, r.parallel)
	if err != nil {
		return nil, err
	}
	defer pool.Close()
	started := time.Since(start)
	reportSpread(a, backend)
	solver := &humaneval.Agent{Backend: pool, Config: cfg, Dir: r.out, Timeout: r.timeout}
	defer solver.Close()
	modelName := "oracle (canonical solutions)"
	if !r.oracle {
		solver.Model = llm.New(cfg.Model, &llm.Options{Logger: a.logger})
		modelName = cfg.Model.RoleModel("coder")
	}
	var results []humaneval.ProblemResult
	var lanes []*humaneval.Lane
	if r.baseline {
		lanes, err = compareHumanEval(ctx, a, problems, r, solver, pool, backend, spec)
		results = lanes[0].Results
	} else {
		opts := humaneval.Options{Attempts: r.attempts, Parallel: r.parallel, Progress: progressBar(a.stderr, "humaneval")}
		results, err = humaneval.Run(ctx, problems, solver, opts)
	}
	if err != nil {
		return nil, err
	}
	s := humaneval.Summarize(results, r.attempts)
	s.WallSeconds = time.Since(start).Seconds()
	s.StartSeconds = started.Seconds()
	s.Model, s.Temperature, s.Seed = modelName, cfg.Model.Temperature, cfg.Model.Seed
	s.Parallel, s.Checker = r.parallel, "agent loop on warm sandbox sessions ("+backend.Name()+")"
	s.Version, s.Date, s.Data = version, time.Now().UTC().Format(time.RFC3339), r.data
	if len(lanes) > 0 {
		s.LoopSeconds = lanes[0].Time.Seconds()
		s.WallSeconds = s.StartSeconds + s.LoopSeconds // the baselines' turns are not the loop's
		s.Baselines = map[string]humaneval.Baseline{}
		for _, l := range lanes[1:] {
			bl := humaneval.Baseline{Seconds: l.Time.Seconds(), Passed: humaneval.Summarize(l.Results, 1).Passed}
			if l.Name == "user loop" {
				s.UserLoop = &bl
				continue
			}
			s.Baselines[l.Name] = bl
		}
	}
	if err := humaneval.Write(r.out, results, s); err != nil {
		return nil, err
	}
	return s, nil
}

// compareHumanEval times the loop and the three baselines in turns; the
// loop is the first lane returned.
func compareHumanEval(ctx context.Context, a *app, problems []humaneval.Problem, r humanEvalRun, solver *humaneval.Agent, pool *humaneval.Pool, backend sandbox.Backend, spec sandbox.Spec) ([]*humaneval.Lane, error) {
	lanes := humaneval.Lanes(solver, r.attempts, pool, backend, spec, r.timeout)
	// The loop without the benchmark's shortcuts, last: what they save.
	user := &humaneval.Agent{Model: solver.Model, Backend: pool, Config: solver.Config, Dir: filepath.Join(r.out, "user-loop"),
		Timeout: r.timeout, RunStub: true, ParserPerCheck: true}
	defer user.Close()
	lanes = append(lanes, &humaneval.Lane{Name: "user loop", Solver: user, Attempts: r.attempts})
	bar := progressBar(a.stderr, "humaneval, loop and baselines in turns")
	err := humaneval.Compare(ctx, problems, lanes, humaneval.CompareOptions{
		Parallel: r.parallel,
		Progress: func(done, total int) { bar(done, total, humaneval.Summarize(lanes[0].Results, 1).Passed) },
	})
	return lanes, err
}

// progressBar returns a progress callback: a bar redrawn in place on a
// terminal, a line every 10% otherwise.
func progressBar(w io.Writer, label string) func(done, total, passed int) {
	tty := isTerminal(w)
	return func(done, total, passed int) {
		if tty {
			const width = 30
			n := width * done / total
			fmt.Fprintf(w, "\r%s [%s%s] %d/%d passed %d", label, strings.Repeat("#", n), strings.Repeat(".", width-n), done, total, passed)
			if done == total {
				fmt.Fprintln(w)
			}
			return
		}
		if done == total || done%max(1, total/10) == 0 {
			fmt.Fprintf(w, "%s: %d/%d done, %d passed\n", label, done, total, passed)
		}
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// failSandbox reports a sandbox that cannot start: a missing engine or
// image is a set-up problem (exit 2) whose message names the fix.
func (a *app) failSandbox(err error) int {
	if errors.Is(err, sandbox.ErrUnavailable) || errors.Is(err, sandbox.ErrImageMissing) {
		fmt.Fprintf(a.stderr, "fixpoint: %v\n", err)
		return exitUsage
	}
	return a.fail(err)
}

// splitEngines parses --engines A,B.
func splitEngines(s string) []string {
	var out []string
	for _, h := range strings.Split(s, ",") {
		if h = strings.TrimSpace(h); h != "" {
			out = append(out, h)
		}
	}
	return out
}

// reportSpread prints how many warm sessions each engine holds when the
// backend spreads sessions over several engines (--engines).
func reportSpread(a *app, b sandbox.Backend) {
	if u, ok := b.(interface{ Unwrap() sandbox.Backend }); ok {
		b = u.Unwrap()
	}
	s, ok := b.(*docker.Spread)
	if !ok {
		return
	}
	started := s.Started()
	for _, h := range slices.Sorted(maps.Keys(started)) {
		fmt.Fprintf(a.stderr, "engine %s: %d warm sessions\n", h, started[h])
	}
}

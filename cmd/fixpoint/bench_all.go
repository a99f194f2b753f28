package main

import (
	"context"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/agent/humaneval"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/internal/parity"
	"github.com/fixpoint-dev/fixpoint/memory"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/backends"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxbench"
	"github.com/fixpoint-dev/fixpoint/server"
)

// benchSections lists the tables of docs/BENCHMARKS.md in order.
func benchSections() []benchSection {
	return []benchSection{
		{
			key: "sandbox", title: "Sandbox: cost of one command",
			command: "fixpoint bench sandbox",
			run: func(ctx context.Context, a *app) (string, error) {
				t, err := sandboxbench.Run(ctx, &sandboxbench.Options{Progress: a.stderr, Logger: a.logger})
				if err != nil {
					return "", err
				}
				return t.Markdown(), nil
			},
		},
		{
			key: "loop", title: "Agent loop: overhead per iteration",
			command: "fixpoint bench loop",
			run:     benchLoopSection,
		},
		{
			key: "context", title: "Prompt economy: context per request and per run",
			command: "fixpoint bench context",
			run:     benchContextSection,
		},
		{
			key: "memory", title: "Failure memory: retrieval quality and latency",
			command: "fixpoint bench memory",
			run: func(ctx context.Context, a *app) (string, error) {
				dir, err := os.MkdirTemp("", "fixpoint-bench-memory-")
				if err != nil {
					return "", err
				}
				defer os.RemoveAll(dir)
				r, err := memory.Bench(ctx, dir)
				if err != nil {
					return "", err
				}
				return r.Markdown(), nil
			},
		},
		{
			key: "lsp", title: "Language server under load",
			command: "fixpoint bench lsp",
			run: func(ctx context.Context, a *app) (string, error) {
				exe, _ := os.Executable()
				r, err := server.Bench(ctx, &server.BenchOptions{Binary: exe, Logger: a.logger})
				if err != nil {
					return "", err
				}
				return "A run is in flight (a fake engine that blocks until cancelled) while the client sends the load over an in-memory pipe; latencies are client-observed round trips.\n\n" + r.Markdown(), nil
			},
		},
		{
			key: "parity", title: "Real projects: `fixpoint test` against a native run",
			command: "fixpoint bench parity",
			run:     benchParitySection,
		},
		{
			key: "humaneval", title: "HumanEval self-checks and throughput",
			command: "fixpoint bench humaneval --data ../shared/data/humaneval/HumanEval.jsonl.gz --oracle --baseline",
			run:     benchHumanEvalSection,
		},
	}
}

func benchHumanEvalSection(ctx context.Context, a *app) (string, error) {
	data := filepath.Join("..", "shared", "data", "humaneval", "HumanEval.jsonl.gz")
	problems, err := humaneval.Load(data)
	if err != nil {
		return "", err
	}
	cfg, err := a.loadConfig("", nil)
	if err != nil {
		return "", err
	}
	out, err := os.MkdirTemp("", "fixpoint-bench-humaneval-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(out)
	s, err := measureHumanEval(ctx, a, cfg, problems, humanEvalRun{
		data: data, oracle: true, baseline: true, attempts: 1, parallel: 2, out: out, timeout: 3e9,
	})
	if err != nil {
		return "", err
	}
	var b strings.Builder
	fmt.Fprintf(&b, "The oracle submits the canonical solutions through the whole agent loop (plan, SEARCH/REPLACE edit, policy checks, sandbox check): the harness's self-check. All %d problems, parallel %d, official 3 s timeout per check.\n\n", s.Problems, s.Parallel)
	fmt.Fprintf(&b, "| run | passed | wall |\n|---|---|---|\n")
	fmt.Fprintf(&b, "| fixpoint: %s | %d/%d | %.1f s |\n", s.Checker, s.Passed, s.Problems, s.WallSeconds)
	for _, name := range slices.Sorted(maps.Keys(s.Baselines)) {
		bl := s.Baselines[name]
		fmt.Fprintf(&b, "| baseline: %s | %d/%d | %.1f s |\n", name, bl.Passed, s.Problems, bl.Seconds)
	}
	fmt.Fprintf(&b, "\nThe fixpoint row's wall time includes starting the sandbox sessions and, per problem, a baseline check, the loop's prompts, the edit and its policy check, and the check itself. The check-only rows time the same 164 check programs with no loop. Scripted-model self-checks (run by `go test ./agent/humaneval` through the loop and a scripted OpenAI-compatible server): a model that always answers `return None` scores 0/164; one whose first attempt is broken and second canonical scores pass@1 0 and 164/164 after repair.\n")
	return b.String(), nil
}

// benchSectionCommand makes `fixpoint bench KEY [--write FILE]`.
func benchSectionCommand(s benchSection) *command {
	c := &command{
		name:  "bench " + s.key,
		usage: fmt.Sprintf("Usage: fixpoint bench %s [--write FILE]\n\nMeasures: %s. Prints a Markdown table; --write replaces that table in FILE.\nExample:\n  %s --write docs/BENCHMARKS.md", s.key, strings.ToLower(s.title), s.command),
	}
	c.run = func(ctx context.Context, a *app, args []string) int {
		fs := newFlags(c, a.stderr)
		write := fs.String("write", "", "update this section of a Markdown `file` instead of printing")
		if done, code := parseFlags(fs, args); done {
			return code
		}
		return runSections(ctx, a, []benchSection{s}, *write)
	}
	return c
}

func benchAllCommand() *command {
	c := &command{
		name:  "bench all",
		usage: "Usage: fixpoint bench all [--write FILE]\n\nRuns every benchmark table of docs/BENCHMARKS.md in turn.\nExample:\n  fixpoint bench all --write docs/BENCHMARKS.md",
	}
	c.run = func(ctx context.Context, a *app, args []string) int {
		fs := newFlags(c, a.stderr)
		write := fs.String("write", "", "update the sections of a Markdown `file` instead of printing")
		if done, code := parseFlags(fs, args); done {
			return code
		}
		return runSections(ctx, a, benchSections(), *write)
	}
	return c
}

func runSections(ctx context.Context, a *app, sections []benchSection, write string) int {
	code := exitOK
	for _, s := range sections {
		fmt.Fprintf(a.stderr, "==> bench %s\n", s.key)
		body, err := s.run(ctx, a)
		if err != nil {
			fmt.Fprintf(a.stderr, "fixpoint bench %s: %v\n", s.key, err)
			if ctx.Err() != nil {
				return a.failSandbox(err)
			}
			code = exitNotReached
			continue
		}
		text := renderSection(s, body)
		if write == "" {
			fmt.Fprintln(a.stdout, text)
			continue
		}
		if err := writeSection(write, s.key, text); err != nil {
			return a.fail(err)
		}
		fmt.Fprintf(a.stderr, "    wrote the %s table to %s\n", s.key, write)
	}
	return code
}

// benchLoopSection measures the loop's own cost per iteration on a copy of
// examples/go-bug, with an instant model, on the configured backend.
func benchLoopSection(ctx context.Context, a *app) (string, error) {
	src, err := filepath.Abs(filepath.Join("examples", "go-bug"))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(src, "go.mod")); err != nil {
		return "", fmt.Errorf("run from the repository root: %s not found", src)
	}
	root, err := os.MkdirTemp("", "fixpoint-bench-loop-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(root)
	if err := os.CopyFS(root, os.DirFS(src)); err != nil {
		return "", err
	}
	cfg, backend, done, err := a.benchBackend(ctx)
	if err != nil {
		return "", err
	}
	defer done()
	r, err := agent.BenchLoop(ctx, &agent.BenchOptions{Config: cfg, Backend: backend, Root: root, Runs: 5})
	if err != nil {
		return "", err
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.1f ms", float64(d.Microseconds())/1000) }
	var b strings.Builder
	fmt.Fprintf(&b, "`fixpoint fix` on a copy of examples/go-bug with an instant scripted model, %d runs on the %s backend, medians. Overhead is the iteration's wall time minus the test command's own time and the model's; the target is under 50 ms.\n\n", r.Runs, r.Backend)
	fmt.Fprintf(&b, "| measure | median |\n|---|---|\n")
	fmt.Fprintf(&b, "| wall per iteration | %s |\n| test command (go test -json) | %s |\n| **overhead** (max %s) | **%s** |\n", ms(r.Iteration), ms(r.TestTime), ms(r.OverheadMax), ms(r.Overhead))
	fmt.Fprintf(&b, "| of which: sandbox sync | %s |\n| of which: sandbox run beyond the test's own time | %s |\n| of which: edit parse and apply | %s |\n", ms(r.Sync), ms(r.SandboxExtra), ms(r.Parse))
	return b.String(), nil
}

// benchParitySection runs internal/parity over ../shared/realworld and
// three Go modules from the proxy (golang.org/x/text included), on docker and bwrap.
func benchParitySection(ctx context.Context, a *app) (string, error) {
	rw := filepath.Join("..", "shared", "realworld")
	if v := a.getenv("FIXPOINT_REALWORLD"); v != "" {
		rw = v
	}
	rows, err := parity.Check(ctx, parity.Corpus(rw), &parity.Options{Progress: a.stderr})
	if err != nil {
		return "", err
	}
	return parity.Table(rows), nil
}

// benchBackend is the configuration and sandbox backend of a benchmark
// that runs the agent: the user's configuration with a throwaway data
// directory (runs and memory stay out of the user's). done removes both.
func (a *app) benchBackend(ctx context.Context) (*config.Config, sandbox.Backend, func(), error) {
	cfg, err := a.loadConfig("", nil)
	if err != nil {
		return nil, nil, nil, err
	}
	data, err := os.MkdirTemp("", "fixpoint-bench-data-")
	if err != nil {
		return nil, nil, nil, err
	}
	cfg.DataDir = data
	backend, err := backends.Open(ctx, cfg, &backends.Options{Warn: a.stderr, Logger: a.logger})
	if err != nil {
		os.RemoveAll(data)
		return nil, nil, nil, err
	}
	done := func() {
		if c, ok := backend.(io.Closer); ok {
			c.Close()
		}
		os.RemoveAll(data)
	}
	return cfg, backend, done, nil
}

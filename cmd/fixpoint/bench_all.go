package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/internal/bench/humaneval"
	"github.com/fixpoint-dev/fixpoint/internal/bench/loop"
	"github.com/fixpoint-dev/fixpoint/internal/bench/lsp"
	"github.com/fixpoint-dev/fixpoint/internal/bench/recall"
	"github.com/fixpoint-dev/fixpoint/internal/bench/sandboxcost"
	"github.com/fixpoint-dev/fixpoint/internal/parity"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/backends"
)

// benchSections lists the tables of docs/BENCHMARKS.md in order.
func benchSections() []benchSection {
	return []benchSection{
		{
			key: "sandbox", title: "Sandbox: cost of one command",
			command: "fixpoint bench sandbox",
			run: func(ctx context.Context, a *app) (string, error) {
				t, err := sandboxcost.Run(ctx, &sandboxcost.Options{Progress: a.stderr, Logger: a.logger})
				if err != nil {
					return "", err
				}
				floor, err := sandboxcost.MeasureFloor(ctx, &sandboxcost.Options{Progress: a.stderr, Logger: a.logger})
				if err != nil {
					return "", fmt.Errorf("gVisor floor: %w", err)
				}
				return t.Markdown() + "\n### Where a command's time goes (gVisor floor)\n\n" + floor.Markdown(), nil
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
				r, err := recall.Run(ctx, dir)
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
				r, err := lsp.Run(ctx, &lsp.Options{Binary: exe, Logger: a.logger})
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
		humanEvalSection(),
		{
			key: "firstaction", title: "First action: code action to first test result, cold and warm",
			command: "fixpoint bench firstaction",
			run:     benchFirstActionSection,
		},
	}
}

// humanEvalSection is the HumanEval table: `fixpoint bench humaneval
// --oracle --baseline` writes it too (--write).
func humanEvalSection() benchSection {
	return benchSection{
		key: "humaneval", title: "HumanEval self-checks and throughput",
		command: "fixpoint bench humaneval --data ./HumanEval.jsonl.gz --oracle --baseline",
		run:     benchHumanEvalSection,
	}
}

// benchHumanEvalSection runs `fixpoint bench humaneval --oracle
// --baseline` on the official HumanEval.jsonl.gz: $FIXPOINT_HUMANEVAL, or
// this repository's CI copy in ../shared/data/humaneval.
func benchHumanEvalSection(ctx context.Context, a *app) (string, error) {
	data := a.getenv("FIXPOINT_HUMANEVAL")
	if data == "" {
		data = filepath.Join("..", "shared", "data", "humaneval", "HumanEval.jsonl.gz")
	}
	problems, err := humaneval.Load(data)
	if err != nil {
		return "", fmt.Errorf("%w (set FIXPOINT_HUMANEVAL to the official HumanEval.jsonl.gz: github.com/openai/human-eval, data/HumanEval.jsonl.gz)", err)
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
		data: data, oracle: true, baseline: true, attempts: 1, parallel: 2, out: out, timeout: 3 * time.Second,
	})
	if err != nil {
		return "", err
	}
	return s.Section(), nil
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
	r, err := loop.Run(ctx, &loop.Options{Config: cfg, Backend: backend, Root: root, Runs: 5})
	if err != nil {
		return "", err
	}
	return r.Markdown(), nil
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

package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/internal/bench/swe"
	"github.com/fixpoint-dev/fixpoint/sandbox/backends"
)

func benchSWECommand() *command {
	c := &command{
		name: "bench swe",
		usage: `Usage: fixpoint bench swe --instances FILE [--oracle | --model M | --prompt-only] [--split tuning|heldout] [--round N] [--only ID,..] [--limit K] [--parallel N] [--out DIR] [--write MD]

Runs real bug-fix instances (SWE-bench style) through 'fixpoint fix': each
instance's tree before the fix, with the maintainers' test patch applied,
goes through the real loop, sandbox and context builder. Reports per
instance: whether the failure was reproduced, whether the fix was verified,
whether the code every hunk of the maintainers' fix edits was in the first
prompt, the first prompt's size, the requests, and the wall time against
two native runs of the suite (the setup phase runs first, untimed, unless
--cold-setup), and how many times the whole suite and the failing tests
alone ran. The corpus's native times were measured when it was built, on
another load: --reference (on by default) also times each instance's test
command after its fix, on the tree before it and on the tree the fix
leaves, in sessions of the same backend, and reports the wall against that too ("sandboxed suite"), with the phases
the wall went to. --oracle replies with the maintainers' patch
(measures everything but the model). --prompt-only stops each instance at
its first prompt (set up, test patch applied, failing tests run, first
prompt built and judged; no model asked): the cheap way to measure the
context builder; it keeps each first prompt in DIR/prompts. --parallel N runs N
instances at once: on the kubernetes backend N instances' pods are created
together and the cluster places them; on one Docker engine they share it.
The instance format (JSON lines) is in
internal/bench/swe/corpus/README.md; the bundled corpus is
internal/bench/swe/corpus/instances.jsonl.
Example:
  fixpoint bench swe --instances internal/bench/swe/corpus/instances.jsonl --oracle --split tuning
  fixpoint bench swe --instances internal/bench/swe/corpus/instances.jsonl --prompt-only --split tuning
  FIXPOINT_BASE_URL=http://localhost:11434/v1 fixpoint bench swe --instances my.jsonl --model qwen2.5-coder:7b`,
	}
	c.run = func(ctx context.Context, a *app, args []string) int {
		fs := newFlags(c, a.stderr)
		file := fs.String("instances", "", "instances `file` (JSON lines; required)")
		model := fs.String("model", "", "model name (default: the configured model)")
		oracle := fs.Bool("oracle", false, "reply with each instance's gold patch instead of asking a model")
		coldSetup := fs.Bool("cold-setup", false, "time each instance's setup phase (runtime image, dependency install) with its fix; by default it runs first, untimed, as the native time has the dependencies installed")
		promptOnly := fs.Bool("prompt-only", false, "stop each instance at its first prompt: judge the context, ask no model")
		split := fs.String("split", "", "only instances of this split (tuning or heldout)")
		only := fs.String("only", "", "only these comma-separated instance `ids`")
		round := fs.Int("round", 0, "only instances added in corpus round `N` (their \"round\" field; 0 = all)")
		limit := fs.Int("limit", 0, "only the first `K` instances (0 = all)")
		out := fs.String("out", "", "output `dir` for results.jsonl and summary.md (default bench-out/swe-<time>)")
		write := fs.String("write", "", "also replace the swe table of a Markdown `file` (docs/BENCHMARKS.md)")
		reference := fs.Bool("reference", true, "also time each instance's test command after its fix, on the tree before it and the tree it leaves, in sessions of the same backend: the suite's cost at this run's load (the \"sandboxed suite\" columns), beside the corpus's native time")
		parallel := fs.Int("parallel", 1, "instances run at once, each with its own sandbox sessions (on the kubernetes backend the cluster places their pods)")
		var sf sandboxFlags
		sf.register(fs)
		if done, code := parseFlags(fs, args); done {
			return code
		}
		switch {
		case *file == "":
			return a.fail(usagef("--instances is required: a JSON-lines file of instances"))
		case *oracle && *model != "":
			return a.fail(usagef("--oracle and --model exclude each other"))
		case *promptOnly && (*oracle || *model != ""):
			return a.fail(usagef("--prompt-only asks no model: it excludes --oracle and --model"))
		case *round < 0:
			return a.fail(usagef("--round %d: want a round number (1 or more), or 0 for all", *round))
		case *parallel < 1:
			return a.fail(usagef("--parallel must be at least 1"))
		case *split != "" && *split != "tuning" && *split != "heldout":
			return a.fail(usagef("--split %q: want tuning or heldout", *split))
		}
		instances, err := swe.Load(*file)
		if err != nil {
			return a.fail(usagef("--instances: %v", err))
		}
		if unknown := unknownIDs(instances, *only); len(unknown) > 0 {
			return a.fail(usagef("--only: no instance %s in %s (ids are the file's \"id\" fields)", strings.Join(unknown, ", "), *file))
		}
		instances = filterInstances(instances, *split, *round, *only, *limit)
		if len(instances) == 0 {
			return a.fail(usagef("no instance left after --split/--round/--only/--limit"))
		}
		cfg, err := a.loadConfig("", func(c *config.Config) {
			if *model != "" {
				c.Model.Name = *model
			}
			sf.apply(c)
		})
		if err != nil {
			return a.fail(err)
		}
		if !*oracle && !*promptOnly && !cfg.Model.Configured() {
			return a.fail(usagef("no model configured: set FIXPOINT_BASE_URL (and FIXPOINT_API_KEY, FIXPOINT_MODEL) or pass --model, or use --oracle"))
		}
		data, err := os.MkdirTemp("", "fixpoint-bench-swe-data-")
		if err != nil {
			return a.fail(err)
		}
		defer os.RemoveAll(data)
		cfg.DataDir = data
		backend, err := backends.Open(ctx, cfg, &backends.Options{Warn: a.stderr, Logger: a.logger})
		if err != nil {
			return a.failSandbox(err)
		}
		if cl, ok := backend.(interface{ Close() error }); ok {
			defer cl.Close()
		}
		opts := &swe.Options{Oracle: *oracle, PromptOnly: *promptOnly, Progress: a.stderr, ColdSetup: *coldSetup, Reference: *reference, Parallel: *parallel, Logger: a.logger}
		if !*oracle && !*promptOnly {
			opts.Model = llm.New(cfg.Model, &llm.Options{Logger: a.logger})
		}
		if *out == "" {
			*out = filepath.Join("bench-out", "swe-"+time.Now().Format("20060102-150405"))
		}
		if *promptOnly {
			opts.PromptDir = filepath.Join(*out, "prompts")
		}
		res, err := swe.Run(ctx, cfg, backend, instances, opts)
		if err != nil {
			return a.fail(err)
		}
		md := swe.Markdown(backend.Name(), *oracle, res)
		if err := writeSWE(*out, res, md); err != nil {
			return a.fail(err)
		}
		fmt.Fprint(a.stdout, md)
		fmt.Fprintf(a.stdout, "Results: %s\n", filepath.Join(*out, "results.jsonl"))
		if *write != "" {
			sec := benchSection{key: "swe", title: "Real bugs (bench swe)",
				command: "fixpoint bench swe --instances " + *file + map[bool]string{true: " --oracle", false: ""}[*oracle] +
					map[bool]string{true: " --prompt-only", false: ""}[*promptOnly]}
			if err := writeSection(*write, "swe", renderSection(sec, md)); err != nil {
				return a.fail(err)
			}
			fmt.Fprintf(a.stderr, "wrote the swe table to %s\n", *write)
		}
		return exitOK
	}
	return c
}

// unknownIDs lists the ids of only (comma-separated) that no instance has.
func unknownIDs(in []swe.Instance, only string) []string {
	have := map[string]bool{}
	for _, i := range in {
		have[i.ID] = true
	}
	var out []string
	for _, id := range strings.Split(only, ",") {
		if id = strings.TrimSpace(id); id != "" && !have[id] {
			out = append(out, id)
		}
	}
	return out
}

// filterInstances keeps the instances of split ("" any) and round (0 any)
// whose id only lists (comma-separated; "" all), the first limit of them
// (0 all).
func filterInstances(in []swe.Instance, split string, round int, only string, limit int) []swe.Instance {
	ids := map[string]bool{}
	for _, id := range strings.Split(only, ",") {
		if id = strings.TrimSpace(id); id != "" {
			ids[id] = true
		}
	}
	var out []swe.Instance
	for _, i := range in {
		if split != "" && i.Split != split || round != 0 && i.Round != round || len(ids) > 0 && !ids[i.ID] {
			continue
		}
		out = append(out, i)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	return out
}

func writeSWE(dir string, res []swe.Result, md string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b strings.Builder
	for _, r := range res {
		line, err := json.Marshal(r)
		if err != nil {
			return err
		}
		b.Write(line)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(filepath.Join(dir, "results.jsonl"), []byte(b.String()), 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "summary.md"), []byte(md), 0o644)
}

package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/agent/policy"
	"github.com/fixpoint-dev/fixpoint/agent/termsafe"
	"github.com/fixpoint-dev/fixpoint/config"
)

func solveCommand() *command {
	c := &command{
		name:    "solve",
		summary: "reach a goal: plan, edit, write tests, verify in the sandbox",
		usage: `Usage: fixpoint solve [flags] "goal"

Plans, edits and writes tests for the goal until the project's tests pass in the
sandbox, then writes the verified change to the workspace (unless --dry-run).
Exit code 0 when verified, 1 when not, 2 on a usage error.
Example:
  fixpoint solve --dir . "add a --json flag to the list command"`,
	}
	c.run = func(ctx context.Context, a *app, args []string) int {
		return runAgentCommand(ctx, a, c, agent.ModeSolve, args)
	}
	return c
}

// agentFlags are the flags solve and fix share.
type agentFlags struct {
	dir, testCmd   string
	dryRun, commit bool
	allowDeps      bool
	allowSetup     bool
	maxIterations  int
	sandbox        sandboxFlags
}

func (f *agentFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.dir, "dir", ".", "workspace `directory`")
	fs.StringVar(&f.testCmd, "test-cmd", "", "test `command` (overrides detection and test_cmd)")
	fs.BoolVar(&f.dryRun, "dry-run", false, "print the verified diff and write nothing")
	fs.BoolVar(&f.commit, "commit", false, "commit the verified change (in a git repository)")
	fs.IntVar(&f.maxIterations, "max-iterations", 0, "stop after `N` iterations (default from config: 6)")
	fs.BoolVar(&f.allowDeps, "allow-deps", false, "approve every dependency the model adds (default: ask on a terminal, refuse otherwise)")
	fs.BoolVar(&f.allowSetup, "allow-setup-changes", false, "approve every model edit that changes what the setup phase downloads or runs with network: install scripts, build scripts, dependency sources and versions (default: ask on a terminal, refuse otherwise)")
	f.sandbox.register(fs)
}

func runAgentCommand(ctx context.Context, a *app, c *command, mode agent.Mode, args []string) int {
	var f agentFlags
	fs := newFlags(c, a.stderr)
	f.register(fs)
	if done, code := parseFlags(fs, args); done {
		return code
	}
	goal := strings.TrimSpace(strings.Join(fs.Args(), " "))
	switch {
	case mode == agent.ModeSolve && goal == "":
		return a.fail(usagef(`solve needs a goal: fixpoint solve "goal"`))
	case f.maxIterations < 0:
		return a.fail(usagef("--max-iterations %d: must be positive", f.maxIterations))
	case f.dryRun && f.commit:
		return a.fail(usagef("--dry-run and --commit exclude each other"))
	}
	root, err := workspaceDir(f.dir)
	if err != nil {
		return a.fail(err)
	}
	if err := f.sandbox.forgetFailedSetups(root); err != nil {
		return a.fail(err)
	}
	cfg, err := a.loadConfig(root, func(cfg *config.Config) {
		if f.testCmd != "" {
			cfg.TestCmd = f.testCmd
		}
		if f.maxIterations > 0 {
			cfg.Agent.MaxIterations = f.maxIterations
		}
		f.sandbox.apply(cfg)
	})
	if err != nil {
		return a.fail(err)
	}
	if _, err := policy.New(cfg.Policy, nil); err != nil {
		return a.fail(err) // an unknown rule in [policy.rules] is a configuration error
	}
	oo := &agent.OpenOptions{Logger: a.logger, Warn: termsafe.Writer{W: a.stderr}, Approve: a.approver(f.allowDeps, f.allowSetup)}
	if !cfg.Model.Configured() {
		if mode != agent.ModeFix {
			return a.fail(usagef("no model configured: set FIXPOINT_BASE_URL, FIXPOINT_API_KEY and FIXPOINT_MODEL (or [model] in your user config, ~/.config/fixpoint/config.toml)"))
		}
		fmt.Fprintln(a.stderr, demoBanner())
		stop, err := startDemo(cfg)
		if err != nil {
			return a.fail(fmt.Errorf("start the demo model: %w", err))
		}
		defer stop()
	}
	eng, err := agent.Open(ctx, cfg, root, oo)
	if err != nil {
		return a.fail(err)
	}
	// The run's sandbox sessions are removed in the background while the
	// result is printed and written; the deferred Close waits for their
	// removal before the process exits, also after a signal.
	defer eng.Close()
	prog := newProgress(a.stderr)
	res, err := eng.Run(ctx, agent.Request{Mode: mode, Goal: goal, Root: root}, prog.event)
	prog.done()
	if err != nil {
		return a.fail(err)
	}
	printSummary(a.stdout, res)
	if !res.Verified {
		return exitNotReached
	}
	if len(res.Changes) == 0 || f.dryRun {
		return exitOK
	}
	// Written without following symlinks, never into a git directory,
	// and only when every file is still as the run saw it.
	if err := agent.WriteChanges(root, res.Changes); err != nil {
		fmt.Fprintf(a.stderr, "fixpoint: %s\nNothing was written. The verified diff is kept in the run log: %s\n", termsafe.Strip(err.Error()), res.LogPath)
		return exitNotReached
	}
	fmt.Fprintf(a.stdout, "Wrote %d file(s).\n", len(res.Changes))
	if f.commit {
		if err := commitChanges(ctx, root, res); err != nil {
			fmt.Fprintf(a.stderr, "fixpoint: --commit: %s\n", termsafe.Strip(err.Error()))
			return exitNotReached
		}
	}
	return exitOK
}

// printSummary prints the outcome, iterations and diff. The stop reason
// and the diff quote the model and the tests: they go through termsafe.
func printSummary(w io.Writer, res *agent.Result) {
	status := "NOT VERIFIED"
	if res.Verified {
		status = "VERIFIED"
	}
	fmt.Fprintf(w, "%s · %s · %d iteration(s) · %d+%d tokens · %s · run %s\n", status, termsafe.Strip(res.StopReason), len(res.Iterations), res.TokensIn, res.TokensOut, res.Wall.Round(1e7), res.RunID)
	for _, it := range res.Iterations {
		fmt.Fprintf(w, "  iteration %d: %d passed, %d failed", it.N, it.Passed, it.Failed)
		if it.Progress != "" {
			fmt.Fprintf(w, " (%s)", termsafe.Strip(it.Progress))
		}
		if it.Malformed > 0 {
			fmt.Fprintf(w, ", %d reply(ies) not applied", it.Malformed)
		}
		fmt.Fprintln(w)
	}
	if res.Diff != "" {
		if !res.Verified {
			fmt.Fprintln(w, "Last attempt (not applied):")
		}
		fmt.Fprint(w, termsafe.Strip(res.Diff))
	}
}

// commitChanges commits exactly the changed paths with a generated message.
// The paths are checked on the host once more (no symlink, no git
// directory) and passed to git as literal pathspecs; git itself runs
// without an fsmonitor, so a configuration planted in the repository
// could not run a command through this call.
func commitChanges(ctx context.Context, root string, res *agent.Result) error {
	git := func(args ...string) error {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", root, "-c", "core.fsmonitor=false"}, args...)...)
		cmd.Env = append(os.Environ(), "GIT_LITERAL_PATHSPECS=1")
		out, err := cmd.CombinedOutput()
		if err != nil {
			return fmt.Errorf("git %s: %v: %s", args[0], err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	if err := git("rev-parse", "--is-inside-work-tree"); err != nil {
		return fmt.Errorf("%s is not in a git repository", root)
	}
	if err := agent.CheckChanges(root, res.Changes); err != nil {
		return fmt.Errorf("not committed: %w", err)
	}
	var paths []string
	for _, c := range res.Changes {
		paths = append(paths, c.Path)
	}
	if err := git(append([]string{"add", "-A", "--"}, paths...)...); err != nil {
		return err
	}
	return git(append([]string{"commit", "-q", "-m", commitMessage(res), "--"}, paths...)...)
}

func commitMessage(res *agent.Result) string {
	subject := "fixpoint: fix failing tests"
	if res.Mode == agent.ModeSolve {
		subject = "fixpoint: " + firstLine(res.Goal)
	}
	if len(subject) > 72 {
		subject = subject[:71] + "…"
	}
	var b strings.Builder
	b.WriteString(subject + "\n\n")
	passed := 0
	if res.Final != nil {
		passed = res.Final.Passed
	}
	fmt.Fprintf(&b, "Verified in the sandbox by fixpoint run %s: %d tests pass after %d iteration(s).\n", res.RunID, passed, len(res.Iterations))
	if res.Baseline != nil && res.Baseline.Failed > 0 {
		fmt.Fprintf(&b, "Before: %d failing.\n", res.Baseline.Failed)
	}
	b.WriteString("\nFiles:\n")
	for _, c := range res.Changes {
		fmt.Fprintf(&b, "  %s\n", c.Path)
	}
	return b.String()
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

// progress shows run events: one rewritten status line on a terminal,
// plain lines otherwise.
type progress struct {
	w    io.Writer
	tty  bool
	last string
	wide int
}

func newProgress(w io.Writer) *progress {
	p := &progress{w: w}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) event(ev agent.Event) {
	if ev.Delta != "" || ev.Message == "" {
		return
	}
	// The message may quote the model or a test (a reply not applied, a
	// failure signature): stripped here, so the status line's own \r stays.
	line := fmt.Sprintf("[%s] %s", ev.Phase, termsafe.Strip(ev.Message))
	if ev.TokensIn+ev.TokensOut > 0 {
		line += fmt.Sprintf(" · %d tokens", ev.TokensIn+ev.TokensOut)
	}
	if line == p.last {
		return
	}
	p.last = line
	if !p.tty {
		fmt.Fprintln(p.w, line)
		return
	}
	pad := ""
	if n := p.wide - len(line); n > 0 {
		pad = strings.Repeat(" ", n)
	}
	if ev.Phase == agent.PhaseMemory {
		// Which remembered fixes the prompts use stays on screen: the
		// next status does not overwrite it.
		fmt.Fprintf(p.w, "\r%s%s\n", line, pad)
		p.wide = 0
		return
	}
	p.wide = len(line)
	fmt.Fprintf(p.w, "\r%s%s", line, pad)
}

func (p *progress) done() {
	if p.tty && p.wide > 0 {
		fmt.Fprintln(p.w)
	}
}

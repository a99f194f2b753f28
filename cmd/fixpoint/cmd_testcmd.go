package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/agent/termsafe"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/internal/warmd"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

func testCommand() *command {
	c := &command{
		name:    "test",
		summary: "run the project's tests in the sandbox and print structured results",
		usage: `Usage: fixpoint test [flags]

Runs the detected (or configured) test command in the sandbox on a snapshot of
the workspace and prints one line per test. Exit code 0 when all pass, 1 when
any fails, 2 on a usage error.
Example:
  fixpoint test --dir examples/go-bug --json`,
	}
	c.run = func(ctx context.Context, a *app, args []string) int {
		fs := newFlags(c, a.stderr)
		dir := fs.String("dir", ".", "workspace `directory`")
		asJSON := fs.Bool("json", false, "print the report as JSON")
		testCmd := fs.String("test-cmd", "", "test `command` (overrides detection and test_cmd)")
		keepDefault, kerr := keepWarmDefault(a.getenv)
		keepWarm := fs.Duration("keep-warm", keepDefault, "run through the fixpoint daemon, which keeps the sandbox warm for the next run and exits after this `idle time` (0: off; default FIXPOINT_KEEP_WARM)")
		var sf sandboxFlags
		sf.register(fs)
		if done, code := parseFlags(fs, args); done {
			return code
		}
		if fs.NArg() > 0 {
			return a.fail(usagef("test takes no arguments (got %q)", fs.Arg(0)))
		}
		if kerr != nil {
			return a.fail(kerr)
		}
		root, err := workspaceDir(*dir)
		if err != nil {
			return a.fail(err)
		}
		if err := sf.forgetFailedSetups(root); err != nil {
			return a.fail(err)
		}
		cfg, err := a.loadConfig(root, func(c *config.Config) {
			if *testCmd != "" {
				c.TestCmd = *testCmd
			}
			sf.apply(c)
		})
		if err != nil {
			return a.fail(err)
		}
		var rep *testrun.Report
		if *keepWarm > 0 && sf.timeout != 0 {
			// The daemon's sessions run under the configured limit.
			fmt.Fprintln(a.stderr, "fixpoint: --timeout: running the tests in this process, not through the keep-warm daemon")
		}
		if *keepWarm > 0 && sf.timeout == 0 {
			rep, err = a.testThroughDaemon(ctx, warmd.Request{Op: warmd.OpTest, Root: root, Backend: sf.backend, Image: sf.image, TestCmd: *testCmd, Idle: *keepWarm})
			if errors.Is(err, errDaemonFailed) {
				fmt.Fprintf(a.stderr, "fixpoint: %v; running the tests in this process\n", err)
				rep, err = nil, nil
			} else if err != nil {
				return a.fail(err)
			}
		}
		if rep == nil {
			eng, err := agent.Open(ctx, cfg, root, &agent.OpenOptions{Logger: a.logger, Warn: termsafe.Writer{W: a.stderr}, NoModel: true})
			if err != nil {
				return a.fail(err)
			}
			defer eng.Close()
			rep, err = eng.Test(ctx, root, nil)
			if err != nil {
				if *asJSON {
					// A script reading --json gets an answer on every path.
					enc := json.NewEncoder(a.stdout)
					enc.SetIndent("", "  ")
					enc.Encode(map[string]string{"error": err.Error()})
				}
				return a.fail(err)
			}
		}
		if *asJSON {
			enc := json.NewEncoder(termsafe.JSONWriter{W: a.stdout})
			enc.SetIndent("", "  ")
			enc.Encode(rep)
		} else {
			printReport(a.stdout, rep)
		}
		if !rep.OK() {
			return exitNotReached
		}
		return exitOK
	}
	return c
}

// printReport prints one line per test, failures with their location and
// message, then the counts. Everything a test reported goes through
// termsafe: the code under test chose it.
func printReport(w io.Writer, rep *testrun.Report) {
	for _, t := range rep.Tests {
		fmt.Fprintf(w, "%-5s %s", statusWord(t.Status), termsafe.Strip(t.ID))
		if t.File != "" {
			fmt.Fprintf(w, "  %s:%d", termsafe.Strip(t.File), t.Line)
		}
		fmt.Fprintln(w)
		if t.Status == testrun.StatusFail || t.Status == testrun.StatusError {
			if t.Message != "" {
				fmt.Fprintf(w, "      %s\n", termsafe.Strip(t.Message))
			}
			if t.Expected != "" || t.Actual != "" {
				fmt.Fprintf(w, "      expected: %s\n      actual:   %s\n", termsafe.Strip(t.Expected), termsafe.Strip(t.Actual))
			}
		}
	}
	if len(rep.Tests) == 0 && rep.Output != "" {
		fmt.Fprintln(w, termsafe.Strip(rep.Output))
	}
	extra := ""
	switch {
	case rep.TimedOut && rep.Timeout != nil:
		extra = " · " + termsafe.Strip(rep.Timeout.Note)
	case rep.TimedOut:
		extra = fmt.Sprintf(" · timed out after %s: the test command hit its time limit (sandbox.timeout in your fixpoint config, or --timeout)", rep.Duration.Round(time.Second))
	case len(rep.Tests) == 0 && rep.ExitCode == 0 || rep.Runner == "pytest" && rep.ExitCode == 5:
		extra = fmt.Sprintf(" · no tests found: %q ran and reported no test (set test_cmd if that is not how the project runs its tests)", strings.Join(rep.Command, " "))
	case rep.OOM:
		extra = " · killed: out of memory"
	}
	fmt.Fprintf(w, "%d passed, %d failed, %d skipped · exit code %d · %s%s\n", rep.Passed, rep.Failed, rep.Skipped, rep.ExitCode, rep.Duration.Round(1e6), extra)
	if note := rep.OutputCut.Note(); note != "" {
		fmt.Fprintf(w, "note: %s\n", note)
	}
}

func statusWord(s testrun.Status) string {
	switch s {
	case testrun.StatusPass:
		return "PASS"
	case testrun.StatusFail:
		return "FAIL"
	case testrun.StatusSkip:
		return "SKIP"
	}
	return "ERROR"
}

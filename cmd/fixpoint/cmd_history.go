package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/fixpoint-dev/fixpoint/agent/runlog"
	"github.com/fixpoint-dev/fixpoint/agent/termsafe"
)

func historyCommand() *command {
	c := &command{
		name:    "history",
		summary: "list past runs, or show one with its diff and iterations",
		usage: `Usage: fixpoint history [--json] [show ID]

Lists the runs recorded in the data dir (newest first), or prints one run:
its goal, iterations, stop reason and diff. ID may be a unique prefix.
Example:
  fixpoint history
  fixpoint history show 20261122-0012`,
	}
	c.run = func(ctx context.Context, a *app, args []string) int {
		fs := newFlags(c, a.stderr)
		asJSON := fs.Bool("json", false, "print JSON")
		if done, code := parseFlags(fs, args); done {
			return code
		}
		cfg, err := a.loadConfig("", nil)
		if err != nil {
			return a.fail(err)
		}
		dir := filepath.Join(cfg.DataDir, "runs")
		rest := fs.Args()
		switch {
		case len(rest) == 0:
			return historyList(a, dir, *asJSON)
		case rest[0] == "show" && len(rest) == 2:
			return historyShow(a, dir, rest[1], *asJSON)
		case rest[0] == "show":
			return a.fail(usagef("history show needs one run ID"))
		}
		return a.fail(usagef("history: unknown argument %q (want: show ID)", rest[0]))
	}
	return c
}

func historyList(a *app, dir string, asJSON bool) int {
	runs, err := runlog.List(dir)
	if err != nil {
		return a.fail(err)
	}
	if asJSON {
		if runs == nil {
			runs = []runlog.Summary{}
		}
		enc := json.NewEncoder(termsafe.JSONWriter{W: a.stdout})
		enc.SetIndent("", "  ")
		enc.Encode(runs)
		return exitOK
	}
	if len(runs) == 0 {
		fmt.Fprintf(a.stdout, "No runs yet (run logs live in %s).\n", dir)
		return exitOK
	}
	for _, r := range runs {
		status := "not verified"
		if r.Verified {
			status = "verified"
		}
		if r.StopReason == "" {
			status = "incomplete"
		}
		what := r.Goal
		if what == "" {
			what = "(fix failing tests)"
		}
		fmt.Fprintf(a.stdout, "%s  %-5s  %-12s  %d it  %s  %s\n", r.RunID, termsafe.Strip(r.Mode), status, r.Iterations, termsafe.Strip(truncate(what, 60)), termsafe.Strip(r.Root))
	}
	return exitOK
}

func historyShow(a *app, dir, id string, asJSON bool) int {
	found, entries, err := runlog.Read(dir, id)
	if errors.Is(err, runlog.ErrNotFound) {
		return a.fail(usagef("history show: %v (see 'fixpoint history')", err))
	}
	if err != nil {
		return a.fail(err)
	}
	if asJSON {
		enc := json.NewEncoder(termsafe.JSONWriter{W: a.stdout})
		enc.SetIndent("", "  ")
		enc.Encode(entries)
		return exitOK
	}
	printRun(a.stdout, runlog.Summarize(found, filepath.Join(dir, found+".jsonl"), entries), entries)
	return exitOK
}

// printRun prints a run log for people: header, iterations, diff. What a
// run log quotes (goal, stop reason, diff) came from the user, the model
// and the tests: it is printed through termsafe.
func printRun(w io.Writer, s runlog.Summary, entries []runlog.Entry) {
	fmt.Fprintf(w, "Run %s (%s) in %s at %s\n", termsafe.Strip(s.RunID), termsafe.Strip(s.Mode), termsafe.Strip(s.Root), s.Time.Format("2006-01-02 15:04:05 MST"))
	if s.Goal != "" {
		fmt.Fprintf(w, "Goal: %s\n", termsafe.Strip(s.Goal))
	}
	var result struct {
		Verified   bool     `json:"verified"`
		StopReason string   `json:"stop_reason"`
		Diff       string   `json:"diff"`
		TokensIn   int      `json:"tokens_in"`
		TokensOut  int      `json:"tokens_out"`
		Memories   []string `json:"memories"`
	}
	for _, e := range entries {
		switch e.Kind {
		case runlog.KindIteration:
			var it struct {
				N, Passed, Failed, Malformed int
				Progress, Signature          string
				Duration                     int64
			}
			json.Unmarshal(e.Data, &it)
			fmt.Fprintf(w, "  iteration %d: %d passed, %d failed", it.N, it.Passed, it.Failed)
			if it.Progress != "" {
				fmt.Fprintf(w, " (%s)", termsafe.Strip(it.Progress))
			}
			if it.Malformed > 0 {
				fmt.Fprintf(w, ", %d reply(ies) not applied", it.Malformed)
			}
			fmt.Fprintln(w)
		case runlog.KindResult:
			json.Unmarshal(e.Data, &result)
		}
	}
	if s.StopReason == "" {
		fmt.Fprintln(w, "The run did not finish (no result recorded).")
		return
	}
	status := "NOT VERIFIED"
	if result.Verified {
		status = "VERIFIED"
	}
	fmt.Fprintf(w, "%s · %s · %d+%d tokens\n", status, termsafe.Strip(result.StopReason), result.TokensIn, result.TokensOut)
	if len(result.Memories) > 0 {
		fmt.Fprintf(w, "Memories shown: %s\n", termsafe.Strip(strings.Join(result.Memories, ", ")))
	}
	if result.Diff != "" {
		fmt.Fprint(w, termsafe.Strip(result.Diff))
	}
}

func truncate(s string, n int) string {
	s = firstLine(s)
	if len(s) > n {
		return s[:n-1] + "…"
	}
	return s
}

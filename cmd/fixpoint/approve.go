package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fixpoint-dev/fixpoint/agent/termsafe"
)

// approver decides on dependencies the model adds that are not on the
// project's allow-list (policy.allow_deps): --allow-deps approves them, a
// terminal is asked, and anything else refuses (the refusal goes back to
// the model). The sandbox has no network either way: approval lets the
// edit run, for example with modules already in the Go module cache.
func (a *app) approver(allowAll bool) func(ctx context.Context, deps []string) (bool, error) {
	return func(ctx context.Context, deps []string) (bool, error) {
		deps = safeNames(deps) // the model chose them
		if allowAll {
			fmt.Fprintf(a.stderr, "fixpoint: --allow-deps: approved %s\n", strings.Join(deps, ", "))
			return true, nil
		}
		in, ok := a.stdin.(*os.File)
		if !ok || !isTerminal(in) || !isTerminal(a.stderr) {
			fmt.Fprintf(a.stderr, "fixpoint: refused new dependencies %s (not a terminal; pass --allow-deps or add them to [policy] allow_deps)\n", strings.Join(deps, ", "))
			return false, nil
		}
		return askYesNo(ctx, in, a.stderr, fmt.Sprintf("The model's edit adds dependencies: %s. Allow the edit to run (nothing is downloaded: the sandbox has no network)? [y/N] ", strings.Join(deps, ", ")))
	}
}

// safeNames returns names without control sequences (see termsafe).
func safeNames(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = termsafe.Strip(n)
	}
	return out
}

// askYesNo prompts on w and reads one answer from r; ctx cancels it.
func askYesNo(ctx context.Context, r io.Reader, w io.Writer, prompt string) (bool, error) {
	fmt.Fprint(w, prompt)
	answer := make(chan string, 1)
	go func() { // exits when a line (or EOF) is read
		line, _ := bufio.NewReader(r).ReadString('\n')
		answer <- line
	}()
	select {
	case line := <-answer:
		l := strings.ToLower(strings.TrimSpace(line))
		return l == "y" || l == "yes", nil
	case <-ctx.Done():
		return false, ctx.Err()
	}
}

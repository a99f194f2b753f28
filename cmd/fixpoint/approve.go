package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/agent/termsafe"
)

// approver decides on a model edit that adds dependencies not on the
// project's allow-list (policy.allow_deps) or changes what the setup
// phase downloads or runs, with network (agent.Approval): --allow-deps
// approves dependencies, --allow-setup-changes setup changes, a terminal
// is asked, and anything else refuses (the refusal goes back to the
// model), with a message naming the files, the changes and the flags.
func (a *app) approver(allowDeps, allowSetup bool) func(ctx context.Context, ap agent.Approval) (bool, error) {
	return func(ctx context.Context, ap agent.Approval) (bool, error) {
		if (allowDeps || len(ap.Deps) == 0) && (allowSetup || len(ap.Setup) == 0) {
			// The names and changes come from the model's edit: no control
			// sequences reach the terminal (termsafe).
			fmt.Fprintf(a.stderr, "fixpoint: approved by flag: %s\n", termsafe.Strip(strings.Join(ap.Items(), "; ")))
			return true, nil
		}
		in, ok := a.stdin.(*os.File)
		if !ok || !isTerminal(in) || !isTerminal(a.stderr) {
			fmt.Fprintf(a.stderr, "fixpoint: %s\n", termsafe.Strip(ap.Refusal(refusalHint(ap))))
			return false, nil
		}
		return askYesNo(ctx, in, a.stderr, termsafe.Strip(ap.Question())+"\nAllow? [y/N] ")
	}
}

// refusalHint names what approves ap without a terminal.
func refusalHint(ap agent.Approval) string {
	var flags []string
	if len(ap.Deps) > 0 {
		flags = append(flags, "--allow-deps (or add them to [policy] allow_deps in your configuration)")
	}
	if len(ap.Setup) > 0 {
		flags = append(flags, "--allow-setup-changes")
	}
	return "Not a terminal, so nobody was asked; to allow such edits, run again with " + strings.Join(flags, " and ") + "."
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

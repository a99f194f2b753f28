package main

import (
	"context"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/config"
)

func fixCommand() *command {
	c := &command{
		name:    "fix",
		summary: "make the failing tests pass, verified in the sandbox",
		usage: `Usage: fixpoint fix [flags] ["extra instruction"]

Runs the tests in the sandbox; the failing tests are the goal. Edits the code
(never the tests) until they pass and no passing test breaks, then writes the
verified change (unless --dry-run). Without a configured model it runs the
bundled scripted demo model, which only knows examples/go-bug.
Exit code 0 when verified, 1 when not, 2 on a usage error.
Example:
  fixpoint fix --dir examples/go-bug --dry-run`,
	}
	c.run = func(ctx context.Context, a *app, args []string) int {
		return runAgentCommand(ctx, a, c, agent.ModeFix, args)
	}
	return c
}

// demoBanner: see agent/demo.Banner.
func demoBanner() string { return demo.Banner }

// startDemo starts the bundled scripted model and points cfg.Model at it.
func startDemo(cfg *config.Config) (stop func(), err error) {
	return demo.Start(cfg)
}

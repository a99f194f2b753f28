package main

import (
	"context"
	"os"

	"github.com/fixpoint-dev/fixpoint/internal/bench/prompt"
)

// benchContextSection runs the prompt-economy benchmark (internal/bench/prompt)
// on the configured backend.
func benchContextSection(ctx context.Context, a *app) (string, error) {
	dir, err := os.MkdirTemp("", "fixpoint-bench-context-src-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	cases, err := prompt.Cases(ctx, dir)
	if err != nil {
		return "", err
	}
	cfg, backend, done, err := a.benchBackend(ctx)
	if err != nil {
		return "", err
	}
	defer done()
	res, err := prompt.Run(ctx, cfg, backend, cases)
	if err != nil {
		return "", err
	}
	return prompt.Markdown(backend.Name(), res), nil
}

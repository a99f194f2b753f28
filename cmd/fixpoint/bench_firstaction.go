package main

import (
	"context"
	"fmt"
	"os"

	"github.com/fixpoint-dev/fixpoint/internal/bench/firstaction"
)

// benchFirstActionSection measures `fixpoint bench firstaction`: this very
// binary runs as the language server, one process per sample.
func benchFirstActionSection(ctx context.Context, a *app) (string, error) {
	exe, err := os.Executable()
	if err != nil {
		return "", fmt.Errorf("find the fixpoint binary to run as the server: %w", err)
	}
	t, err := firstaction.Run(ctx, &firstaction.Options{Binary: exe, Progress: a.stderr, Logger: a.logger})
	if err != nil {
		return "", err
	}
	return t.Markdown(), nil
}

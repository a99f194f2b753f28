package main

import (
	"context"
	"fmt"
	"runtime"
)

func versionCommand() *command {
	c := &command{
		name:    "version",
		summary: "print the version",
		usage:   "Usage: fixpoint version\n\nPrints fixpoint's version and the Go version it was built with.\nExample:\n  fixpoint version",
	}
	c.run = func(ctx context.Context, a *app, args []string) int {
		fs := newFlags(c, a.stderr)
		if done, code := parseFlags(fs, args); done {
			return code
		}
		fmt.Fprintf(a.stdout, "fixpoint %s (%s %s/%s)\n", version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
		return exitOK
	}
	return c
}

package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/docker/docker/client"

	"github.com/fixpoint-dev/fixpoint/sandbox/image"
)

func sandboxCommand() *command {
	c := &command{
		name:    "sandbox",
		summary: "run a command in a sandbox, or build the sandbox images",
		usage: `Usage:
  fixpoint sandbox run [--dir D] [--image I] [--backend docker|bwrap|none] [--timeout 30s] [--memory 512m] -- CMD ARGS...
  fixpoint sandbox images build [--lang go|python|node|all] [--force]

run     copies D into a fresh sandbox, runs CMD in /workspace, streams its output
        and exits with CMD's exit code (124 on timeout, 137 when killed for
        memory). D on the host is never modified.
images  builds the default sandbox images offline (debootstrap + docker import).
Example:
  fixpoint sandbox run --dir . -- python3 -m pytest -q
  fixpoint sandbox images build --lang python`,
	}
	c.run = func(ctx context.Context, a *app, args []string) int {
		if len(args) == 0 {
			newFlags(c, a.stderr).Usage()
			return exitUsage
		}
		switch args[0] {
		case "-h", "--help", "help":
			newFlags(c, a.stdout).Usage()
			return exitOK
		case "run":
			return sandboxRun(ctx, a, args[1:])
		case "images":
			if len(args) < 2 || args[1] != "build" {
				fmt.Fprintf(a.stderr, "fixpoint sandbox images: want `fixpoint sandbox images build [--lang go|python|node|all] [--force]`\n")
				return exitUsage
			}
			return sandboxImagesBuild(ctx, a, args[2:])
		}
		fmt.Fprintf(a.stderr, "fixpoint sandbox: unknown subcommand %q (want run or images build)\n", args[0])
		return exitUsage
	}
	return c
}

func sandboxImagesBuild(ctx context.Context, a *app, args []string) int {
	c := &command{name: "sandbox images build", usage: `Usage: fixpoint sandbox images build [--lang go|python|node|all] [--force]

Builds fixpoint-sandbox-<lang> offline: debootstrap from the machine's apt
mirror into a cached root filesystem, then docker import. An image whose
recipe did not change is skipped. Needs root (debootstrap) and a Docker engine.
Example:
  fixpoint sandbox images build --lang python`}
	fs := newFlags(c, a.stderr)
	lang := fs.String("lang", "all", "go, python, node or all")
	force := fs.Bool("force", false, "rebuild even when the image is up to date")
	if done, code := parseFlags(fs, args); done {
		return code
	}
	if fs.NArg() > 0 {
		return a.fail(usagef("sandbox images build: unexpected argument %q", fs.Arg(0)))
	}
	langs := []string{*lang}
	if *lang == "all" {
		langs = image.Langs()
	}
	for _, l := range langs {
		if _, err := image.RecipeFor(l); err != nil {
			return a.fail(usagef("--lang %s: want go, python, node or all", l))
		}
	}
	if err := requireEngine(ctx); err != nil {
		fmt.Fprintf(a.stderr, "fixpoint: %v\n", err)
		return exitUsage
	}
	b, err := image.NewBuilder(&image.Options{Progress: a.stdout, Logger: a.logger, CacheDir: image.DefaultCacheDir(a.getenv)})
	if err != nil {
		return a.fail(err)
	}
	var failed []string
	for _, l := range langs {
		if _, err := b.Build(ctx, l, *force); err != nil {
			if ctx.Err() != nil {
				fmt.Fprintf(a.stderr, "fixpoint: build %s: interrupted\n", image.ImageName(l))
				return exitNotReached
			}
			fmt.Fprintf(a.stderr, "fixpoint: build %s: %v\n", image.ImageName(l), err)
			failed = append(failed, l)
		}
	}
	if len(failed) > 0 {
		fmt.Fprintf(a.stderr, "fixpoint: %d image(s) failed: %s\n", len(failed), strings.Join(failed, ", "))
		return exitNotReached
	}
	return exitOK
}

// errNoEngine is the one-line message for a missing Docker engine.
var errNoEngine = errors.New("no Docker engine answers: start it (`sudo .ci/docker-up` or `systemctl start docker`), or use --backend bwrap")

func sandboxRun(ctx context.Context, a *app, args []string) int { return exitUsage }

// requireEngine pings the Docker engine for at most 5 seconds.
func requireEngine(ctx context.Context) error {
	cli, err := client.NewClientWithOpts(client.FromEnv, client.WithAPIVersionNegotiation())
	if err != nil {
		return errNoEngine
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx); err != nil {
		return errNoEngine
	}
	return nil
}

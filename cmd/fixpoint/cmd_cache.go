package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/backends"
	"github.com/fixpoint-dev/fixpoint/sandbox/cachedir"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
)

func cacheCommand() *command {
	c := &command{
		name:    "cache",
		summary: "report or prune the per-project caches the sandboxes keep (fixpoint cache prune)",
		usage: `Usage: fixpoint cache prune [--max SIZE] [--volumes=false]
       fixpoint cache size [--volumes=false]

The bwrap and none sandboxes keep per-project caches on this machine (Go
build caches, dependency installs). They are kept within sandbox.cache_size
(default 10g, in your config file): at start-up, at most once an hour,
fixpoint removes the least recently used projects' caches, in the
background, until the rest fits. A cache a running session uses is never
removed. The roots are under /var/tmp (as root) or your cache directory,
or $FIXPOINT_CACHE_DIR when set.
The docker sandbox keeps its caches in Docker volumes labelled
fixpoint.cache (dependency installs, Go build caches, copies of host
caches and toolchains). prune removes those too, when the engine answers:
the oldest first, until they fit in the same cap on their own; a volume a
container uses is kept. A later session recreates what it needs.
  prune   prune now and say what was freed
  size    print the roots (and docker's cache volumes) and what they hold
  --max   prune to SIZE (such as 2g, or 0 for everything not in use)
          instead of sandbox.cache_size
  --volumes=false  leave docker's volumes alone
Example:
  fixpoint cache prune --max 2g`,
	}
	c.run = func(ctx context.Context, a *app, args []string) int {
		fs := newFlags(c, a.stderr)
		max := fs.String("max", "", "prune to this `size` instead of sandbox.cache_size")
		volumes := fs.Bool("volumes", true, "docker's cache volumes too (false: the on-disk caches only)")
		sub := ""
		if len(args) > 0 && (args[0] == "prune" || args[0] == "size") {
			sub, args = args[0], args[1:]
		}
		if done, code := parseFlags(fs, args); done {
			return code
		}
		if sub == "" || fs.NArg() > 0 {
			return a.fail(usagef("cache takes prune or size (then its flags), got %q", append([]string{sub}, fs.Args()...)))
		}
		cfg, err := a.loadConfig("", nil)
		if err != nil {
			return a.fail(err)
		}
		roots := backends.CacheRoots()
		if sub == "size" {
			for _, r := range roots {
				n, err := cachedir.Size([]string{r})
				if err != nil {
					return a.fail(err)
				}
				fmt.Fprintf(a.stdout, "%s\t%s\n", sizeText(n), r)
			}
			if cli := dockerForCache(ctx, *volumes); cli != nil {
				defer cli.Close()
				// Size only: a max above any total removes nothing.
				if rep, err := docker.PruneCacheVolumes(ctx, cli.Client(), 1<<62); err == nil {
					fmt.Fprintf(a.stdout, "%s\tdocker volumes labelled fixpoint.cache\n", sizeText(rep.Before))
				}
			}
			fmt.Fprintf(a.stdout, "cap (sandbox.cache_size): %s\n", sizeText(backends.CacheCap(cfg)))
			return 0
		}
		limit := backends.CacheCap(cfg)
		if *max != "" {
			if limit, err = config.ParseSize(*max); err != nil || limit < 0 {
				return a.fail(usagef("--max %q: want a size such as 2g, or 0", *max))
			}
		}
		rep, err := cachedir.Prune(roots, limit)
		for _, g := range rep.Removed {
			fmt.Fprintf(a.stdout, "removed %s\t%s (last used %s)\n", sizeText(g.Size), filepath.Join(g.Root, g.Key+"*"), g.LastUsed.Format("2006-01-02 15:04"))
		}
		for _, g := range rep.KeptInUse {
			fmt.Fprintf(a.stdout, "kept    %s\t%s: a session uses it\n", sizeText(g.Size), filepath.Join(g.Root, g.Key+"*"))
		}
		fmt.Fprintf(a.stdout, "freed %s: %s → %s (cap %s)\n", sizeText(rep.Freed()), sizeText(rep.Before), sizeText(rep.After), sizeText(limit))
		if err != nil {
			return a.fail(fmt.Errorf("cache prune: %w", err))
		}
		if cli := dockerForCache(ctx, *volumes); cli != nil {
			defer cli.Close()
			vrep, err := docker.PruneCacheVolumes(ctx, cli.Client(), limit)
			for _, g := range vrep.Removed {
				fmt.Fprintf(a.stdout, "removed %s\tdocker volume %s (%s, created %s)\n", sizeText(max64(g.Size, 0)), strings.Join(g.Names, ", "), g.Kind, g.Created.Format("2006-01-02 15:04"))
			}
			for _, g := range vrep.KeptInUse {
				fmt.Fprintf(a.stdout, "kept    %s\tdocker volume %s: a container uses it\n", sizeText(max64(g.Size, 0)), strings.Join(g.Names, ", "))
			}
			fmt.Fprintf(a.stdout, "docker: freed %s: %s → %s (cap %s)\n", sizeText(vrep.Before-vrep.After), sizeText(vrep.Before), sizeText(vrep.After), sizeText(limit))
			if err != nil {
				return a.fail(fmt.Errorf("cache prune (docker volumes): %w", err))
			}
		}
		return 0
	}
	return c
}

// sizeText is n bytes in the largest binary unit that keeps it at least 1.
func sizeText(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// startupPrune keeps the sandboxes' per-project caches within
// sandbox.cache_size: in the background, at most once an hour
// (backends.PruneInBackground), for the commands that may start
// sandboxes. The cap is the user's configuration (the key is user-only).
func startupPrune(a *app, args []string) {
	if len(args) == 0 {
		return
	}
	switch args[0] {
	case "fix", "solve", "test", "serve", "sandbox", "bench", "daemon":
	default:
		return
	}
	backends.PruneInBackground(func() (int64, error) {
		cfg, err := config.Load(config.LoadOptions{Getenv: a.getenv})
		if err != nil {
			return 0, err
		}
		return backends.CacheCap(cfg), nil
	}, a.logger)
}

// dockerForCache is the Docker engine when want and it answers within a
// few seconds (nil otherwise: a machine without docker has only the
// on-disk caches). It reaps nothing.
func dockerForCache(ctx context.Context, want bool) *docker.Backend {
	if !want {
		return nil
	}
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	d, err := docker.New(dctx, &docker.Options{NoReap: true})
	if err != nil {
		return nil
	}
	return d
}

func max64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

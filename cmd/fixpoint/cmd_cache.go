package main

import (
	"context"
	"fmt"
	"path/filepath"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/backends"
	"github.com/fixpoint-dev/fixpoint/sandbox/cachedir"
)

func cacheCommand() *command {
	c := &command{
		name:    "cache",
		summary: "report or prune the per-project caches the sandboxes keep (fixpoint cache prune)",
		usage: `Usage: fixpoint cache prune [--max SIZE]
       fixpoint cache size

The bwrap and none sandboxes keep per-project caches on this machine (Go
build caches, dependency installs). They are kept within sandbox.cache_size
(default 10g, in your config file): at start-up, at most once an hour,
fixpoint removes the least recently used projects' caches, in the
background, until the rest fits. A cache a running session uses is never
removed. The roots are under /var/tmp (as root) or your cache directory,
or $FIXPOINT_CACHE_DIR when set.
  prune   prune now and say what was freed
  size    print the roots and what they hold
  --max   prune to SIZE (such as 2g, or 0 for everything not in use)
          instead of sandbox.cache_size
Example:
  fixpoint cache prune --max 2g`,
	}
	c.run = func(ctx context.Context, a *app, args []string) int {
		fs := newFlags(c, a.stderr)
		max := fs.String("max", "", "prune to this `size` instead of sandbox.cache_size")
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

package backends

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/bwrap"
	"github.com/fixpoint-dev/fixpoint/sandbox/cachedir"
	"github.com/fixpoint-dev/fixpoint/sandbox/host"
)

// CacheRoots are the roots of every per-project cache the bwrap and none
// backends keep on this machine (Go build caches, dependency caches),
// whichever backend is in use: sandbox.cache_size caps them together.
func CacheRoots() []string { return append(bwrap.CacheRoots(), host.CacheRoots()...) }

// CacheCap is sandbox.cache_size in bytes: cachedir.DefaultMaxSize when
// unset (config.Load has refused a value that does not parse).
func CacheCap(cfg *config.Config) int64 {
	if n, err := config.ParseSize(cfg.Sandbox.CacheSize); err == nil && cfg.Sandbox.CacheSize != "" {
		return n
	}
	return cachedir.DefaultMaxSize
}

// pruneEvery is how often the start-up prune walks the caches: the walk
// reads every file's size, which is not free on a big cache.
const pruneEvery = time.Hour

// PruneInBackground prunes the cache roots to the cap (cap, called in the
// goroutine: CacheCap of the user's configuration) in a goroutine and
// returns at once, so no first action waits for it. It does
// nothing when a prune started less than pruneEvery ago (a stamp file
// under the user's cache directory). The goroutine ends when the prune
// does, or with the process: a prune cut short leaves whole groups or a
// group without its ready marker, never one a session would trust
// half-removed (cachedir). Caches that sessions use are kept.
func PruneInBackground(cap func() (int64, error), log *slog.Logger) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	stamp := pruneStamp()
	if st, err := os.Stat(stamp); err == nil && time.Since(st.ModTime()) < pruneEvery {
		return
	}
	if err := os.MkdirAll(filepath.Dir(stamp), 0o700); err != nil {
		return
	}
	if err := os.WriteFile(stamp, nil, 0o600); err != nil {
		return
	}
	now := time.Now()
	os.Chtimes(stamp, now, now)
	roots := CacheRoots()
	go func() {
		max, err := cap()
		if err != nil {
			log.Warn("sandbox cache prune: no cap", "err", err)
			return
		}
		rep, err := cachedir.Prune(roots, max)
		if err != nil {
			log.Warn("sandbox cache prune", "err", err)
		}
		if len(rep.Removed) > 0 {
			log.Info("sandbox caches pruned", "freed_bytes", rep.Freed(), "groups", len(rep.Removed), "kept_in_use", len(rep.KeptInUse))
		}
	}()
}

func pruneStamp() string {
	if d := os.Getenv(cachedir.EnvDir); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "prune.stamp")
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "fixpoint", "cache-prune.stamp")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("fixpoint-cache-prune-%d.stamp", os.Getuid()))
}

// Package host is the "none" sandbox backend: commands run directly on the
// host, in a private temporary copy of the workspace, under rlimits.
//
// The main types are [Backend] and [Session]. Session is also the engine of
// the bwrap backend, which supplies a [Wrap] that puts each command inside
// bubblewrap; everything else (the workspace copy, limits, timeouts, output
// caps, clean-up) is shared, so both backends behave the same.
//
// When fixpoint runs as root, each session runs its commands as its own
// unused uid (see [UIDBase]): RLIMIT_NPROC then bounds the session's
// processes (the kernel never applies it to root), and every process the
// session left behind is found and killed by uid.
package host

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/cachedir"
)

// Options configure the none backend. The zero value is usable.
type Options struct {
	// Warn receives the warning written at every Start; nil = os.Stderr.
	Warn io.Writer
	// Logger receives debug logs; nil = discard.
	Logger *slog.Logger
	// TempDir holds session directories; "" = os.TempDir().
	TempDir string
}

// Backend runs commands on the host. Use it only when chosen explicitly.
type Backend struct {
	opts Options
}

// New returns the none backend.
func New(opts *Options) (*Backend, error) {
	b := &Backend{}
	if opts != nil {
		b.opts = *opts
	}
	if b.opts.Warn == nil {
		b.opts.Warn = os.Stderr
	}
	if b.opts.Logger == nil {
		b.opts.Logger = slog.New(slog.DiscardHandler)
	}
	return b, nil
}

// Name returns "none".
func (b *Backend) Name() string { return "none" }

// Warning is written to Options.Warn at every Start.
const Warning = "WARNING: fixpoint sandbox \"none\": commands run ON THIS HOST with only rlimits and a temporary copy of the workspace; they can read your files and reach the network. Use docker or bwrap unless you trust the code."

// Start writes the warning and starts a session in a temporary directory.
func (b *Backend) Start(ctx context.Context, spec sandbox.Spec) (sandbox.Session, error) {
	fmt.Fprintln(b.opts.Warn, Warning)
	release := func() {}
	if key := spec.Labels[sandbox.LabelProject]; key != "" && strings.Trim(key, "0123456789abcdef") == "" {
		// The project's Go build caches stay while the session may use
		// them (cachedir.Prune).
		if roots := CacheRoots(); len(roots) > 0 {
			if r, err := cachedir.Use(roots[0], key); err == nil {
				release = r
			}
		}
	}
	s, err := NewSession(ctx, spec, &SessionOptions{Name: "none", TempDir: b.opts.TempDir, Logger: b.opts.Logger, Wrap: hostWrap})
	if err != nil {
		release()
		return nil, err
	}
	return &usingSession{s, release}, nil
}

// usingSession releases the project's caches when it closes.
type usingSession struct {
	*Session
	release func()
}

func (s *usingSession) Close() error {
	err := s.Session.Close()
	s.release()
	return err
}

// CacheRoots are the directories of per-project caches the none backend
// writes (the Go build caches), for cachedir.Prune; none when the user
// has no cache directory.
func CacheRoots() []string {
	base, err := os.UserCacheDir()
	if err != nil {
		if d := cachedir.Root("gocache-host", ""); d != "" {
			return []string{d}
		}
		return nil
	}
	return []string{cachedir.Root("gocache-host", filepath.Join(base, "fixpoint", "gocache-host"))}
}

// hostWrap runs the command itself, in the workspace copy, with the host's
// PATH (the allow-list's only value taken from the host).
func hostWrap(d Dirs, rel string, args []string, spec sandbox.Spec) (Launch, error) {
	path := os.Getenv("PATH")
	if path == "" {
		path = "/usr/local/bin:/usr/bin:/bin"
	}
	env := []string{"PATH=" + path, "HOME=" + d.Home, "LANG=C.UTF-8", "TMPDIR=" + d.Tmp}
	for _, c := range spec.Caches {
		if c.HostDir != "" { // used in place: the command runs on the host
			env = append(env, c.HostEnv(c.HostDir)...)
		}
	}
	if spec.BuildCache == sandbox.BuildCacheFresh {
		// In the session directory: removed with the session; at the
		// first command, a copy of the project's user cache (which only
		// sessions running the user's own code write), so that a run's
		// sessions recompile only what its edits change.
		// Run as root, commands run as another uid, which Go's own
		// mkdir of an empty cache suits: no copy then.
		dir := filepath.Join(d.Root, "gocache")
		if _, err := os.Stat(dir); err != nil && os.Geteuid() != 0 {
			user := projectGoCache(sandbox.Spec{Labels: spec.Labels, BuildCache: sandbox.BuildCacheUser})
			if err := seedCache(user, dir, maxSeed); err != nil {
				return Launch{}, fmt.Errorf("fresh Go build cache: %w", err)
			}
		}
		env = append(env, "GOCACHE="+dir)
	} else if dir := projectGoCache(spec); dir != "" {
		env = append(env, "GOCACHE="+dir)
	}
	dir := d.Workspace
	if rel != "" {
		dir += "/" + rel
	}
	return Launch{Argv: args, Dir: dir, Env: env}, nil
}

// maxSeed bounds the user cache a fresh one is copied from: a bigger one
// costs more to copy than it saves; the fresh cache then starts empty.
const maxSeed = 1 << 30

// seedCache makes dst (0700) and copies into it the regular files of src
// ("" or missing: none) as new files, when they add up to at most limit
// bytes. A file that cannot be read is skipped: a cache miss, not an
// error.
func seedCache(src, dst string, limit int64) error {
	if err := os.MkdirAll(dst, 0o700); err != nil || src == "" {
		return err
	}
	var files []string
	var n int64
	filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			n += fi.Size()
			files = append(files, p)
		}
		if n > limit {
			return filepath.SkipAll
		}
		return nil
	})
	if n > limit {
		return nil
	}
	for _, p := range files {
		rel, err := filepath.Rel(src, p)
		if err != nil {
			continue
		}
		to := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		if err := os.WriteFile(to, data, 0o600); err != nil {
			return err
		}
	}
	return nil
}

// projectGoCache is a Go build cache that outlives the session, one per
// project (sandbox.LabelProject) and kind of code (Spec.BuildCache), in the user's cache directory: without
// it every command starts with an empty cache in its temporary HOME and
// recompiles the standard library. "" when there is no project or the
// directory cannot be made.
func projectGoCache(spec sandbox.Spec) string {
	key := spec.Labels[sandbox.LabelProject]
	if key == "" || strings.Trim(key, "0123456789abcdef") != "" {
		return ""
	}
	roots := CacheRoots()
	if len(roots) == 0 {
		return ""
	}
	dir := filepath.Join(roots[0], key+spec.BuildCache.Suffix())
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return ""
	}
	return dir
}

// Package bwrap is the bubblewrap sandbox backend, for machines without a
// Docker engine.
//
// The main type is [Backend]. Each command runs in fresh user, pid,
// network, ipc, uts and cgroup namespaces (no network at all), sees the
// host's /usr read-only plus a few selected /etc files, a private /tmp
// tmpfs capped at [Options.TmpSize], and the session's workspace copy at
// /workspace, which lives on a tmpfs capped at [Options.WorkspaceSize]
// (see cappedDir). It dies with
// fixpoint (--die-with-parent) and cannot reach the terminal
// (--new-session). When the command exits, its pid namespace goes and with
// it every process it left behind. Rlimits, timeouts, output caps and the
// workspace copy are the host backend's ([host.Session]), so the results
// match the other backends.
package bwrap

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/cachedir"
	"github.com/fixpoint-dev/fixpoint/sandbox/host"
)

// Options configure the backend. The zero value is usable.
type Options struct {
	// Path is the bwrap program; "" = bwrap on PATH.
	Path string
	// Logger receives debug logs; nil = discard.
	Logger *slog.Logger
	// TempDir holds session directories; "" = os.TempDir().
	TempDir string
	// TmpSize caps the /tmp tmpfs in bytes; 0 = DefaultTmpSize (256 MiB).
	TmpSize int64
	// WorkspaceSize caps the session's workspace copy in bytes; 0 =
	// DefaultWorkspaceSize (1 GiB). The session directory lives on a tmpfs
	// of this size, so a command that fills /workspace gets ENOSPC and the
	// host disk is untouched. Run as root, fixpoint mounts it on the host;
	// as a normal user, in a user and mount namespace held for the session
	// (unshare, nsenter). Where neither works, the workspace is bounded
	// only per file (Limits.FileSize) and Start logs a warning once.
	WorkspaceSize int64
	// GoCacheDir holds the per-project Go build caches. A project's cache
	// (keyed by sandbox.LabelProject) is bound read-write at /gocache, as
	// GOCACHE, in every command of its sessions; without it each command
	// starts with an empty cache in its fresh /tmp and recompiles the
	// standard library (17 s per `go test` of examples/go-bug here). ""
	// means fixpoint/gocache in the user's cache directory, or
	// /var/tmp/fixpoint-gocache when fixpoint runs as root; "off" turns
	// the cache off.
	GoCacheDir string
	// GoCacheSize bounds a project's Go build cache in bytes; 0 =
	// DefaultGoCacheSize (2 GiB). The cache is a host directory the
	// sandbox writes to, so it is measured after every command and emptied
	// when over the bound: what a command writes there is bounded across
	// commands, not while one runs (its timeout bounds that).
	GoCacheSize int64
}

// Backend starts bubblewrap sessions. It is safe for concurrent use.
type Backend struct {
	opts      Options
	path      string
	prepared  sync.Map  // Go cache dirs made ready this process
	tmpfsSize bool      // bwrap has --size
	reapOnce  sync.Once // the first Start cleans dead processes' capped dirs
	warnOnce  sync.Once // the missing disk cap is logged once
	toolOnce  sync.Once // toolKey is computed once
	toolKey   string    // the host Go toolchain's identity (toolchainKey)
}

// New finds bwrap and checks that it can create its namespaces here; the
// error wraps sandbox.ErrUnavailable when it cannot.
func New(opts *Options) (*Backend, error) {
	b := &Backend{}
	if opts != nil {
		b.opts = *opts
	}
	if b.opts.Logger == nil {
		b.opts.Logger = slog.New(slog.DiscardHandler)
	}
	if b.opts.TmpSize < 0 || b.opts.WorkspaceSize < 0 {
		return nil, fmt.Errorf("bwrap sandbox: negative disk cap (tmp %d, workspace %d bytes): set sandbox.tmp_size and sandbox.workspace_size to a size such as 1g, or leave them out for the defaults", b.opts.TmpSize, b.opts.WorkspaceSize)
	}
	if b.opts.TmpSize == 0 {
		b.opts.TmpSize = DefaultTmpSize
	}
	if b.opts.WorkspaceSize == 0 {
		b.opts.WorkspaceSize = DefaultWorkspaceSize
	}
	if b.opts.GoCacheSize <= 0 {
		b.opts.GoCacheSize = DefaultGoCacheSize
	}
	name := b.opts.Path
	if name == "" {
		name = "bwrap"
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("bwrap not found (install it with `apt-get install bubblewrap`): %w", sandbox.ErrUnavailable)
	}
	b.path = p
	// --size (bubblewrap 0.5.0 and later) caps the /tmp tmpfs; an older
	// bwrap gets the session's tmp directory instead, inside the capped
	// session directory, so /tmp shares the workspace's cap.
	help, _ := exec.Command(p, "--help").CombinedOutput()
	b.tmpfsSize = strings.Contains(string(help), "--size")
	return b, nil
}

// Name returns "bwrap".
func (b *Backend) Name() string { return "bwrap" }

// Check runs `true` in a sandbox to prove that bwrap works here (user
// namespaces allowed, /usr readable). doctor uses it.
func (b *Backend) Check(ctx context.Context) error {
	s, err := b.Start(ctx, sandbox.Spec{})
	if err != nil {
		return err
	}
	defer s.Close()
	res, err := s.Run(ctx, sandbox.Command{Args: []string{"true"}})
	if err != nil {
		return err
	}
	if res.ExitCode != 0 {
		return fmt.Errorf("bwrap cannot start a sandbox here (exit %d): %s: %w", res.ExitCode, strings.TrimSpace(string(res.Stderr)), sandbox.ErrUnavailable)
	}
	return nil
}

// Start creates the session directory, on a tmpfs capped at
// WorkspaceSize when fixpoint may mount one; each Run starts its own bwrap.
func (b *Backend) Start(ctx context.Context, spec sandbox.Spec) (sandbox.Session, error) {
	for _, c := range spec.Caches {
		if c.HostDir == "" {
			continue
		}
		if st, err := os.Stat(c.HostDir); err != nil || !st.IsDir() {
			return nil, errors.New("bwrap sandbox: " + c.Name + " cache " + c.HostDir + " is not a directory")
		}
	}
	b.reapOnce.Do(func() { reapDisks(b.opts.TempDir, b) })
	tempDir := b.opts.TempDir
	dir, release, err := cappedDir(b.opts.TempDir, b.opts.WorkspaceSize)
	switch {
	case err == nil:
		tempDir = dir
	case errors.Is(err, ErrNoDiskCap):
		b.warnOnce.Do(func() {
			b.opts.Logger.Warn("bwrap sandbox: the workspace has no disk cap, only a per-file limit; allow unprivileged user namespaces, run fixpoint as root, or use the docker backend", "err", err)
		})
	default:
		return nil, err
	}
	inUse := b.useCaches(spec.Labels)
	s, err := host.NewSession(ctx, spec, &host.SessionOptions{Name: "bwrap", TempDir: tempDir, Logger: b.opts.Logger, Wrap: b.wrap})
	if err != nil {
		inUse()
		if release != nil {
			release()
		}
		return nil, err
	}
	return &session{Session: s, release: release, inUse: inUse, goCache: b.goCache(spec), goCacheSize: b.opts.GoCacheSize, log: b.opts.Logger}, nil
}

// useCaches marks the project's Go build caches and dependency caches in
// use (cachedir.Use) until the returned func is called, so that a prune
// (cachedir.Prune, `fixpoint cache prune`) leaves them while a session or
// a setup step of the project reads or writes them. A cache that cannot
// be marked is not pruned less safely: Use fails only when its lock
// directory cannot be made, and then the cache is logged and used as is.
func (b *Backend) useCaches(labels map[string]string) (release func()) {
	key := labels[sandbox.LabelProject]
	if key == "" || strings.Trim(key, "0123456789abcdef") != "" {
		return func() {}
	}
	var releases []func()
	for _, root := range b.CacheRoots() {
		r, err := cachedir.Use(root, key)
		if err != nil {
			b.opts.Logger.Warn("bwrap sandbox: cache not marked in use", "root", root, "err", err)
			continue
		}
		releases = append(releases, r)
	}
	return func() {
		for _, r := range releases {
			r()
		}
	}
}

// CacheRoots are the directories of per-project caches this backend
// writes, for cachedir.Prune: the Go build caches (none when turned off)
// and the dependency caches.
func (b *Backend) CacheRoots() []string {
	var roots []string
	if b.opts.GoCacheDir != "off" {
		base := b.opts.GoCacheDir
		if base == "" {
			base = defaultGoCacheBase()
		}
		roots = append(roots, base)
	}
	return append(roots, depsDir())
}

// CacheRoots are the default roots of the bwrap backend's per-project
// caches (Options.GoCacheDir unset), for a prune outside a backend
// (`fixpoint cache prune`, the start-up prune).
func CacheRoots() []string { return []string{defaultGoCacheBase(), depsDir()} }

// session is a host session whose directory may live on its own capped
// tmpfs (unmounted when the session closes), and whose project Go build
// cache is kept within its bound after every command.
type session struct {
	*host.Session
	release     func() // nil when not capped
	inUse       func() // releases the project's caches (useCaches)
	goCache     string // "" when the session has none
	goCacheSize int64
	log         *slog.Logger
}

// Run runs the command, then empties the project's Go build cache when
// the command left it over its bound.
func (s *session) Run(ctx context.Context, c sandbox.Command) (*sandbox.Result, error) {
	res, err := s.Session.Run(ctx, c)
	if s.goCache != "" {
		if n := dirSize(s.goCache, s.goCacheSize); n > s.goCacheSize {
			s.log.Warn("bwrap sandbox: the Go build cache is over its bound; emptied", "dir", s.goCache, "bytes", n, "bound", s.goCacheSize)
			emptyDir(s.goCache)
		}
	}
	return res, err
}

// Close closes the session, then unmounts its tmpfs.
func (s *session) Close() error {
	err := s.Session.Close()
	if s.release != nil {
		s.release()
	}
	s.inUse()
	return err
}

// PATH inside the sandbox: the image layout, /usr/local/go/bin included.
const sandboxPath = "/usr/local/go/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// etcAllow are the /etc entries a sandbox sees (when they exist).
var etcAllow = []string{"alternatives", "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "ssl", "ca-certificates",
	"localtime", "nsswitch.conf", "mime.types", "protocols", "services", "os-release", "debian_version",
	"python3", "python3.*", "nodejs", "npmrc", "gitconfig", "bash.bashrc", "profile"}

func (b *Backend) wrap(d host.Dirs, rel string, args []string, spec sandbox.Spec) (host.Launch, error) {
	enter, inside := nsPrefix(d.Root) // a capped dir held in a namespace of its own
	a := append(enter, b.path,
		"--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session", "--hostname", "sandbox",
		"--uid", "1000", "--gid", "1000",
		"--ro-bind", "/usr", "/usr",
	)
	for _, top := range []string{"bin", "sbin", "lib", "lib32", "lib64", "libx32"} {
		p := "/" + top
		if target, err := os.Readlink(p); err == nil {
			a = append(a, "--symlink", target, p)
		} else if st, err := os.Stat(p); err == nil && st.IsDir() {
			a = append(a, "--ro-bind", p, p)
		}
	}
	for _, pat := range etcAllow {
		matches, _ := filepath.Glob("/etc/" + pat)
		for _, m := range matches {
			a = append(a, "--ro-bind", m, m)
		}
	}
	a = append(a, "--ro-bind", inside(writeEtc(d, "passwd", "root:x:0:0:root:/root:/bin/sh\nsandbox:x:1000:1000:sandbox:/tmp:/bin/sh\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n")), "/etc/passwd")
	a = append(a, "--ro-bind", inside(writeEtc(d, "group", "root:x:0:\nsandbox:x:1000:\nnogroup:x:65534:\n")), "/etc/group")
	a = append(a, "--ro-bind", inside(writeEtc(d, "hosts", "127.0.0.1 localhost sandbox\n::1 localhost\n")), "/etc/hosts")
	a = append(a,
		"--proc", "/proc", "--dev", "/dev",
		"--bind", inside(d.Workspace), "/workspace",
	)
	if b.tmpfsSize {
		a = append(a, "--size", fmt.Sprint(b.opts.TmpSize), "--tmpfs", "/tmp")
	} else {
		a = append(a, "--bind", inside(d.Tmp), "/tmp")
	}
	env := []string{"PATH=" + sandboxPath, "HOME=/tmp", "LANG=C.UTF-8", "TMPDIR=/tmp"}
	if spec.BuildCache == sandbox.BuildCacheFresh {
		// In the session directory (capped with the workspace), removed
		// with the session; at the first command, a copy of the project's
		// user cache (freshSeed), which only sessions running the user's
		// own code write, or of the standard library's seed.
		dir := filepath.Join(d.Root, "gocache")
		if _, err := os.Stat(dir); err != nil {
			seed := b.freshSeed(spec.Labels)
			err := os.MkdirAll(dir, 0o700)
			if err == nil && seed != "" {
				err = copyCache(seed, dir)
			}
			if err == nil && os.Geteuid() == 0 { // each session has its own uid (prepareGoCache)
				err = os.Chmod(dir, 0o777)
			}
			if err != nil {
				return host.Launch{}, fmt.Errorf("bwrap sandbox: fresh Go build cache: %w", err)
			}
		}
		a = append(a, "--bind", inside(dir), "/gocache")
		env = append(env, "GOCACHE=/gocache")
	} else if dir := b.goCache(spec); dir != "" {
		a = append(a, "--bind", dir, "/gocache")
		env = append(env, "GOCACHE=/gocache")
	}
	// Dependency caches from the setup phase (Install), and host caches
	// of the language's toolchain, read-only.
	for _, c := range spec.Caches {
		switch {
		case c.HostDir == "":
			a = append(a, "--ro-bind", c.Source, c.Target)
			for _, w := range c.Writable {
				// A fresh tmpfs per command over the mount point the install
				// made (a real directory: never through a symlink).
				if st, err := os.Lstat(filepath.Join(c.Source, w)); err == nil && st.IsDir() && sandbox.WritableName(w) {
					if b.tmpfsSize {
						a = append(a, "--size", fmt.Sprint(writableLayerSize))
					}
					a = append(a, "--perms", "0777", "--tmpfs", c.Target+"/"+w)
				}
			}
		case reachable(c.HostDir):
			a = append(a, "--ro-bind", c.HostDir, c.Target) // where the docker backend puts it
			env = append(env, c.HostEnv(c.Target)...)
		default:
			b.opts.Logger.Warn("bwrap sandbox: a host cache is not readable by the sandbox uid; it is not mounted", "cache", c.Name, "dir", c.HostDir)
		}
	}
	toolArgs, toolPath, toolEnv := b.hostTools(spec.HostTools)
	a = append(a, toolArgs...)
	env = append(env, toolEnv...)
	if p := append(append([]string(nil), spec.Path...), toolPath...); len(p) > 0 {
		env[0] = "PATH=" + strings.Join(p, ":") + ":" + sandboxPath
	}
	wd := "/workspace"
	if rel != "" {
		wd += "/" + rel
	}
	a = append(a, "--chdir", wd, "--")
	a = append(a, args...)
	return host.Launch{Argv: a, Dir: d.Root, Env: env}, nil
}

// writableLayerSize bounds each writable layer over a cache
// (CacheMount.Writable) where bwrap can size a tmpfs.
const writableLayerSize = 512 << 20

// goCache returns the project's Go build cache directory, ready for the
// session uid, or "" when there is none (no project, turned off, or it
// cannot be made).
func (b *Backend) goCache(spec sandbox.Spec) string {
	key := spec.Labels[sandbox.LabelProject]
	if key == "" || b.opts.GoCacheDir == "off" || strings.Trim(key, "0123456789abcdef") != "" || spec.BuildCache == sandbox.BuildCacheFresh {
		return ""
	}
	return b.goCacheDir(key + spec.BuildCache.Suffix())
}

// goCacheDir is the persistent Go build cache called name, made ready for
// the session uid; "" when it cannot be made.
func (b *Backend) goCacheDir(name string) string {
	if b.opts.GoCacheDir == "off" {
		return ""
	}
	base := b.opts.GoCacheDir
	if base == "" {
		base = defaultGoCacheBase()
	}
	dir := filepath.Join(base, name)
	if _, ok := b.prepared.Load(dir); ok {
		if _, err := os.Stat(dir); err == nil {
			return dir
		}
		// removed by a prune (cachedir) since: made again below
	}
	if err := prepareGoCache(base, dir); err != nil {
		b.opts.Logger.Warn("bwrap sandbox: no persistent Go build cache", "dir", dir, "err", err)
		return ""
	}
	b.prepared.Store(dir, true)
	return dir
}

func defaultGoCacheBase() string {
	if os.Geteuid() == 0 {
		return cachedir.Root("gocache", "/var/tmp/fixpoint-gocache")
	}
	if d, err := os.UserCacheDir(); err == nil {
		return cachedir.Root("gocache", filepath.Join(d, "fixpoint", "gocache"))
	}
	return cachedir.Root("gocache", filepath.Join(os.TempDir(), fmt.Sprintf("fixpoint-gocache-%d", os.Getuid())))
}

// prepareGoCache makes dir. Run as an ordinary user, sessions run as that
// user and the cache is private (0700). Run as root, every session has its
// own uid: the cache and Go's 256 subdirectories must be writable by all
// of them (Go would make them 0755 for the first session's uid alone).
func prepareGoCache(base, dir string) error {
	if os.Geteuid() != 0 {
		return os.MkdirAll(dir, 0o700)
	}
	if err := os.MkdirAll(base, 0o755); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	dirs := []string{dir}
	for i := range 256 {
		dirs = append(dirs, filepath.Join(dir, fmt.Sprintf("%02x", i)))
	}
	for _, d := range dirs {
		if err := os.Mkdir(d, 0o777); err != nil && !os.IsExist(err) {
			return err
		}
		if err := os.Chmod(d, 0o777); err != nil {
			return err
		}
	}
	if !reachable(dir) {
		return errors.New("not reachable by the sandbox uid")
	}
	return nil
}

// writeEtc writes a synthetic /etc file into the session directory (once)
// and returns its host path.
func writeEtc(d host.Dirs, name, content string) string {
	p := filepath.Join(d.Root, "etc-"+name)
	if _, err := os.Stat(p); err != nil {
		os.WriteFile(p, []byte(content), 0o644)
	}
	return p
}

// reachable reports whether every directory on the way to dir lets others
// search it: when fixpoint runs as root, bwrap runs as a session uid that
// has no other way in (a cache under a 0700 /root is not reachable).
func reachable(dir string) bool {
	if os.Geteuid() != 0 {
		return true
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return false
	}
	for p := abs; ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err != nil || st.Mode().Perm()&0o005 != 0o005 {
			return false
		}
		if p == "/" {
			return true
		}
	}
}

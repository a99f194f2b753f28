package bwrap

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/cachedir"
)

// Install runs a dependency install step in a bwrap sandbox with network
// (the only bwrap sandbox that has any: setupnet.go), on a temporary
// copy of the workspace, with each cache directory bound read-write at its
// target. The caches live under <deps dir>/<project>/<key>/<name>; a ".done" file marks
// a step that succeeded, so an interrupted one is redone. Afterwards the
// caches are made readable by every uid, because test sessions run as
// other uids when fixpoint runs as root; test sessions bind them
// read-only (see wrap).
func (b *Backend) Install(ctx context.Context, spec sandbox.InstallSpec) (*sandbox.InstallResult, error) {
	if spec.Key == "" || len(spec.Caches) == 0 || strings.ContainsAny(spec.Key, "/.") {
		return nil, errors.New("bwrap install: a key and caches are required")
	}
	project := spec.Labels[sandbox.LabelProject]
	if project == "" || strings.Trim(project, "0123456789abcdef") != "" {
		project = "none"
	}
	if release, err := cachedir.Use(depsDir(), project); err == nil {
		defer release()
	}
	dir := filepath.Join(depsDir(), project, spec.Key)
	res := &sandbox.InstallResult{}
	for _, c := range spec.Caches {
		var w []string
		for _, n := range c.Writable {
			if sandbox.WritableName(n) {
				w = append(w, n)
			}
		}
		res.Mounts = append(res.Mounts, sandbox.CacheMount{Source: filepath.Join(dir, c.Name), Target: c.Target, Writable: w})
	}
	if _, err := os.Stat(filepath.Join(dir, ".done")); err == nil {
		res.Cached = true
		return res, nil
	}
	os.RemoveAll(dir)
	for _, m := range res.Mounts {
		if err := os.MkdirAll(m.Source, 0o755); err != nil {
			return nil, fmt.Errorf("bwrap install: %w", err)
		}
	}
	if !reachable(dir) {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("bwrap install: %s is not reachable by the sandbox uids (set XDG_CACHE_HOME to a directory others can enter)", dir)
	}
	ws, err := os.MkdirTemp(b.opts.TempDir, "fixpoint-setup-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(ws)
	if err := writeSnapshot(ws, spec.Snapshot); err != nil {
		return nil, fmt.Errorf("bwrap install: workspace: %w", err)
	}
	if err := b.runInstall(ctx, spec, ws, res.Mounts, "", true); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	// The writable layers' mount points (CacheMount.Writable) become empty
	// directories, whatever the step left there (a symlink, a file).
	for _, m := range res.Mounts {
		for _, w := range m.Writable {
			p := filepath.Join(m.Source, w)
			if err := os.RemoveAll(p); err != nil {
				os.RemoveAll(dir)
				return nil, fmt.Errorf("bwrap install: %w", err)
			}
			if err := os.Mkdir(p, 0o755); err != nil {
				os.RemoveAll(dir)
				return nil, fmt.Errorf("bwrap install: %w", err)
			}
		}
	}
	if err := shareReadable(dir); err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("bwrap install: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".done"), nil, 0o644); err != nil {
		return nil, err
	}
	// Older installs of the same project go: a running session keeps its
	// bind mounts (and so its files) until it ends.
	if old, err := os.ReadDir(filepath.Dir(dir)); err == nil {
		for _, e := range old {
			if e.Name() != spec.Key {
				os.RemoveAll(filepath.Join(filepath.Dir(dir), e.Name()))
			}
		}
	}
	return res, nil
}

// depsDir is where bwrap dependency caches live.
func depsDir() string {
	if os.Geteuid() == 0 {
		return cachedir.Root("deps", "/var/tmp/fixpoint-deps")
	}
	if d, err := os.UserCacheDir(); err == nil {
		return cachedir.Root("deps", filepath.Join(d, "fixpoint", "deps"))
	}
	return cachedir.Root("deps", filepath.Join(os.TempDir(), fmt.Sprintf("fixpoint-deps-%d", os.Getuid())))
}

// PrebuildGoStd compiles the standard library into the Go build cache of
// the project labelled in labels (see goCache), once: without it the
// first test run of every project compiles it inside its per-command
// timeout (go-cmp and urfave/cli/v2 ran past 120 s on two busy cores).
// It runs `go build std` in a setup-like sandbox with the host's tools and
// no workspace code; a marker file in the cache records that it is done.
// A project without a build cache (none, or turned off) does nothing.
//
// The standard library is compiled into the project's seed cache (see
// stdSeed), which no session binds, and copied from there into each of the
// project's session caches that lacks it: the seed holds only what `go
// build std` wrote, so a fresh cache (sandbox.BuildCacheFresh) can start
// from it without starting from anything a model's code wrote.
func (b *Backend) PrebuildGoStd(ctx context.Context, labels map[string]string) error {
	defer b.useCaches(labels)()
	seed := b.stdSeed(labels)
	if seed == "" {
		return nil
	}
	marker := filepath.Join(seed, stdMarker)
	if _, err := os.Stat(marker); err != nil {
		ws, err := os.MkdirTemp(b.opts.TempDir, "fixpoint-setup-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(ws)
		spec := sandbox.InstallSpec{Script: "go build std", Limits: sandbox.Limits{Timeout: 15 * time.Minute}}
		if err := b.runInstall(ctx, spec, ws, nil, seed, false); err != nil {
			return err
		}
		if err := os.WriteFile(marker, nil, 0o644); err != nil {
			return err
		}
	}
	for _, c := range []sandbox.BuildCache{sandbox.BuildCacheModel, sandbox.BuildCacheUser} {
		dir := b.goCache(sandbox.Spec{Labels: labels, BuildCache: c})
		if dir == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(dir, stdMarker)); err == nil {
			continue
		}
		if err := copyCache(seed, dir); err != nil {
			return fmt.Errorf("copy the standard library's build cache: %w", err)
		}
	}
	return nil
}

// freshSeed is the cache a fresh session's (sandbox.BuildCacheFresh) Go
// build cache starts as a copy of: the project's user cache
// (sandbox.BuildCacheUser), which only sessions running the user's own
// code write (fixpoint test, a run's baseline), so that the verifying run
// recompiles only what the final edit changed; else, or when that cache
// would take more than half of the session's workspace cap, the standard
// library's seed. "" when there is neither.
func (b *Backend) freshSeed(labels map[string]string) string {
	if user := b.goCache(sandbox.Spec{Labels: labels, BuildCache: sandbox.BuildCacheUser}); user != "" {
		if _, err := os.Stat(filepath.Join(user, stdMarker)); err == nil {
			if dirSize(user, b.opts.WorkspaceSize/2) <= b.opts.WorkspaceSize/2 {
				return user
			}
		}
	}
	seed := b.stdSeed(labels)
	if _, err := os.Stat(filepath.Join(seed, stdMarker)); seed == "" || err != nil {
		return ""
	}
	return seed
}

// stdMarker, in a Go build cache, records that the standard library is in it.
const stdMarker = "fixpoint-std-built"

// stdSeed is the Go build cache written only by `go build std`
// (PrebuildGoStd) with the host's Go toolchain; "" when the project has no
// cache or the host has no Go. It is shared by every project on the
// machine: its content depends on the toolchain alone (no project file is
// in the sandbox that builds it), so it is keyed by the toolchain
// (toolchainKey), not by project, and a new project starts with the
// standard library compiled instead of compiling it for minutes. Sessions
// never bind it; they get copies.
func (b *Backend) stdSeed(labels map[string]string) string {
	key := labels[sandbox.LabelProject]
	if key == "" || strings.Trim(key, "0123456789abcdef") != "" {
		return ""
	}
	tk := b.toolchainKey()
	if tk == "" {
		return ""
	}
	// A name no project key gives (keys are hex): no session binds it.
	return b.goCacheDir("std-" + tk)
}

// toolchainKey identifies the Go toolchain a sandbox command finds first
// on sandboxPath: its path, size and modification time, hashed. An
// upgraded toolchain gets a new key, so a new seed; "" when there is no
// go on that path. Computed once per Backend.
func (b *Backend) toolchainKey() string {
	b.toolOnce.Do(func() {
		for _, dir := range filepath.SplitList(sandboxPath) {
			fi, err := os.Stat(filepath.Join(dir, "go"))
			if err != nil || fi.IsDir() {
				continue
			}
			h := sha256.Sum256([]byte(fmt.Sprintf("%s\x00%d\x00%d", filepath.Join(dir, "go"), fi.Size(), fi.ModTime().UnixNano())))
			b.toolKey = hex.EncodeToString(h[:8])
			return
		}
	})
	return b.toolKey
}

// copyCache copies the regular files and directories of src into dst
// (made if missing), as new files: dst shares no inode with src, so what a
// session writes into dst never reaches src. Run as root, every session has
// its own uid, and the copies are writable by all (prepareGoCache).
func copyCache(src, dst string) error {
	dirMode, fileMode := os.FileMode(0o700), os.FileMode(0o600)
	if os.Geteuid() == 0 {
		dirMode, fileMode = 0o777, 0o666
	}
	return filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		switch {
		case d.IsDir():
			if err := os.MkdirAll(to, dirMode); err != nil {
				return err
			}
			return os.Chmod(to, dirMode)
		case !d.Type().IsRegular():
			return nil
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.OpenFile(to, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, fileMode)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, in)
		if err == nil {
			err = out.Chmod(fileMode) // past the umask
		}
		if err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
}

// runInstall runs spec.Script in a sandbox on ws. With network, the
// sandbox reaches the network through slirp4netns without the host's
// loopback when it can (setupnet.go), else through the host's network
// namespace; without, it has none.
func (b *Backend) runInstall(ctx context.Context, spec sandbox.InstallSpec, ws string, mounts []sandbox.CacheMount, goCache string, network bool) error {
	const shared = "bwrap setup step: sharing the host's network namespace, where services on the host's loopback are reachable (install slirp4netns, and keep proxies and registries off the loopback, to confine it; or use the docker backend)"
	if !network {
		return b.runInstallNet(ctx, spec, ws, mounts, goCache, false, "")
	}
	p, err := exec.LookPath("slirp4netns")
	if err != nil || needsHostLoopback(spec.HostEnv) {
		b.opts.Logger.Warn(shared)
		return b.runInstallNet(ctx, spec, ws, mounts, goCache, true, "")
	}
	err = b.runInstallNet(ctx, spec, ws, mounts, goCache, true, p)
	if errors.Is(err, errSlirp) {
		// slirp4netns could not join the sandbox (a setuid bwrap, a
		// kernel without the permission): the script has not run yet.
		b.opts.Logger.Warn(shared, "err", err)
		return b.runInstallNet(ctx, spec, ws, mounts, goCache, true, "")
	}
	return err
}

// errSlirp marks a failure to give the setup sandbox its slirp4netns
// network, before the script ran.
var errSlirp = errors.New("the setup sandbox's network")

// runInstallNet runs the step with the network runInstall chose: slirp
// is slirp4netns's path ("" for the host's network when network is set).
func (b *Backend) runInstallNet(ctx context.Context, spec sandbox.InstallSpec, ws string, mounts []sandbox.CacheMount, goCache string, network bool, slirp string) error {
	timeout := spec.Limits.Timeout
	if timeout <= 0 {
		timeout = 15 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	a := []string{"--unshare-all", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
		"--uid", "1000", "--gid", "1000", "--ro-bind", "/usr", "/usr"}
	if network && slirp == "" {
		a = append(a, "--share-net")
	}
	if slirp != "" {
		a = append(a, "--info-fd", "3", "--block-fd", "6")
	}
	for _, top := range []string{"bin", "sbin", "lib", "lib32", "lib64", "libx32"} {
		p := "/" + top
		if target, err := os.Readlink(p); err == nil {
			a = append(a, "--symlink", target, p)
		} else if st, err := os.Stat(p); err == nil && st.IsDir() {
			a = append(a, "--ro-bind", p, p)
		}
	}
	// The allow-listed /etc plus what name resolution needs.
	resolv := []string{"resolv.conf"}
	if slirp != "" {
		rc, err := resolvConf(b.opts.TempDir)
		if err != nil {
			return fmt.Errorf("bwrap install: %w", err)
		}
		defer os.Remove(rc)
		a = append(a, "--ro-bind", rc, "/etc/resolv.conf")
		resolv = nil
	}
	for _, pat := range append(append(etcAllow, resolv...), "hosts", "host.conf", "gai.conf") {
		matches, _ := filepath.Glob("/etc/" + pat)
		for _, m := range matches {
			a = append(a, "--ro-bind", m, m)
		}
	}
	a = append(a, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--bind", ws, "/workspace")
	for _, m := range mounts {
		a = append(a, "--bind", m.Source, m.Target)
	}
	if spec.CAFile != "" && spec.CAFile != "/etc/ssl/certs/ca-certificates.crt" {
		a = append(a, "--ro-bind", spec.CAFile, "/etc/ssl/certs/ca-certificates.crt")
	}
	if goCache != "" {
		a = append(a, "--bind", goCache, "/gocache")
	}
	toolArgs, toolPath, toolEnv := b.hostTools(spec.HostTools)
	a = append(a, toolArgs...)
	script := spec.Script
	if spec.Snapshot != nil && spec.Snapshot.Git != nil {
		script = spec.Snapshot.Git.WrapScript(script) // `prepare: lefthook install` needs a repository
	}
	if slirp != "" {
		// The sandbox says it started (bwrap has set up its loopback) on
		// fd 4 and waits on fd 5 until slirp4netns has given it a network.
		a = append(a, "--chdir", "/workspace", "--", "/bin/sh", "-c", slirpWait, "fixpoint-setup", script)
	} else {
		a = append(a, "--chdir", "/workspace", "--", "/bin/sh", "-c", script)
	}
	path := sandboxPath
	if p := append(append([]string(nil), spec.Path...), toolPath...); len(p) > 0 {
		path = strings.Join(p, ":") + ":" + path
	}
	env := []string{"PATH=" + path, "HOME=/tmp", "LANG=C.UTF-8", "TMPDIR=/tmp"}
	env = append(env, toolEnv...)
	env = append(env, spec.Env...)
	env = append(env, spec.HostEnv...)
	if goCache != "" {
		env = append(env, "GOCACHE=/gocache")
	}
	if spec.CAFile != "" {
		const ca = "/etc/ssl/certs/ca-certificates.crt"
		env = append(env, "SSL_CERT_FILE="+ca, "GIT_SSL_CAINFO="+ca)
		for _, k := range spec.CAEnv { // the installer's own (lang.Setup.CAEnv)
			env = append(env, k+"="+ca)
		}
	}
	cmd := exec.CommandContext(ctx, b.path, a...)
	cmd.Env = env
	tail := &sandbox.TailBuffer{Max: 8 << 10}
	out := io.Writer(tail)
	if spec.Output != nil {
		out = io.MultiWriter(tail, spec.Output)
	}
	cmd.Stdout, cmd.Stderr = out, out
	err := b.runSetupCmd(cmd, slirp)
	if errors.Is(err, errSlirp) {
		return fmt.Errorf("%w; bwrap said:\n%s", err, tail.LastLines(20))
	}
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("%w: %q did not finish within %s", sandbox.ErrInstall, spec.Script, timeout)
	case errors.As(err, &exit):
		return fmt.Errorf("%w: `%s` exited with code %d (bwrap, host tools); last output:\n%s", sandbox.ErrInstall, spec.Script, exit.ExitCode(), tail.LastLines(20))
	}
	return fmt.Errorf("bwrap install: %w", err)
}

// slirpWait starts a setup script in a sandbox that slirp4netns is to
// connect: it reports that it runs on fd 4 (by then bwrap has configured
// the sandbox's loopback, which slirp4netns must not race), waits for
// the go-ahead on fd 5, and closes both before the script runs.
const slirpWait = `printf x >&4 && exec 4>&- && read -r go <&5 && exec 5<&- && exec /bin/sh -c "$1"`

// runSetupCmd runs a bwrap command line; with slirp it passes bwrap's
// --info-fd (3) and --block-fd (6) pipes and slirpWait's two (4, 5), and
// connects the sandbox to slirp4netns before the script runs.
func (b *Backend) runSetupCmd(cmd *exec.Cmd, slirp string) error {
	if slirp == "" {
		return cmd.Run()
	}
	var parent, child []*os.File // info, started, go, block
	for i := range 4 {
		r, w, err := os.Pipe()
		if err != nil {
			closeAll(parent, child)
			return err
		}
		if i >= 2 { // go and block: the sandbox reads them
			parent, child = append(parent, w), append(child, r)
		} else {
			parent, child = append(parent, r), append(child, w)
		}
	}
	defer closeAll(parent, nil)
	cmd.ExtraFiles = child
	err := cmd.Start()
	closeAll(nil, child)
	if err != nil {
		return err
	}
	net, err := startSlirp(slirp, parent[0], parent[3], parent[1], parent[2])
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		return fmt.Errorf("bwrap install: %w: %w", errSlirp, err)
	}
	defer net.stop()
	return cmd.Wait()
}

func closeAll(a, b []*os.File) {
	for _, f := range append(append([]*os.File(nil), a...), b...) {
		f.Close()
	}
}

// writeSnapshot writes snap's files under dir.
func writeSnapshot(dir string, snap *sandbox.Snapshot) error {
	for _, p := range snap.Paths() {
		f := snap.Files[p]
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		mode := f.Mode.Perm()
		if mode == 0 {
			mode = 0o644
		}
		data, err := f.Bytes()
		if err != nil {
			return err
		}
		if err := os.WriteFile(dst, data, mode); err != nil {
			return err
		}
	}
	return nil
}

// shareReadable lets every uid read the tree (and enter its directories).
func shareReadable(root string) error {
	return filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.Type()&fs.ModeSymlink != 0 {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		m := info.Mode().Perm() | 0o444
		if d.IsDir() || m&0o100 != 0 {
			m |= 0o111
		}
		if m != info.Mode().Perm() {
			return os.Chmod(p, m)
		}
		return nil
	})
}

package bwrap

import (
	"bytes"
	"context"
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
)

// Install runs a dependency install step in a bwrap sandbox that shares
// the host's network (the only bwrap sandbox that does), on a temporary
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
	dir := filepath.Join(b.depsDir(), project, spec.Key)
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
	if err := b.runInstall(ctx, spec, ws, res.Mounts, ""); err != nil {
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
func (b *Backend) depsDir() string {
	if os.Geteuid() == 0 {
		return "/var/tmp/fixpoint-deps"
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "fixpoint", "deps")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("fixpoint-deps-%d", os.Getuid()))
}

// PrebuildGoStd compiles the standard library into the Go build cache of
// the project labelled in labels (see goCache), once: without it the
// first test run of every project compiles it inside its per-command
// timeout (go-cmp and urfave/cli/v2 ran past 120 s on two busy cores).
// It runs `go build std` in a setup-like sandbox with the host's tools and
// no workspace code; a marker file in the cache records that it is done.
// A project without a build cache (none, or turned off) does nothing.
func (b *Backend) PrebuildGoStd(ctx context.Context, labels map[string]string) error {
	dir := b.goCache(sandbox.Spec{Labels: labels})
	if dir == "" {
		return nil
	}
	marker := filepath.Join(dir, "fixpoint-std-built")
	if _, err := os.Stat(marker); err == nil {
		return nil
	}
	ws, err := os.MkdirTemp(b.opts.TempDir, "fixpoint-setup-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(ws)
	spec := sandbox.InstallSpec{Script: "go build std", Limits: sandbox.Limits{Timeout: 15 * time.Minute}}
	if err := b.runInstall(ctx, spec, ws, nil, dir); err != nil {
		return err
	}
	return os.WriteFile(marker, nil, 0o644)
}

func (b *Backend) runInstall(ctx context.Context, spec sandbox.InstallSpec, ws string, mounts []sandbox.CacheMount, goCache string) error {
	timeout := spec.Limits.Timeout
	if timeout <= 0 {
		timeout = 15 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	a := []string{"--unshare-all", "--share-net", "--unshare-user", "--disable-userns", "--die-with-parent", "--new-session",
		"--uid", "1000", "--gid", "1000", "--ro-bind", "/usr", "/usr"}
	for _, top := range []string{"bin", "sbin", "lib", "lib32", "lib64", "libx32"} {
		p := "/" + top
		if target, err := os.Readlink(p); err == nil {
			a = append(a, "--symlink", target, p)
		} else if st, err := os.Stat(p); err == nil && st.IsDir() {
			a = append(a, "--ro-bind", p, p)
		}
	}
	// The allow-listed /etc plus what name resolution needs.
	for _, pat := range append(etcAllow, "resolv.conf", "hosts", "host.conf", "gai.conf") {
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
	script := spec.Script
	if spec.Snapshot != nil && spec.Snapshot.Git != nil {
		script = spec.Snapshot.Git.WrapScript(script) // `prepare: lefthook install` needs a repository
	}
	a = append(a, "--chdir", "/workspace", "--", "/bin/sh", "-c", script)
	path := sandboxPath
	if len(spec.Path) > 0 {
		path = strings.Join(spec.Path, ":") + ":" + path
	}
	env := []string{"PATH=" + path, "HOME=/tmp", "LANG=C.UTF-8", "TMPDIR=/tmp"}
	env = append(env, spec.Env...)
	env = append(env, spec.HostEnv...)
	if goCache != "" {
		env = append(env, "GOCACHE=/gocache")
	}
	if spec.CAFile != "" {
		const ca = "/etc/ssl/certs/ca-certificates.crt"
		env = append(env, "NODE_EXTRA_CA_CERTS="+ca, "SSL_CERT_FILE="+ca, "PIP_CERT="+ca, "GIT_SSL_CAINFO="+ca, "REQUESTS_CA_BUNDLE="+ca)
	}
	cmd := exec.CommandContext(ctx, b.path, a...)
	cmd.Env = env
	var tail tailBuffer
	out := io.Writer(&tail)
	if spec.Output != nil {
		out = io.MultiWriter(&tail, spec.Output)
	}
	cmd.Stdout, cmd.Stderr = out, out
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case ctx.Err() != nil:
		return fmt.Errorf("%w: %q did not finish within %s", sandbox.ErrInstall, spec.Script, timeout)
	case errors.As(err, &exit):
		return fmt.Errorf("%w: `%s` exited with code %d (bwrap, host tools); last output:\n%s", sandbox.ErrInstall, spec.Script, exit.ExitCode(), tail.lastLines(20))
	}
	return fmt.Errorf("bwrap install: %w", err)
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

// tailBuffer keeps the last 8 KiB written to it.
type tailBuffer struct{ b []byte }

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.b = append(t.b, p...)
	if len(t.b) > 8<<10 {
		t.b = append([]byte(nil), t.b[len(t.b)-8<<10:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) lastLines(n int) string {
	lines := bytes.Split(bytes.TrimRight(t.b, "\n"), []byte("\n"))
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return string(bytes.Join(lines, []byte("\n")))
}

package image

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/fixpoint-dev/fixpoint/flock"
)

// ensureRootfs returns the cached debootstrapped tree for r, creating it
// when missing. Concurrent builders of the same tree wait on a file lock.
func (b *Builder) ensureRootfs(ctx context.Context, r Recipe, in Inputs) (string, error) {
	key := r.RootfsKey(in)
	dir := filepath.Join(b.cacheDir, "rootfs-"+key)
	done := dir + ".ok"
	if _, err := os.Stat(done); err == nil {
		b.progressf("%s: using cached root filesystem %s", r.Name, dir)
		return dir, nil
	}
	if err := os.MkdirAll(b.cacheDir, 0o755); err != nil {
		return "", fmt.Errorf("create cache dir: %w", err)
	}
	unlock, err := flock.Lock(ctx, dir+".lock", nil)
	if err != nil {
		return "", err
	}
	defer unlock()
	if _, err := os.Stat(done); err == nil { // another process built it meanwhile
		return dir, nil
	}
	if len(r.Extra) > 0 {
		return dir, b.deriveRootfs(ctx, r, in, dir)
	}
	if os.Geteuid() != 0 {
		return "", errors.New("debootstrap needs root: run `sudo fixpoint sandbox images build`, or set sandbox.image to an image you can pull")
	}
	debootstrap, err := exec.LookPath(b.opts.Debootstrap)
	if err != nil {
		return "", fmt.Errorf("debootstrap not found: install it with `apt-get install debootstrap`")
	}
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return "", fmt.Errorf("remove stale %s: %w", tmp, err)
	}
	debs := filepath.Join(b.cacheDir, "debs")
	logDir := filepath.Join(b.cacheDir, "logs")
	for _, d := range []string{debs, logDir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return "", fmt.Errorf("create %s: %w", d, err)
		}
	}
	logPath := filepath.Join(logDir, "debootstrap-"+key+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return "", fmt.Errorf("create log: %w", err)
	}
	defer logf.Close()

	// dpkg inside debootstrap reads this once it is installed: no fsync per
	// file (about a third of the time here). A crash only loses the tmp tree.
	unsafeIO := filepath.Join(tmp, "etc/dpkg/dpkg.cfg.d/fixpoint-unsafe-io")
	if err := os.MkdirAll(filepath.Dir(unsafeIO), 0o755); err != nil {
		return "", fmt.Errorf("prepare %s: %w", tmp, err)
	}
	if err := os.WriteFile(unsafeIO, []byte("force-unsafe-io\n"), 0o644); err != nil {
		return "", fmt.Errorf("prepare %s: %w", tmp, err)
	}
	args := []string{"--variant=minbase", "--cache-dir=" + debs, "--include=" + strings.Join(r.Packages, ","), in.Suite, tmp, in.Mirror}
	b.progressf("%s: debootstrap %s from %s with %s (log: %s)", r.Name, in.Suite, in.Mirror, strings.Join(r.Packages, " "), logPath)
	start := time.Now()
	cmd := exec.CommandContext(ctx, debootstrap, args...)
	cmd.Env = append(os.Environ(), "LC_ALL=C", "DEBIAN_FRONTEND=noninteractive")
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return "", fmt.Errorf("start debootstrap: %w", err)
	}
	scanDone := make(chan []string)
	go func() { scanDone <- b.follow(r.Name, pr, logf, debootstrapPhases) }()
	werr := cmd.Wait()
	pw.Close()
	tail := <-scanDone
	if werr != nil {
		os.RemoveAll(tmp)
		return "", fmt.Errorf("debootstrap %s failed (%v); full log: %s\n%s", r.Name, werr, logPath, strings.Join(tail, "\n"))
	}
	if err := os.Remove(unsafeIO); err != nil {
		return "", fmt.Errorf("finish rootfs: %w", err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		return "", fmt.Errorf("install rootfs: %w", err)
	}
	if err := os.WriteFile(done, []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("mark rootfs: %w", err)
	}
	b.progressf("%s: root filesystem ready in %s", r.Name, time.Since(start).Round(time.Second))
	return dir, nil
}

type phase struct{ prefix, label string }

var debootstrapPhases = []phase{
	{"I: Retrieving", "downloading packages"},
	{"I: Extracting", "extracting the base system"},
	{"I: Installing core", "installing core packages"},
	{"I: Unpacking", "unpacking packages"},
	{"I: Configuring", "configuring packages"},
}

var aptPhases = []phase{
	{"Get:", "downloading packages"},
	{"Unpacking", "unpacking packages"},
	{"Setting up", "configuring packages"},
}

// follow copies a tool's output to the log and prints one progress line
// per phase. It returns the last lines, for error messages.
func (b *Builder) follow(name string, r io.Reader, log io.Writer, phases []phase) []string {
	var tail []string
	last := ""
	count := 0
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		fmt.Fprintln(log, line)
		tail = append(tail, line)
		if len(tail) > 15 {
			tail = tail[1:]
		}
		for _, p := range phases {
			if strings.HasPrefix(line, p.prefix) {
				if p.label != last {
					if last != "" {
						b.progressf("%s:   %s: %d steps", name, last, count)
					}
					last, count = p.label, 0
					b.progressf("%s:   %s...", name, p.label)
				}
				count++
				break
			}
		}
	}
	io.Copy(io.Discard, r) // unblock the writer if the scanner stopped early
	if last != "" {
		b.progressf("%s:   %s: %d steps", name, last, count)
	}
	return tail
}

// deriveRootfs builds dir as a copy of the recipe's base tree with
// r.Extra installed by apt-get, run under bwrap with the tree as its root
// (so /proc and /dev exist and nothing stays mounted afterwards).
func (b *Builder) deriveRootfs(ctx context.Context, r Recipe, in Inputs, dir string) error {
	base := r
	base.Extra = nil
	baseDir, err := b.ensureRootfs(ctx, base, in)
	if err != nil {
		return err
	}
	if os.Geteuid() != 0 {
		return errors.New("installing packages into the image tree needs root: run `sudo fixpoint sandbox images build`")
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		return errors.New("bwrap not found: install it with `apt-get install bubblewrap`")
	}
	key := r.RootfsKey(in)
	tmp := dir + ".tmp"
	if err := os.RemoveAll(tmp); err != nil {
		return fmt.Errorf("remove stale %s: %w", tmp, err)
	}
	start := time.Now()
	b.progressf("%s: copying the base tree and installing %s with apt-get", r.Name, strings.Join(r.Extra, " "))
	if out, err := exec.CommandContext(ctx, "cp", "-a", baseDir, tmp).CombinedOutput(); err != nil {
		return fmt.Errorf("copy %s: %v: %s", baseDir, err, out)
	}
	logPath := filepath.Join(b.cacheDir, "logs", "apt-"+key+".log")
	logf, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("create log: %w", err)
	}
	defer logf.Close()
	debs := filepath.Join(b.cacheDir, "debs")
	args := []string{"--bind", tmp, "/", "--proc", "/proc", "--dev", "/dev", "--perms", "01777", "--tmpfs", "/tmp", // apt runs gpgv as _apt, which writes to /tmp
		"--bind", debs, "/var/cache/apt/archives",
		"--clearenv", "--setenv", "PATH", "/usr/sbin:/usr/bin:/sbin:/bin", "--setenv", "DEBIAN_FRONTEND", "noninteractive", "--setenv", "LC_ALL", "C"}
	if _, err := os.Stat("/etc/resolv.conf"); err == nil {
		args = append(args, "--ro-bind", "/etc/resolv.conf", "/etc/resolv.conf")
	}
	// --force-unsafe-io: no fsync per file; a crash only loses this tmp tree.
	install := "apt-get install -y -q --no-install-recommends -o Dpkg::Use-Pty=0 -o Dpkg::Options::=--force-unsafe-io " + strings.Join(r.Extra, " ")
	script := install + " || { apt-get update -q && " + install + "; }"
	args = append(args, "--", "/bin/sh", "-c", script)
	// Every image's apt-get shares the downloaded-package cache (debs,
	// bound at /var/cache/apt/archives), and apt-get locks that directory:
	// a second apt-get on it fails at once ("Could not get lock
	// /var/cache/apt/archives/lock"). Builds of several images run in
	// parallel, so their apt steps take turns on a lock of our own.
	aptLock := filepath.Join(b.cacheDir, "debs.lock")
	unlock, err := flock.Lock(ctx, aptLock, func() {
		b.progressf("%s: waiting for another image's apt-get (shared package cache)", r.Name)
	})
	if err != nil {
		return fmt.Errorf("lock the package cache %s: %w", aptLock, err)
	}
	defer unlock()
	cmd := exec.CommandContext(ctx, bwrap, args...)
	pr, pw := io.Pipe()
	cmd.Stdout, cmd.Stderr = pw, pw
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start apt-get: %w", err)
	}
	scanDone := make(chan []string)
	go func() { scanDone <- b.follow(r.Name, pr, logf, aptPhases) }()
	werr := cmd.Wait()
	pw.Close()
	tail := <-scanDone
	if werr != nil {
		os.RemoveAll(tmp)
		return fmt.Errorf("apt-get install %s failed (%v); full log: %s\n%s", strings.Join(r.Extra, " "), werr, logPath, strings.Join(tail, "\n"))
	}
	if err := os.Rename(tmp, dir); err != nil {
		return fmt.Errorf("install rootfs: %w", err)
	}
	if err := os.WriteFile(dir+".ok", []byte(time.Now().UTC().Format(time.RFC3339)+"\n"), 0o644); err != nil {
		return fmt.Errorf("mark rootfs: %w", err)
	}
	b.progressf("%s: root filesystem ready in %s", r.Name, time.Since(start).Round(time.Second))
	return nil
}

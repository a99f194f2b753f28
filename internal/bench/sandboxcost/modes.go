package sandboxcost

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
)

func newRunner(ctx context.Context, mode string, o *Options) (runner, error) {
	if rt, ok := variantRuntime(mode); ok {
		return newVariantRunner(ctx, o, rt)
	}
	switch mode {
	case ModeBare:
		dir, err := os.MkdirTemp("", "fixpoint-bench-")
		if err != nil {
			return nil, err
		}
		return &hostRunner{dir: dir}, nil
	case ModeBwrap:
		p, err := exec.LookPath("bwrap")
		if err != nil {
			return nil, errors.New("bwrap is not on PATH")
		}
		dir, err := os.MkdirTemp("", "fixpoint-bench-")
		if err != nil {
			return nil, err
		}
		r := &hostRunner{dir: dir, prefix: bwrapArgs(p, dir)}
		if _, err := r.run(ctx, Workload{Args: []string{"true"}}); err != nil {
			r.close()
			return nil, fmt.Errorf("bwrap does not run here: %w", err)
		}
		return r, nil
	case ModeDockerOneShot, ModeDockerExec, ModeFixpoint, ModeFixpointRunsc:
		if o.Client == nil {
			return nil, errors.New("no Docker client")
		}
		if _, err := o.Client.ImageInspect(ctx, o.Image); err != nil {
			return nil, fmt.Errorf("image %s: %w", o.Image, err)
		}
	default:
		return nil, fmt.Errorf("unknown mode %q", mode)
	}
	switch mode {
	case ModeDockerOneShot:
		return &oneShotRunner{cli: o.Client, image: o.Image}, nil
	case ModeDockerExec:
		return newExecRunner(ctx, o.Client, o.Image)
	case ModeFixpoint:
		return newFixpointRunner(ctx, o, "")
	default:
		return newFixpointRunner(ctx, o, "runsc")
	}
}

// bwrapArgs runs a command with the host's /usr read-only, private
// namespaces, and the scratch directory as the only writable place.
func bwrapArgs(bwrap, dir string) []string {
	args := []string{bwrap, "--ro-bind", "/usr", "/usr", "--ro-bind", "/etc", "/etc"}
	for _, l := range []string{"bin", "lib", "lib64", "sbin"} {
		if t, err := os.Readlink("/" + l); err == nil {
			args = append(args, "--symlink", t, "/"+l)
		}
	}
	return append(args, "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp",
		"--bind", dir, "/workspace", "--chdir", "/workspace",
		"--unshare-all", "--die-with-parent", "--new-session", "--clearenv",
		"--setenv", "PATH", hostPath, "--setenv", "HOME", "/workspace", "--setenv", "LANG", "C.UTF-8", "--")
}

// hostRunner runs a process on the host, optionally through a wrapper.
type hostRunner struct {
	dir    string
	prefix []string
}

// hostPath is the PATH of bare and bwrap runs: the sandbox's default, so
// that user shims (pyenv, asdf) on the caller's PATH do not skew "bare".
const hostPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// lookHostPath resolves name on hostPath.
func lookHostPath(name string) (string, error) {
	if strings.Contains(name, "/") {
		return name, nil
	}
	for _, dir := range filepath.SplitList(hostPath) {
		p := filepath.Join(dir, name)
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() && st.Mode()&0o111 != 0 {
			return p, nil
		}
	}
	return "", fmt.Errorf("%s not found on %s", name, hostPath)
}

func (r *hostRunner) run(ctx context.Context, w Workload) (time.Duration, error) {
	argv := append(append([]string(nil), r.prefix...), w.Args...)
	path, err := lookHostPath(argv[0])
	if err != nil {
		return 0, err
	}
	cmd := exec.CommandContext(ctx, path, argv[1:]...)
	cmd.Dir = r.dir
	// The environment a sandboxed command gets, not the caller's.
	cmd.Env = []string{"PATH=" + hostPath, "HOME=" + r.dir, "LANG=C.UTF-8", "TMPDIR=" + os.TempDir()}
	start := time.Now()
	out, err := cmd.CombinedOutput()
	d := time.Since(start)
	if err != nil {
		return 0, fmt.Errorf("%v: %s", err, out)
	}
	return d, nil
}

func (r *hostRunner) close() error { return os.RemoveAll(r.dir) }

// oneShotRunner creates, starts, waits for and removes a container per run.
type oneShotRunner struct {
	cli   *client.Client
	image string
}

func (r *oneShotRunner) run(ctx context.Context, w Workload) (time.Duration, error) {
	start := time.Now()
	c, err := r.cli.ContainerCreate(ctx, &container.Config{Image: r.image, Cmd: w.Args, WorkingDir: "/tmp",
		Labels: docker.OwnerLabels("bench-oneshot", map[string]string{"fixpoint.bench": "oneshot"})},
		&container.HostConfig{NetworkMode: "none"}, nil, nil, "")
	if err != nil {
		return 0, err
	}
	defer r.cli.ContainerRemove(context.WithoutCancel(ctx), c.ID, container.RemoveOptions{Force: true})
	waitC, errC := r.cli.ContainerWait(ctx, c.ID, container.WaitConditionNextExit)
	if err := r.cli.ContainerStart(ctx, c.ID, container.StartOptions{}); err != nil {
		return 0, err
	}
	select {
	case res := <-waitC:
		if res.StatusCode != 0 {
			return 0, fmt.Errorf("exit status %d", res.StatusCode)
		}
	case err := <-errC:
		return 0, err
	}
	if err := r.cli.ContainerRemove(ctx, c.ID, container.RemoveOptions{Force: true}); err != nil {
		return 0, err
	}
	return time.Since(start), nil
}

func (r *oneShotRunner) close() error { return nil }

// execRunner runs each command with `docker exec` in one warm container.
type execRunner struct {
	cli *client.Client
	id  string
}

func newExecRunner(ctx context.Context, cli *client.Client, image string) (*execRunner, error) {
	c, err := cli.ContainerCreate(ctx, &container.Config{Image: image, Cmd: []string{"sleep", "infinity"}, WorkingDir: "/tmp",
		Labels: docker.OwnerLabels("bench-exec", map[string]string{"fixpoint.bench": "exec"})},
		&container.HostConfig{NetworkMode: "none", Init: ptr(true)}, nil, nil, "")
	if err != nil {
		return nil, err
	}
	r := &execRunner{cli: cli, id: c.ID}
	if err := cli.ContainerStart(ctx, c.ID, container.StartOptions{}); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

func ptr[T any](v T) *T { return &v }

func (r *execRunner) run(ctx context.Context, w Workload) (time.Duration, error) {
	start := time.Now()
	ex, err := r.cli.ContainerExecCreate(ctx, r.id, container.ExecOptions{Cmd: w.Args, AttachStdout: true, AttachStderr: true, WorkingDir: "/tmp"})
	if err != nil {
		return 0, err
	}
	hj, err := r.cli.ContainerExecAttach(ctx, ex.ID, container.ExecAttachOptions{})
	if err != nil {
		return 0, err
	}
	_, err = stdcopy.StdCopy(io.Discard, io.Discard, hj.Reader)
	hj.Close()
	if err != nil {
		return 0, err
	}
	ins, err := r.cli.ContainerExecInspect(ctx, ex.ID)
	if err != nil {
		return 0, err
	}
	if ins.ExitCode != 0 {
		return 0, fmt.Errorf("exit status %d", ins.ExitCode)
	}
	return time.Since(start), nil
}

func (r *execRunner) close() error {
	return r.cli.ContainerRemove(context.Background(), r.id, container.RemoveOptions{Force: true})
}

// fixpointRunner runs commands through a docker backend session.
type fixpointRunner struct {
	b    *docker.Backend
	sess sandbox.Session
}

func newFixpointRunner(ctx context.Context, o *Options, runtime string) (*fixpointRunner, error) {
	b, err := docker.New(ctx, &docker.Options{Client: o.Client, Runtime: runtime, Logger: o.Logger, NoReap: true})
	if err != nil {
		return nil, err
	}
	sess, err := b.Start(ctx, sandbox.Spec{Image: o.Image, Labels: map[string]string{"fixpoint.bench": "fixpoint"}})
	if err != nil {
		return nil, err
	}
	r := &fixpointRunner{b: b, sess: sess}
	if _, err := r.run(ctx, Workload{Args: []string{"true"}}); err != nil {
		r.close()
		return nil, err
	}
	return r, nil
}

func (r *fixpointRunner) run(ctx context.Context, w Workload) (time.Duration, error) {
	start := time.Now()
	res, err := r.sess.Run(ctx, sandbox.Command{Args: w.Args})
	d := time.Since(start)
	if err != nil {
		return 0, err
	}
	if res.ExitCode != 0 {
		return 0, fmt.Errorf("exit status %d: %s", res.ExitCode, res.Stderr)
	}
	return d, nil
}

func (r *fixpointRunner) close() error { return r.sess.Close() }

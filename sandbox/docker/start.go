package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/pkg/stdcopy"
	"github.com/docker/go-units"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker/supclient"
)

const (
	supervisorDir  = "/.fixpoint"
	supervisorPath = supervisorDir + "/supervisor"
	workspaceDir   = "/workspace"
	defaultPath    = supclient.DefaultPath
)

// Start starts a hardened container for spec and waits for its supervisor.
// A missing image wraps sandbox.ErrImageMissing.
func (b *Backend) Start(ctx context.Context, spec sandbox.Spec) (sandbox.Session, error) {
	s, err := b.start(ctx, spec)
	if err != nil {
		// An engine that went away between sessions fails the start at
		// its first call: say so, as a session's stream does (streamErr),
		// rather than pass on the client's connection error.
		if ctx.Err() == nil && !errors.Is(err, sandbox.ErrImageMissing) && !errors.Is(err, sandbox.ErrUnavailable) && b.engineGone() {
			return nil, fmt.Errorf("the Docker engine stopped answering (%w: %v); start it again and retry", sandbox.ErrUnavailable, err)
		}
		return nil, err
	}
	return s, nil
}

// engineGone reports whether the engine does not answer a ping.
func (b *Backend) engineGone() bool {
	pctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := b.cli.Ping(pctx)
	return err != nil
}

func (b *Backend) start(ctx context.Context, spec sandbox.Spec) (*Session, error) {
	if spec.Image == "" {
		return nil, fmt.Errorf("docker sandbox: no image given: %w", sandbox.ErrImageMissing)
	}
	// Containers earlier sessions could not remove (the engine was
	// unreachable) go now; a still-dead engine costs one bounded attempt.
	if n, err := b.retryPending(ctx, retryOnStart); n > 0 {
		b.log.Debug("sandbox resources still left behind", "count", n, "err", err)
	}
	img, err := b.cli.ImageInspect(ctx, spec.Image)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return nil, fmt.Errorf("image %s: %w", spec.Image, sandbox.ErrImageMissing)
		}
		return nil, fmt.Errorf("inspect image %s: %w", spec.Image, err)
	}
	// Commands see the image's own environment (never the host's), with
	// PATH kept and HOME, LANG, TMPDIR pointing at writable places.
	env := map[string]string{"PATH": defaultPath}
	var order []string
	imageUser := ""
	if img.Config != nil {
		imageUser = img.Config.User
		for _, e := range img.Config.Env {
			if k, v, ok := strings.Cut(e, "="); ok {
				if _, seen := env[k]; !seen || k == "PATH" {
					order = append(order, k)
				}
				env[k] = v
			}
		}
	}
	env["HOME"], env["LANG"], env["TMPDIR"] = "/tmp", "C.UTF-8", "/tmp"
	baseEnv := []string{"PATH=" + env["PATH"], "HOME=/tmp", "LANG=C.UTF-8", "TMPDIR=/tmp"}
	for _, k := range order {
		switch k {
		case "PATH", "HOME", "LANG", "TMPDIR", "HOSTNAME":
		default:
			baseEnv = append(baseEnv, k+"="+env[k])
		}
	}
	supVol, err := b.ensureSupervisor(ctx, spec.Image)
	if err != nil {
		return nil, err
	}
	hostVols := map[string]string{}
	var hostEnv []string
	for _, c := range spec.Caches {
		if c.HostDir == "" {
			continue
		}
		vol, err := b.ensureHostCache(ctx, spec.Image, c.Name, c.HostDir)
		if err != nil {
			return nil, err
		}
		hostVols[c.Target] = vol
		hostEnv = append(hostEnv, c.HostEnv(c.Target)...)
	}
	toolMounts, toolPath, toolEnv, err := b.copyTools(ctx, spec.Image, spec.HostTools)
	if err != nil {
		return nil, err
	}
	s := &Session{
		b:          b,
		spec:       spec,
		limits:     supclient.Defaults(spec.Limits),
		supVol:     supVol,
		hostVols:   hostVols,
		toolMounts: toolMounts,
		baseEnv:    baseEnv,
		user:       sandboxUser(b.opts.User, imageUser),
	}
	s.baseEnv = append(s.baseEnv, hostEnv...)
	s.baseEnv = append(s.baseEnv, toolEnv...)
	envSpec := spec
	envSpec.Path = append(slices.Clip(toolPath), spec.Path...)
	s.baseEnv = supclient.SpecEnv(s.baseEnv, envSpec)
	if err := s.boot(ctx); err != nil {
		if !errors.Is(err, supclient.ErrNotStarted) {
			return nil, err
		}
		// Most likely a volume left half-filled by a crash: refill it once.
		b.log.Warn("sandbox supervisor did not start; refilling its volume", "volume", supVol, "err", err)
		if rerr := b.refillSupervisor(ctx, spec.Image, supVol); rerr != nil {
			return nil, fmt.Errorf("%w (refill: %w)", err, rerr)
		}
		if err := s.boot(ctx); err != nil {
			return nil, err
		}
	}
	return s, nil
}

func newSessionName() string {
	var b [6]byte
	rand.Read(b[:])
	return "fixpoint-" + hex.EncodeToString(b[:])
}

// boot creates, attaches and starts a new container for s and waits for
// the supervisor's Ready frame.
func (s *Session) boot(ctx context.Context) error {
	b := s.b
	name := newSessionName()
	labels := ownerLabels(name)
	for k, v := range s.spec.Labels {
		if _, own := labels[k]; !own {
			labels[k] = v
		}
	}
	mounts, err := s.mounts(ctx)
	if err != nil {
		return err
	}
	var layers []string
	for _, c := range s.spec.Caches {
		for _, w := range c.Writable {
			if sandbox.WritableName(w) { // the install made it a directory
				layers = append(layers, c.Target+"/"+w)
			}
		}
	}
	cfg, hc := hardenedContainer(containerParams{
		Image: s.spec.Image, User: s.user, Env: s.baseEnv, Labels: labels, Mounts: mounts, Layers: layers,
		Limits: s.limits, Runtime: b.opts.Runtime, Kind: b.kind,
		WorkspaceSize: b.opts.WorkspaceSize, TmpSize: b.opts.TmpSize,
	})
	created, err := b.createContainer(ctx, cfg, hc, name, name)
	if err != nil {
		return fmt.Errorf("create sandbox container: %w", err)
	}
	id := created.ID
	fail := func(err error) error {
		b.removeOrDefer(ctx, removeTimeout, leftover{id: id, session: name})
		return err
	}
	hj, err := b.cli.ContainerAttach(ctx, id, container.AttachOptions{Stream: true, Stdin: true, Stdout: true, Stderr: true})
	if err != nil {
		// Podman initialises the container at attach, so a runtime error
		// (a mount, an rlimit) is only "received 409" here; starting it
		// gives the runtime's own message.
		if serr := b.cli.ContainerStart(ctx, id, container.StartOptions{}); serr != nil {
			return fail(fmt.Errorf("attach sandbox %s: %w (starting it: %v)", name, err, serr))
		}
		return fail(fmt.Errorf("attach sandbox %s: %w", name, err))
	}
	pr, pw := io.Pipe()
	go func() {
		_, err := stdcopy.StdCopy(pw, logWriter{b.log.With("session", name)}, hj.Reader)
		if err == nil {
			err = io.EOF
		}
		pw.CloseWithError(err)
	}()
	if err := b.cli.ContainerStart(ctx, id, container.StartOptions{}); err != nil {
		hj.Close()
		return fail(fmt.Errorf("start sandbox %s: %w", name, err))
	}
	c := supclient.New(pr, hj.Conn, hj.Close)
	c.Log = b.log.With("session", name)
	if err := c.AwaitReady(ctx, 30*time.Second); err != nil {
		c.Close()
		return fail(fmt.Errorf("sandbox %s: %w", name, err))
	}
	s.mu.Lock()
	s.name, s.id, s.conn = name, id, c
	s.mu.Unlock()
	b.log.Debug("sandbox started", "session", name, "container", id[:12], "image", s.spec.Image, "runtime", b.opts.Runtime)
	if !s.spec.DeferSeed || s.seedAsked {
		// (a replaced container of a deferred session is seeded again
		// once its seed was asked for)
		s.seedGoCache(ctx)
	}
	return nil
}

// containerParams is what a session's container is made of; everything
// else about it is fixed by hardenedContainer.
type containerParams struct {
	Image  string
	User   string // "uid:gid" or "uid" (gid = uid)
	Env    []string
	Labels map[string]string
	Mounts []mount.Mount // the supervisor volume first, then caches
	// Layers are the writable tmpfs layers over caches
	// (CacheMount.Writable), each bounded by writableLayerSize.
	Layers []string
	Limits sandbox.Limits
	// Runtime is the OCI runtime ("" = the engine's default, "runsc" =
	// gVisor); Kind is the engine, "docker" or "podman".
	Runtime, Kind string
	// WorkspaceSize and TmpSize bound the /workspace and /tmp tmpfs;
	// zero means 1 GiB and 256 MiB.
	WorkspaceSize, TmpSize int64
}

// hardenedContainer is the container a session runs in: no network, a
// read-only root, every capability dropped, no-new-privileges, its own
// init and IPC namespace, tmpfs /tmp and /workspace, and the session's
// memory, CPU, pids, open-file and file-size limits. It is pure (the
// golden test in testdata/hardened.golden shows its output), so what
// isolates a sandbox can be read in one place.
func hardenedContainer(p containerParams) (*container.Config, *container.HostConfig) {
	uid, gid, _ := strings.Cut(p.User, ":")
	if gid == "" {
		gid = uid
	}
	wsSize, tmpSize := p.WorkspaceSize, p.TmpSize
	if wsSize <= 0 {
		wsSize = 1 << 30
	}
	if tmpSize <= 0 {
		tmpSize = 256 << 20
	}
	l := p.Limits
	init, pids := true, int64(l.Pids)
	if IsGVisor(p.Runtime) {
		// gVisor runs the sandbox's tasks as goroutines of its Sentry, and
		// the engine's pids limit applies to the Sentry's host threads: a
		// small limit kills gVisor itself. Tasks inside stay bounded by
		// the memory limit and the timeout; the kill sweep ends them.
		pids += 1024
	}
	cfg := &container.Config{
		Image:        p.Image,
		User:         p.User,
		Entrypoint:   []string{supervisorPath},
		Cmd:          []string{"-sweep", "-workspace", workspaceDir},
		WorkingDir:   workspaceDir,
		Env:          p.Env,
		AttachStdin:  true,
		AttachStdout: true,
		AttachStderr: true,
		OpenStdin:    true,
		StdinOnce:    true, // when fixpoint goes away, stdin closes and the supervisor exits
		// No NetworkDisabled: NetworkMode "none" (below) already leaves the
		// container only its loopback, and unlike NetworkDisabled it lets
		// the engine write /etc/hosts, so "localhost" resolves as it does
		// natively (a test server on localhost:PORT).
		Labels: p.Labels,
	}
	hc := &container.HostConfig{
		NetworkMode:    "none",
		ReadonlyRootfs: true,
		CapDrop:        []string{"ALL"},
		SecurityOpt:    []string{"no-new-privileges"},
		Init:           &init,
		IpcMode:        "private",
		Runtime:        p.Runtime,
		Tmpfs: map[string]string{
			"/tmp":       fmt.Sprintf("rw,nosuid,nodev,exec,size=%d,mode=1777", tmpSize),
			workspaceDir: workspaceTmpfs(p.Kind, wsSize, uid, gid),
		},
		Mounts: p.Mounts,
		Resources: container.Resources{
			Memory:     l.Memory,
			MemorySwap: l.Memory,
			NanoCPUs:   l.NanoCPUs,
			PidsLimit:  &pids,
			Ulimits: []*units.Ulimit{
				{Name: "nofile", Soft: int64(l.NoFile), Hard: int64(l.NoFile)},
				{Name: "fsize", Soft: l.FileSize, Hard: l.FileSize},
			},
		},
	}
	for _, l := range p.Layers {
		// Owned by the sandbox user as /workspace is: the engine copies
		// the mount point's mode (0755) onto the tmpfs, so mode=1777
		// alone would leave it root's.
		hc.Tmpfs[l] = workspaceTmpfs(p.Kind, writableLayerSize, uid, gid)
	}
	if p.Kind == "podman" {
		// Podman sets RLIMIT_NPROC to 1048576 when none is given, which
		// fails (EPERM in runc) where the engine lacks CAP_SYS_RESOURCE or
		// its own hard limit is lower; the pids limit above is what bounds
		// a sandbox, so give a modest per-uid cap explicitly.
		hc.Resources.Ulimits = append(hc.Resources.Ulimits, &units.Ulimit{Name: "nproc", Soft: podmanNproc, Hard: podmanNproc})
	}
	return cfg, hc
}

// writableLayerSize bounds each writable layer over a cache
// (CacheMount.Writable); it counts against the container's memory.
const writableLayerSize = 512 << 20

// mounts are the volumes of s's container: the supervisor (read-only),
// the spec's caches (read-only), the Go build cache and the test runner's
// cache when the spec has them.
func (s *Session) mounts(ctx context.Context) ([]mount.Mount, error) {
	b := s.b
	mounts := []mount.Mount{{Type: mount.TypeVolume, Source: s.supVol, Target: supervisorDir, ReadOnly: true}}
	for _, c := range s.spec.Caches {
		src := c.Source
		if c.HostDir != "" {
			src = s.hostVols[c.Target]
		}
		mounts = append(mounts, mount.Mount{Type: mount.TypeVolume, Source: src, Target: c.Target, ReadOnly: true})
	}
	mounts = append(mounts, s.toolMounts...)
	if m, err := b.goCacheMount(ctx, s.spec); err != nil {
		return nil, err
	} else if m != nil {
		mounts = append(mounts, *m)
	}
	s.seedInto = ""
	if m, dir, err := b.goCacheSeed(ctx, s.spec); err != nil {
		return nil, err
	} else if m != nil {
		mounts = append(mounts, *m)
		s.seedInto = dir
	}
	if m, err := b.runnerCacheMount(ctx, s.spec, s.user); err != nil {
		return nil, err
	} else if m != nil {
		mounts = append(mounts, *m)
	}
	return mounts, nil
}

// ensureSupervisor returns the name of a volume holding this build of the
// supervisor, creating and filling it when missing.
func (b *Backend) ensureSupervisor(ctx context.Context, image string) (string, error) {
	name, source := b.supervisorVolume, b.supervisorVolume
	if name == "" {
		name, source = "fixpoint-supervisor-"+supervisorID()[:16], "supervisor"
	}
	bin, _ := supervisorBinary(b.arch)
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	tw.WriteHeader(&tar.Header{Name: "supervisor", Mode: 0o755, Size: int64(len(bin)), Typeflag: tar.TypeReg, ModTime: time.Unix(0, 0)})
	tw.Write(bin)
	tw.Close()
	return name, b.ensureVolume(ctx, image, name, "supervisor", source, func() (io.Reader, error) { return &buf, nil })
}

// refillSupervisor removes a supervisor volume that no container uses and
// fills it again.
func (b *Backend) refillSupervisor(ctx context.Context, image, name string) error {
	b.mu.Lock()
	delete(b.volumes, name)
	err := b.cli.VolumeRemove(ctx, name, false)
	b.mu.Unlock()
	if err != nil && !cerrdefs.IsNotFound(err) {
		return fmt.Errorf("remove volume %s: %w", name, err)
	}
	_, err = b.ensureSupervisor(ctx, image)
	return err
}

// ensureVolume makes sure a shared cache volume exists and was filled by
// fill (a tar stream extracted at the volume's root). A volume this
// process has not seen yet and that exists already is trusted: its name
// carries the hash of its contents, and fixpoint processes on this host
// create and fill a volume under a lock ([lockVolume]), so one that exists
// here is complete. After filling a new volume, older
// volumes of the same kind and source that no container uses are removed.
func (b *Backend) ensureVolume(ctx context.Context, image, name, kind, source string, fill func() (io.Reader, error)) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.volumes[name] {
		// `fixpoint cache prune` may have removed it since (a mount of a
		// missing volume would get an empty new one).
		if _, err := b.cli.VolumeInspect(ctx, name); err == nil {
			return nil
		}
		delete(b.volumes, name)
	}
	unlock, err := lockVolume(ctx, b.volumeLockDir(), name)
	if err != nil {
		return err
	}
	defer unlock()
	if _, err := b.cli.VolumeInspect(ctx, name); err == nil {
		b.volumes[name] = true
		return nil
	}
	labels := map[string]string{LabelCache: kind, labelCacheSource: source}
	if _, err := b.cli.VolumeCreate(ctx, volume.CreateOptions{Name: name, Labels: labels}); err != nil {
		return fmt.Errorf("create volume %s: %w", name, err)
	}
	content, err := fill()
	if err == nil {
		err = b.fillVolume(ctx, image, name, content)
	}
	if err != nil {
		b.removeOrDefer(ctx, removeTimeout, leftover{volume: true, id: name})
		return err
	}
	b.volumes[name] = true
	b.pruneVolumes(ctx, kind, source, name)
	return nil
}

// labelCacheSource groups cache volumes filled from the same source.
const labelCacheSource = "fixpoint.cache.source"

// pruneVolumes removes unused older volumes of the same kind and source.
func (b *Backend) pruneVolumes(ctx context.Context, kind, source, keep string) {
	f := filters.NewArgs(filters.Arg("label", LabelCache+"="+kind), filters.Arg("label", labelCacheSource+"="+source))
	list, err := b.cli.VolumeList(ctx, volume.ListOptions{Filters: f})
	if err != nil {
		return
	}
	for _, v := range list.Volumes {
		// Podman (4.3) ORs several label filters where Docker ANDs them:
		// every deps volume matched, and pruning one cache removed the
		// volume the same install had just filled. Check both here.
		if v.Labels[LabelCache] != kind || v.Labels[labelCacheSource] != source {
			continue
		}
		if v.Name != keep && b.cli.VolumeRemove(ctx, v.Name, false) == nil {
			b.log.Debug("removed outdated cache volume", "volume", v.Name)
		}
	}
}

// fillVolume extracts a tar stream into a volume through a container that
// is created, never started, and removed.
func (b *Backend) fillVolume(ctx context.Context, image, name string, content io.Reader) error {
	cfg := &container.Config{Image: image, Entrypoint: []string{"/nonexistent"}, NetworkDisabled: true,
		Labels: ownerLabels("fill-" + name)}
	hc := &container.HostConfig{NetworkMode: "none", Mounts: []mount.Mount{{Type: mount.TypeVolume, Source: name, Target: "/fill"}}}
	c, err := b.createContainer(ctx, cfg, hc, "", "fill-"+name)
	if err != nil {
		return fmt.Errorf("fill volume %s: %w", name, err)
	}
	defer b.removeOrDefer(ctx, removeTimeout, leftover{id: c.ID, session: "fill-" + name})
	if err := b.cli.CopyToContainer(ctx, c.ID, "/fill", content, container.CopyToContainerOptions{}); err != nil {
		return fmt.Errorf("fill volume %s: %w", name, err)
	}
	return nil
}

// sandboxUser picks the uid:gid commands run as: the configured one, else
// the image's user when it is numeric, not root and a valid id (below
// 2^31), else nobody.
func sandboxUser(configured, image string) string {
	if configured != "" {
		return configured
	}
	uid, gid, _ := strings.Cut(image, ":")
	if n, err := strconv.Atoi(uid); err == nil && n > 0 && n < 1<<31-1 {
		if g, err := strconv.Atoi(gid); err == nil && g > 0 && g < 1<<31-1 {
			return uid + ":" + gid
		}
		return uid + ":" + uid
	}
	return "65534:65534"
}

// workspaceTmpfs is the /workspace tmpfs's options, owned by the sandbox
// user. Podman (4.x) rejects uid=/gid= on a tmpfs; its "U" option chowns
// the tmpfs to the container's user instead (README, "Remote and rootless
// engines"). Podman also copies what the image (or a volume below) has
// at a tmpfs's mount point into it ("tmpcopyup") by default, which left
// the mount point of a writable layer over a read-only cache missing
// (runc: "mkdir …/node_modules/.cache: read-only file system"): every
// tmpfs here starts empty, as on Docker.
func workspaceTmpfs(kind string, size int64, uid, gid string) string {
	if kind == "podman" {
		return fmt.Sprintf("rw,nosuid,nodev,exec,size=%d,mode=0755,U,notmpcopyup", size)
	}
	return fmt.Sprintf("rw,nosuid,nodev,exec,size=%d,uid=%s,gid=%s,mode=0755", size, uid, gid)
}

// podmanNproc is the RLIMIT_NPROC given to sandboxes on Podman.
const podmanNproc = 4096

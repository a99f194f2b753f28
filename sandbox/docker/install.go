package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"path"
	"sort"
	"strconv"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	imagetypes "github.com/docker/docker/api/types/image"
	"github.com/docker/docker/api/types/mount"
	"github.com/docker/docker/api/types/network"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/pkg/jsonmessage"
	"github.com/docker/docker/pkg/stdcopy"
	units "github.com/docker/go-units"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker/supclient"
	"github.com/fixpoint-dev/fixpoint/sandbox/proxyrelay"
)

// CA bundle path inside the setup container, and the variables that make
// OpenSSL and git use it; an installer's own come with the step
// (InstallSpec.CAEnv, from the language). Go reads the standard path.
const caPath = "/etc/ssl/certs/ca-certificates.crt"

var caEnv = []string{"SSL_CERT_FILE=" + caPath, "GIT_SSL_CAINFO=" + caPath}

// Volume labels of dependency caches.
const (
	cacheKindDeps  = "deps"
	labelSetupKey  = "fixpoint.setup.key"
	labelSetupDone = "fixpoint.setup.done"
)

// Install runs a dependency install step in a setup container that has
// network, unless the caches for spec.Key exist already. Each cache is a
// volume "fixpoint-deps-<name>-<key>"; a marker volume
// "fixpoint-deps-<key>-done" is created only after the step succeeded, so
// a step that was interrupted is redone. The container runs as root only
// to hand the cache mount points to the sandbox user, then drops to that
// user (setpriv) for the step itself; it has the host's proxy variables
// (a proxy on the host's loopback or with credentials through a relay:
// relayProxies) and CA bundle, and never the host's other environment.
// It is on the engine's default bridge, never the host's network.
func (b *Backend) Install(ctx context.Context, spec sandbox.InstallSpec) (*sandbox.InstallResult, error) {
	if spec.Image == "" || spec.Key == "" || len(spec.Caches) == 0 {
		return nil, errors.New("docker install: image, key and caches are required")
	}
	res := &sandbox.InstallResult{}
	for _, c := range spec.Caches {
		res.Mounts = append(res.Mounts, sandbox.CacheMount{Source: depsVolume(c.Name, spec.Key), Target: c.Target, Writable: writableNames(c.Writable)})
	}
	done := "fixpoint-deps-" + spec.Key + "-done"
	if _, err := b.cli.VolumeInspect(ctx, done); err == nil {
		res.Cached = true
		return res, nil
	}
	img, err := b.cli.ImageInspect(ctx, spec.Image)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return nil, fmt.Errorf("image %s: %w", spec.Image, sandbox.ErrImageMissing)
		}
		return nil, fmt.Errorf("inspect image %s: %w", spec.Image, err)
	}
	imageUser := ""
	if img.Config != nil {
		imageUser = img.Config.User
	}
	user := sandboxUser(b.opts.User, imageUser)
	source := spec.Labels[LabelProject]
	for i, c := range spec.Caches {
		name := res.Mounts[i].Source
		b.cli.VolumeRemove(ctx, name, true) // a half-filled volume from an interrupted step
		labels := map[string]string{LabelCache: cacheKindDeps, labelCacheSource: source + "/" + c.Name, labelSetupKey: spec.Key}
		if _, err := b.cli.VolumeCreate(ctx, volume.CreateOptions{Name: name, Labels: labels}); err != nil {
			return nil, fmt.Errorf("create volume %s: %w", name, err)
		}
	}
	cleanup := func() {
		for _, m := range res.Mounts {
			b.removeOrDefer(context.WithoutCancel(ctx), removeTimeout, leftover{volume: true, id: m.Source})
		}
	}
	if err := b.runInstall(ctx, spec, user, res.Mounts); err != nil {
		cleanup()
		return nil, err
	}
	labels := map[string]string{LabelCache: cacheKindDeps, labelCacheSource: source + "/done", labelSetupKey: spec.Key, labelSetupDone: "1"}
	if _, err := b.cli.VolumeCreate(ctx, volume.CreateOptions{Name: done, Labels: labels}); err != nil {
		cleanup()
		return nil, fmt.Errorf("create volume %s: %w", done, err)
	}
	for _, c := range spec.Caches {
		b.pruneVolumes(ctx, cacheKindDeps, source+"/"+c.Name, depsVolume(c.Name, spec.Key))
	}
	b.pruneVolumes(ctx, cacheKindDeps, source+"/done", done)
	return res, nil
}

func depsVolume(name, key string) string { return "fixpoint-deps-" + name + "-" + key }

// setupShell hands the cache mount points and the workspace to the
// sandbox user, then runs the step as that user. After it, the writable
// layers' mount points (CacheMount.Writable) are made empty directories:
// whatever the step left there (a symlink, a file) is removed first, so a
// session's tmpfs lands inside the cache and nowhere else.
const setupShell = `set -e
uid=${FIXPOINT_UID%%:*}; gid=${FIXPOINT_UID#*:}
for d in $FIXPOINT_CACHES; do mkdir -p "$d"; chown "$uid:$gid" "$d"; done
chown "$uid:$gid" /workspace
setpriv --reuid="$uid" --regid="$gid" --clear-groups -- /bin/sh -c "$FIXPOINT_SETUP"
for d in $FIXPOINT_WRITABLE; do rm -rf -- "$d"; mkdir -- "$d"; done`

// installScript is the step's script, after a minimal repository for a
// workspace in git (sandbox.GitInfo): `prepare: lefthook install` needs one.
func installScript(spec sandbox.InstallSpec) string {
	if spec.Snapshot != nil && spec.Snapshot.Git != nil {
		return spec.Snapshot.Git.WrapScript(spec.Script)
	}
	return spec.Script
}

// writableNames keeps the valid CacheMount.Writable names.
func writableNames(names []string) []string {
	var out []string
	for _, n := range names {
		if sandbox.WritableName(n) {
			out = append(out, n)
		}
	}
	return out
}

func (b *Backend) runInstall(ctx context.Context, spec sandbox.InstallSpec, user string, mounts []sandbox.CacheMount) error {
	timeout := spec.Limits.Timeout
	if timeout <= 0 {
		timeout = 15 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	var targets, writable []string
	ms := []mount.Mount{}
	for _, m := range mounts {
		targets = append(targets, m.Target)
		for _, w := range m.Writable {
			writable = append(writable, m.Target+"/"+w)
		}
		ms = append(ms, mount.Mount{Type: mount.TypeVolume, Source: m.Source, Target: m.Target})
	}
	toolMounts, toolPath, toolEnv, err := b.copyTools(ctx, spec.Image, spec.HostTools)
	if err != nil {
		return err
	}
	ms = append(ms, toolMounts...)
	env := []string{"HOME=/tmp", "LANG=C.UTF-8", "TMPDIR=/tmp", "FIXPOINT_UID=" + user,
		"FIXPOINT_CACHES=" + strings.Join(targets, " "), "FIXPOINT_WRITABLE=" + strings.Join(writable, " "), "FIXPOINT_SETUP=" + installScript(spec)}
	if path := append(toolPath, spec.Path...); len(path) > 0 {
		env = append(env, "PATH="+strings.Join(path, ":")+":"+defaultPath)
	}
	env = append(env, toolEnv...)
	env = append(env, spec.Env...)
	hostEnv, stopRelays, err := b.relayProxies(ctx, spec.HostEnv)
	if err != nil {
		return err
	}
	defer stopRelays()
	env = append(env, hostEnv...)
	if spec.CAFile != "" {
		ms = append(ms, mount.Mount{Type: mount.TypeBind, Source: spec.CAFile, Target: caPath, ReadOnly: true})
		env = append(env, caEnv...)
		for _, k := range spec.CAEnv {
			env = append(env, k+"="+caPath)
		}
	}
	name := newSessionName() + "-setup"
	labels := ownerLabels(name)
	for k, v := range spec.Labels {
		if _, own := labels[k]; !own {
			labels[k] = v
		}
	}
	l := supclient.Defaults(spec.Limits)
	if l.Memory < 2<<30 {
		l.Memory = 2 << 30 // installers (npm) need more than a test run
	}
	pids := int64(1024)
	cfg := &container.Config{Image: spec.Image, User: "0:0", Entrypoint: []string{"/bin/sh", "-c", setupShell},
		WorkingDir: workspaceDir, Env: env, Labels: labels}
	hc := &container.HostConfig{
		// Never the host's network: code the step runs (install scripts)
		// would reach every service on the host's loopback.
		NetworkMode: "bridge",
		CapDrop:     []string{"ALL"},
		CapAdd:      []string{"CHOWN", "SETUID", "SETGID", "DAC_OVERRIDE", "FOWNER"},
		SecurityOpt: []string{"no-new-privileges"},
		Runtime:     b.opts.Runtime,
		Mounts:      ms,
		Tmpfs:       map[string]string{"/tmp": "rw,nosuid,nodev,exec,size=2g,mode=1777"},
		Resources:   container.Resources{Memory: l.Memory, MemorySwap: l.Memory, NanoCPUs: l.NanoCPUs, PidsLimit: &pids},
	}
	if b.kind == "podman" {
		hc.Resources.Ulimits = podmanSetupUlimits(l)
	}
	created, err := b.createContainer(ctx, cfg, hc, name, name)
	if err != nil {
		return fmt.Errorf("create setup container: %w", err)
	}
	defer b.removeOrDefer(context.WithoutCancel(ctx), removeTimeout, leftover{id: created.ID, session: name})
	uid, _ := strconv.Atoi(strings.Split(user, ":")[0])
	var ws bytes.Buffer
	if err := snapshotTar(&ws, spec.Snapshot, uid); err != nil {
		return fmt.Errorf("setup workspace: %w", err)
	}
	if err := b.cli.CopyToContainer(ctx, created.ID, workspaceDir, &ws, container.CopyToContainerOptions{}); err != nil {
		return fmt.Errorf("copy workspace into the setup container: %w", err)
	}
	wait, werr := b.cli.ContainerWait(ctx, created.ID, container.WaitConditionNextExit)
	if err := b.cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		if strings.Contains(err.Error(), "bridge") {
			return fmt.Errorf("start setup container: %w (the engine's default bridge network, which the setup step needs for its network, is unusable: restart the engine, or set [sandbox] setup = \"off\" and use an image with the dependencies)", err)
		}
		return fmt.Errorf("start setup container: %w", err)
	}
	logs, err := b.cli.ContainerLogs(ctx, created.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true, Follow: true})
	tail := &sandbox.TailBuffer{Max: 8 << 10}
	out := io.Writer(tail)
	if spec.Output != nil {
		out = io.MultiWriter(tail, spec.Output)
	}
	if err == nil {
		stdcopy.StdCopy(out, out, logs)
		logs.Close()
	}
	var code int64
	select {
	case st := <-wait:
		code = st.StatusCode
	case err := <-werr:
		if ctx.Err() != nil {
			return fmt.Errorf("%w: %q did not finish within %s (raise sandbox.timeout or set [sandbox] setup)", sandbox.ErrInstall, spec.Script, timeout)
		}
		return fmt.Errorf("wait for setup container: %w", err)
	}
	if code != 0 {
		return fmt.Errorf("%w: `%s` exited with code %d in image %s; last output:\n%s", sandbox.ErrInstall, spec.Script, code, spec.Image, tail.LastLines(20))
	}
	return nil
}

// relayProxies points the proxy variables that name a proxy on the
// host's loopback, or one with credentials, at relays listening on the
// default bridge's gateway (proxyrelay): the setup container reaches
// that proxy and nothing else on the host's loopback, and never sees the
// credentials. stop closes the relays.
func (b *Backend) relayProxies(ctx context.Context, hostEnv []string) (env []string, stop func(), err error) {
	if !proxyrelay.Any(hostEnv) {
		return hostEnv, func() {}, nil
	}
	nw, err := b.cli.NetworkInspect(ctx, "bridge", network.InspectOptions{})
	if err != nil {
		return nil, nil, fmt.Errorf("setup: a proxy variable names a proxy on this machine's loopback or with credentials, which the setup container reaches through a relay on the engine's bridge; inspect the bridge: %w", err)
	}
	gw := bridgeGateway(nw.IPAM.Config, nw.Options["com.docker.network.bridge.name"])
	if gw == "" {
		return nil, nil, errors.New("setup: a proxy variable names a proxy on this machine's loopback or with credentials, and the engine's bridge has no IPv4 gateway to relay it on: point the proxy variable at an address containers can reach")
	}
	env, stop, err = proxyrelay.Env(hostEnv, gw)
	if err != nil {
		return nil, nil, fmt.Errorf("setup: %w (the proxy is on this machine's loopback or takes credentials, so the setup container reaches it through a relay on the engine's bridge gateway %s; with a remote or rootless engine, point the proxy variable at an address containers can reach)", err, gw)
	}
	return env, stop, nil
}

// bridgeGateway is the IPv4 address containers on a bridge reach the
// host by: the network's gateway, else the address of its bridge
// interface on this machine (the default bridge lists only its subnet),
// else the subnet's first address. "" when there is none.
func bridgeGateway(cfgs []network.IPAMConfig, ifname string) string {
	for _, c := range cfgs {
		if ip := net.ParseIP(c.Gateway); ip != nil && ip.To4() != nil {
			return ip.String()
		}
	}
	if ifc, err := net.InterfaceByName(ifname); ifname != "" && err == nil {
		addrs, _ := ifc.Addrs()
		for _, a := range addrs {
			if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil {
				return ipn.IP.String()
			}
		}
	}
	for _, c := range cfgs {
		if _, n, err := net.ParseCIDR(c.Subnet); err == nil && n.IP.To4() != nil {
			ip := n.IP.To4()
			return net.IPv4(ip[0], ip[1], ip[2], ip[3]+1).String()
		}
	}
	return ""
}

// snapshotTar writes snap as a tar owned by uid, for CopyToContainer.
func snapshotTar(w io.Writer, snap *sandbox.Snapshot, uid int) error {
	tw := tar.NewWriter(w)
	dirs := map[string]bool{}
	paths := snap.Paths()
	sort.Strings(paths)
	for _, p := range paths {
		for d := path.Dir(p); d != "." && !dirs[d]; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	var ds []string
	for d := range dirs {
		ds = append(ds, d)
	}
	sort.Strings(ds)
	for _, d := range ds {
		if err := tw.WriteHeader(&tar.Header{Name: d + "/", Typeflag: tar.TypeDir, Mode: 0o755, Uid: uid, Gid: uid}); err != nil {
			return err
		}
	}
	for _, p := range paths {
		f := snap.Files[p]
		data, err := f.Bytes()
		if err != nil {
			return err
		}
		mode := int64(f.Mode.Perm())
		if mode == 0 {
			mode = 0o644
		}
		if err := tw.WriteHeader(&tar.Header{Name: p, Typeflag: tar.TypeReg, Mode: mode, Size: int64(len(data)), Uid: uid, Gid: uid}); err != nil {
			return err
		}
		if _, err := tw.Write(data); err != nil {
			return err
		}
	}
	return tw.Close()
}

// Probe runs argv once in a throw-away container of image (no network, no
// workspace) and returns its combined output: how doctor and the runtime
// check read an image's runtime version before any session starts.
func (b *Backend) Probe(ctx context.Context, image string, argv []string) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	name := newSessionName() + "-probe"
	cfg := &container.Config{Image: image, Entrypoint: argv, Cmd: nil, NetworkDisabled: true, Labels: ownerLabels(name)}
	hc := &container.HostConfig{NetworkMode: "none", CapDrop: []string{"ALL"}, SecurityOpt: []string{"no-new-privileges"}, ReadonlyRootfs: true}
	created, err := b.createContainer(ctx, cfg, hc, name, name)
	if err != nil {
		if cerrdefs.IsNotFound(err) {
			return "", fmt.Errorf("image %s: %w", image, sandbox.ErrImageMissing)
		}
		return "", fmt.Errorf("probe %s: %w", image, err)
	}
	defer b.removeOrDefer(context.WithoutCancel(ctx), removeTimeout, leftover{id: created.ID, session: name})
	wait, werr := b.cli.ContainerWait(ctx, created.ID, container.WaitConditionNextExit)
	if err := b.cli.ContainerStart(ctx, created.ID, container.StartOptions{}); err != nil {
		return "", fmt.Errorf("probe %s: %s: %w", image, strings.Join(argv, " "), err)
	}
	select {
	case <-wait:
	case err := <-werr:
		return "", fmt.Errorf("probe %s: %w", image, err)
	}
	logs, err := b.cli.ContainerLogs(ctx, created.ID, container.LogsOptions{ShowStdout: true, ShowStderr: true})
	if err != nil {
		return "", fmt.Errorf("probe %s: %w", image, err)
	}
	defer logs.Close()
	var out bytes.Buffer
	stdcopy.StdCopy(&out, &out, logs)
	return out.String(), nil
}

// ImageID is the ID of image (a hash of its content), for what may be
// kept about it (sandbox/setup's runtime probes).
func (b *Backend) ImageID(ctx context.Context, image string) (string, error) {
	img, err := b.cli.ImageInspect(ctx, image)
	if err != nil {
		return "", err
	}
	return img.ID, nil
}

// EnsureImage makes sure image is present, pulling it when it is not (one
// minute at most): for images a project names (.devcontainer).
func (b *Backend) EnsureImage(ctx context.Context, img string) error {
	if _, err := b.cli.ImageInspect(ctx, img); err == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	rc, err := b.cli.ImagePull(ctx, img, imagetypes.PullOptions{})
	if err != nil {
		return fmt.Errorf("pull %s: %w", img, err)
	}
	defer rc.Close()
	if err := jsonmessage.DisplayJSONMessagesStream(rc, io.Discard, 0, false, nil); err != nil {
		return fmt.Errorf("pull %s: %w", img, err)
	}
	_, err = b.cli.ImageInspect(ctx, img)
	return err
}

// podmanSetupUlimits are the rlimits of a setup container on Podman.
// Rootful Podman gives a container RLIMIT_NOFILE and RLIMIT_NPROC of
// 1048576 when none is asked for, which runc cannot set where the engine's
// own hard limit is lower and it lacks CAP_SYS_RESOURCE ("error setting
// rlimit type 7"): every setup failed to start there. The setup gets what
// a test run gets (the sandbox's nofile limit, which the engine grants its
// test containers) and the test containers' process cap; Docker's
// default (the daemon's own limits) stays as it is.
func podmanSetupUlimits(l sandbox.Limits) []*units.Ulimit {
	return []*units.Ulimit{
		{Name: "nofile", Soft: int64(l.NoFile), Hard: int64(l.NoFile)},
		{Name: "nproc", Soft: podmanNproc, Hard: podmanNproc},
	}
}

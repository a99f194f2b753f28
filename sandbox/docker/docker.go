// Package docker is the default sandbox backend: hardened containers driven
// through the Docker Engine API, with near-bare command latency.
//
// The main types are [Backend] (created by [New]) and the session it
// starts. A session is one long-lived container whose entrypoint is a small
// static supervisor (./supervisor, embedded here as prebuilt binaries). The
// session holds the container's attached stdin/stdout and speaks a framed
// protocol with the supervisor, so a command costs one fork-exec inside the
// container instead of a `docker exec` round trip through the engine. The
// host side of that protocol is ./supclient, shared with the kubernetes
// backend: this package adds only what is Docker's (the container, its
// replacement when it dies, the engine's word on an OOM kill).
//
// The supervisor binary reaches the container through a named volume
// ("fixpoint-supervisor-<source hash>"), filled once per engine with
// CopyToContainer and mounted read-only, so it works with any image and
// with a remote engine. The workspace is a tmpfs at /workspace that Sync
// fills by streaming a tar through the supervisor: the user's workspace is
// never bind-mounted.
//
// Every container and per-session volume carries the labels
// fixpoint.session, fixpoint.pid, fixpoint.pidstart and fixpoint.host;
// [Reap] removes those whose owner process is gone, and [New] calls it. A
// removal that fails while this process lives (the engine was unreachable)
// is recorded on the Backend and retried by the next Start, a later
// session's Close and [Backend.Close] ([Backend.Pending] counts them).
package docker

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/container"
	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/engine"
)

// Label keys set on every container and per-session volume.
const (
	LabelSession  = "fixpoint.session"
	LabelPID      = "fixpoint.pid"
	LabelPIDStart = "fixpoint.pidstart" // start time of the owner, guards against pid reuse
	LabelHost     = "fixpoint.host"
	LabelCache    = "fixpoint.cache" // shared cache volumes (supervisor, Go module cache); never reaped
)

// Options configure a Backend. The zero value is usable.
type Options struct {
	// Client talks to the engine. nil = client.FromEnv with API version
	// negotiation; the Backend then owns and closes it.
	Client *client.Client
	// Runtime is the OCI runtime: "" (the engine default, runc), "runsc",
	// or a gVisor variant registered as "runsc-<name>" (see [IsGVisor]).
	Runtime string
	// Logger receives debug logs; nil discards them.
	Logger *slog.Logger
	// User is the uid:gid commands run as; "" = the image's user when it is
	// numeric and not root, else "65534:65534" (nobody).
	User string
	// WorkspaceSize caps the /workspace tmpfs in bytes; 0 = 1 GiB.
	WorkspaceSize int64
	// TmpSize caps the /tmp tmpfs in bytes; 0 = 256 MiB.
	TmpSize int64
	// NoReap skips the Reap call in New.
	NoReap bool
}

// Backend starts Docker sandbox sessions. It is safe for concurrent use.
type Backend struct {
	cli     *client.Client
	ownsCli bool
	opts    Options
	log     *slog.Logger
	arch    string
	kind    string // "docker" or "podman" (engine.Kind)

	mu      sync.Mutex      // guards volumes
	volumes map[string]bool // supervisor and cache volumes known to be filled

	pmu     sync.Mutex          // guards pending
	pending map[string]leftover // removals that failed, by id; retried (pending.go)

	reaped   chan struct{}      // closed when the start-up reap ended
	stopReap context.CancelFunc // cancels the start-up reap (Close)

	supervisorVolume string // overrides the supervisor volume's name (tests)
	volumeLocks      string // overrides the volume lock directory (tests)
}

func (b *Backend) volumeLockDir() string {
	if b.volumeLocks != "" {
		return b.volumeLocks
	}
	return volumeLockDir()
}

// engineContactTimeout bounds the first contact with the engine (ping and
// version). An absent socket fails at once; the bound is for an engine
// that accepts and then answers slowly: Podman's API service answers its
// first requests in seconds on a loaded machine (5 s was seen to be too
// short on 2 busy cores), and a hung engine must still fail.
const engineContactTimeout = 15 * time.Second

// New connects to the engine, pings it and reaps containers left by dead
// fixpoint processes. When no engine answers, the error wraps
// sandbox.ErrUnavailable.
func New(ctx context.Context, opts *Options) (*Backend, error) {
	b := &Backend{volumes: map[string]bool{}, pending: map[string]leftover{}}
	if opts != nil {
		b.opts = *opts
	}
	b.log = b.opts.Logger
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	b.cli = b.opts.Client
	if b.cli == nil {
		cli, err := engine.NewClient()
		if err != nil {
			return nil, fmt.Errorf("docker client: %w: %w", sandbox.ErrUnavailable, err)
		}
		b.cli, b.ownsCli = cli, true
	}
	pctx, cancel := context.WithTimeout(ctx, engineContactTimeout)
	defer cancel()
	if _, err := b.cli.Ping(pctx); err != nil {
		b.Close()
		return nil, fmt.Errorf("docker engine: %w: %w", sandbox.ErrUnavailable, err)
	}
	ver, err := b.cli.ServerVersion(pctx)
	if err != nil {
		b.Close()
		return nil, fmt.Errorf("docker engine version: %w: %w", sandbox.ErrUnavailable, err)
	}
	b.arch = ver.Arch
	b.kind = engine.Kind(ver)
	if _, ok := supervisorBinary(b.arch); !ok {
		b.Close()
		return nil, fmt.Errorf("docker engine architecture %q has no supervisor build: %w", b.arch, sandbox.ErrUnavailable)
	}
	if b.opts.Runtime != "" {
		info, err := b.cli.Info(pctx)
		if err != nil {
			b.Close()
			return nil, fmt.Errorf("docker engine info: %w: %w", sandbox.ErrUnavailable, err)
		}
		if _, ok := info.Runtimes[b.opts.Runtime]; !ok {
			b.Close()
			return nil, fmt.Errorf("docker runtime %q is not configured in the engine: %w", b.opts.Runtime, sandbox.ErrUnavailable)
		}
	}
	// Leftovers of dead fixpoint processes are removed in the background:
	// a container whose removal hangs in the engine (one dying of an OOM
	// kill, a gVisor sandbox tearing down) must not hold up this start.
	b.reaped = make(chan struct{})
	rctx, stop := context.WithTimeout(context.WithoutCancel(ctx), reapTimeout)
	b.stopReap = stop
	go func() {
		defer close(b.reaped)
		defer stop()
		if b.opts.NoReap {
			return
		}
		if n, err := Reap(rctx, b.cli); err != nil {
			b.log.Warn("reap leftover sandboxes", "err", err)
		} else if n > 0 {
			b.log.Info("reaped leftover sandboxes", "removed", n)
		}
	}()
	return b, nil
}

// reapTimeout bounds the start-up reap; reapOneTimeout each removal in it.
const (
	reapTimeout    = 2 * time.Minute
	reapOneTimeout = 30 * time.Second
)

// Reaped is closed when the start-up reap of dead processes' sandboxes
// has ended (at once with Options.NoReap).
func (b *Backend) Reaped() <-chan struct{} { return b.reaped }

// Engine returns "docker" or "podman": the engine behind the API.
func (b *Backend) Engine() string { return b.kind }

// Name returns "docker".
func (b *Backend) Name() string { return "docker" }

// DefersSeed implements sandbox.SeedDeferrer: a fresh session started
// with Spec.DeferSeed copies the user's Go build cache when asked
// (Session.SeedBuildCache), not at its start.
func (b *Backend) DefersSeed() bool { return true }

// Client returns the engine client (for tests and diagnostics).
func (b *Backend) Client() *client.Client { return b.cli }

// Close retries removing the containers and volumes whose removal failed
// earlier (the engine was unreachable), within a few seconds, and releases
// the client if New created it. Sessions must be closed first. The error
// says what could not be removed; Reap removes it once this process is gone.
func (b *Backend) Close() error {
	if b.stopReap != nil {
		b.stopReap()
		<-b.reaped
	}
	var errs []error
	if n, err := b.retryPending(context.Background(), retryOnClose); n > 0 {
		b.log.Debug("sandbox resources left behind", "count", n, "err", err)
		errs = append(errs, fmt.Errorf("docker sandbox: %d containers or volumes could not be removed: %w", n, err))
	}
	if b.ownsCli {
		errs = append(errs, b.cli.Close())
	}
	return errors.Join(errs...)
}

// OwnerLabels are the labels [Reap] reads: a container or volume created
// with them (and any labels of the caller's own added) is removed once
// this process is gone, as the backend's own are. Code outside the
// backend that creates containers directly (doctor's probe, benchmarks)
// labels them with these, so a crash leaves nothing behind for good.
func OwnerLabels(name string, extra map[string]string) map[string]string {
	l := ownerLabels(name)
	for k, v := range extra {
		l[k] = v
	}
	return l
}

// ownerLabels identifies this process on resources it creates.
func ownerLabels(session string) map[string]string {
	host, _ := os.Hostname()
	pid := os.Getpid()
	return map[string]string{
		LabelSession:  session,
		LabelPID:      strconv.Itoa(pid),
		LabelPIDStart: sandbox.ProcessStart(pid),
		LabelHost:     host,
	}
}

// ownerGone reports whether the labelled owner process is certainly dead.
// Resources from another host are never judged gone.
func ownerGone(labels map[string]string) bool {
	host, _ := os.Hostname()
	if labels[LabelHost] != host {
		return false
	}
	return sandbox.OwnerGone(labels[LabelPID], labels[LabelPIDStart])
}

// Reap removes containers and volumes labelled fixpoint.pid whose owner
// process (on this host) is gone, and returns how many it removed.
func Reap(ctx context.Context, cli *client.Client) (removed int, err error) {
	f := filters.NewArgs(filters.Arg("label", LabelPID))
	list, err := engine.ListContainers(ctx, cli, container.ListOptions{All: true, Filters: f})
	if err != nil {
		return 0, fmt.Errorf("list sandboxes: %w", err)
	}
	var errs []error
	for _, c := range list {
		if !ownerGone(c.Labels) {
			continue
		}
		rctx, cancel := context.WithTimeout(ctx, reapOneTimeout)
		err := cli.ContainerRemove(rctx, c.ID, container.RemoveOptions{Force: true, RemoveVolumes: true})
		cancel()
		if cerrdefs.IsConflict(err) {
			continue // "removal already in progress": another process reaps it
		}
		if err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove container %.12s: %w", c.ID, err))
			continue
		}
		removed++
	}
	vols, err := cli.VolumeList(ctx, volume.ListOptions{Filters: f})
	if err != nil {
		return removed, errors.Join(append(errs, fmt.Errorf("list volumes: %w", err))...)
	}
	for _, v := range vols.Volumes {
		if !ownerGone(v.Labels) {
			continue
		}
		if err := cli.VolumeRemove(ctx, v.Name, true); err != nil && !cerrdefs.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("remove volume %s: %w", v.Name, err))
			continue
		}
		removed++
	}
	removed += pruneGoCaches(ctx, cli)
	return removed, errors.Join(errs...)
}

// Go build cache volumes are caches: Reap bounds them.
const (
	// goCacheMaxAge is how long a project's build cache lives; a project
	// used after that starts again from the image's prebuilt cache.
	goCacheMaxAge = 14 * 24 * time.Hour
	// goCacheKeep is how many build cache volumes (the newest) are kept.
	goCacheKeep = 10
)

// pruneGoCaches removes Go build cache volumes that no container uses and
// whose image is gone (rebuilding an image removes the old one), that are
// older than goCacheMaxAge, or that are beyond the goCacheKeep newest.
// Without it every project, and every test run in a temporary directory,
// would leave ~170 MB on disk for good. A volume a container still uses
// is kept: VolumeRemove without force fails on it.
func pruneGoCaches(ctx context.Context, cli *client.Client) (removed int) {
	// Test runners' caches (runcache.go) live and go the same way.
	return pruneCaches(ctx, cli, "gocache") + pruneCaches(ctx, cli, cacheKindRunner)
}

func pruneCaches(ctx context.Context, cli *client.Client, kind string) (removed int) {
	f := filters.NewArgs(filters.Arg("label", LabelCache+"="+kind))
	vols, err := cli.VolumeList(ctx, volume.ListOptions{Filters: f})
	if err != nil {
		return 0
	}
	list := vols.Volumes
	created := func(v *volume.Volume) time.Time {
		t, _ := time.Parse(time.RFC3339Nano, v.CreatedAt)
		return t
	}
	sort.SliceStable(list, func(i, j int) bool { return created(list[i]).After(created(list[j])) })
	for i, v := range list {
		stale := i >= goCacheKeep
		if c := created(v); !c.IsZero() && time.Since(c) > goCacheMaxAge {
			stale = true
		}
		if id := v.Labels[labelGoCacheImage]; !stale && id != "" {
			_, err := cli.ImageInspect(ctx, id)
			stale = cerrdefs.IsNotFound(err)
		}
		if stale && cli.VolumeRemove(ctx, v.Name, false) == nil {
			removed++
		}
	}
	return removed
}

// logWriter sends the supervisor's own stderr to the debug log.
type logWriter struct {
	log *slog.Logger
}

func (w logWriter) Write(p []byte) (int, error) {
	w.log.Debug("supervisor", "stderr", strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// IsGVisor reports whether the engine runtime name is gVisor: "runsc" or a
// variant registered as "runsc-<name>" (.ci/docker-up registers the
// variants `fixpoint bench sandbox` compares). The backend gives gVisor
// sandboxes the allowances its Sentry needs.
func IsGVisor(runtime string) bool {
	return runtime == "runsc" || strings.HasPrefix(runtime, "runsc-")
}

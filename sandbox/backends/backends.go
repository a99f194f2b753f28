// Package backends chooses and opens a sandbox.Backend from configuration.
//
// [Open] picks docker when an engine answers and bwrap otherwise (or what
// the user chose), and wraps it so that a missing image fails with a message
// naming the fix. [SpecFor] turns configuration, the workspace's detected
// language and its snapshot into a sandbox.Spec: the image by language,
// limits from the config. The caller detects the language (lang/registry,
// which this package sits below).
package backends

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/bwrap"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/host"
	"github.com/fixpoint-dev/fixpoint/sandbox/image"
	"github.com/fixpoint-dev/fixpoint/sandbox/kubernetes"
)

// LabelDockerfile marks a Spec whose image is built from a project
// Dockerfile (the label's value is the Dockerfile's absolute path).
const LabelDockerfile = "fixpoint.dockerfile"

// Options configure Open. The zero value is usable.
type Options struct {
	// Warn receives loud warnings (the "none" backend); nil = os.Stderr.
	Warn io.Writer
	// Logger receives debug logs; nil = discard.
	Logger *slog.Logger
	// Progress receives project image build output; nil = Warn.
	Progress io.Writer
	// Engines, when set, are Docker engine addresses (unix://, tcp://,
	// ssh://) the docker backend spreads its sessions over, in turn.
	Engines []string
}

// ErrUnknownBackend is returned for a sandbox.backend other than docker,
// bwrap, none or "".
var ErrUnknownBackend = errors.New("unknown sandbox backend")

// Open returns the backend cfg.Sandbox.Backend names. "" means docker when
// an engine answers, else bwrap (an error wrapping sandbox.ErrUnavailable
// when neither works). "none" is only used when chosen, and every session
// start writes a warning to opts.Warn. The returned backend has a Close
// method (io.Closer) that releases the engine client.
func Open(ctx context.Context, cfg *config.Config, opts *Options) (sandbox.Backend, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Warn == nil {
		o.Warn = os.Stderr
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Progress == nil {
		o.Progress = o.Warn
	}
	var inner sandbox.Backend
	var err error
	switch cfg.Sandbox.Backend {
	case config.BackendDocker:
		inner, err = openDocker(ctx, cfg, o)
	case config.BackendBwrap:
		inner, err = bwrap.New(bwrapOptions(cfg, o))
	case config.BackendKubernetes:
		if len(o.Engines) > 0 {
			return nil, fmt.Errorf("--engines spreads sessions over Docker engines; with sandbox.backend = %q the cluster places them: drop --engines", config.BackendKubernetes)
		}
		inner, err = openKubernetes(ctx, cfg, o)
	case config.BackendNone:
		inner, err = host.New(&host.Options{Warn: o.Warn, Logger: o.Logger})
	case "":
		inner, err = openDocker(ctx, cfg, o)
		if err != nil {
			b, berr := bwrap.New(bwrapOptions(cfg, o))
			if berr != nil {
				return nil, fmt.Errorf("no sandbox: %w; and %v: install and start Docker (`sudo apt-get install docker.io && sudo systemctl enable --now docker`), install bubblewrap (`sudo apt-get install bubblewrap`), or set FIXPOINT_SANDBOX=none to run on the host", err, berr)
			}
			o.Logger.Info("no Docker engine; using the bwrap sandbox", "docker", err)
			inner = b
			err = nil
		}
	default:
		return nil, fmt.Errorf("%w %q: want %s (FIXPOINT_SANDBOX, sandbox.backend)", ErrUnknownBackend, cfg.Sandbox.Backend, config.BackendChoices())
	}
	if err != nil {
		return nil, err
	}
	return &backend{inner: inner, opts: o}, nil
}

func openDocker(ctx context.Context, cfg *config.Config, o Options) (sandbox.Backend, error) {
	ws, tmp := diskCaps(cfg)
	opts := &docker.Options{Runtime: cfg.Sandbox.Runtime, Logger: o.Logger, WorkspaceSize: ws, TmpSize: tmp}
	if len(o.Engines) > 0 {
		s, err := docker.NewSpread(ctx, o.Engines, opts)
		if err != nil {
			return nil, fmt.Errorf("docker sandbox: %w", err)
		}
		return s, nil
	}
	b, err := docker.New(ctx, opts)
	if err != nil {
		return nil, fmt.Errorf("docker sandbox: %w", err)
	}
	return b, nil
}

func openKubernetes(ctx context.Context, cfg *config.Config, o Options) (sandbox.Backend, error) {
	b, err := kubernetes.New(ctx, KubernetesOptions(cfg, o.Logger, o.Warn))
	if err != nil {
		return nil, fmt.Errorf("kubernetes sandbox: %w", err)
	}
	return b, nil
}

// KubernetesOptions are the kubernetes backend's options from cfg
// (sandbox.kubernetes, sandbox.workspace_size, sandbox.tmp_size); warn,
// when non-nil, receives the network check's warning.
func KubernetesOptions(cfg *config.Config, log *slog.Logger, warn io.Writer) *kubernetes.Options {
	k := cfg.Sandbox.Kubernetes
	ws, tmp := diskCaps(cfg)
	opts := &kubernetes.Options{
		Kubeconfig: k.Kubeconfig, Context: k.Context, Namespace: k.Namespace, RuntimeClass: k.RuntimeClass,
		PullPolicy: k.ImagePullPolicy, CPURequest: k.CPURequest, MemoryRequest: k.MemoryRequest,
		NetworkCheck: k.NetworkCheck, CacheStorageClass: k.CacheStorageClass, CacheSize: k.CacheSize, WorkspaceSize: ws, TmpSize: tmp, Logger: log,
		ImageRegistry: k.ImageRegistry, ImageTags: k.ImageTags,
	}
	if warn != nil {
		opts.Warn = func(msg string) { fmt.Fprintln(warn, "fixpoint: warning: "+msg) }
	}
	return opts
}

// backend adds fix hints and project image builds to a backend.
type backend struct {
	inner sandbox.Backend
	opts  Options
}

func (b *backend) Name() string { return b.inner.Name() }

// Unwrap returns the backend Open chose (for tests and diagnostics).
func (b *backend) Unwrap() sandbox.Backend { return b.inner }

// DefersSeed implements sandbox.SeedDeferrer when the backend Open chose
// does.
func (b *backend) DefersSeed() bool {
	d, ok := b.inner.(sandbox.SeedDeferrer)
	return ok && d.DefersSeed()
}

// Close releases the engine client, when the backend has one.
func (b *backend) Close() error {
	if c, ok := b.inner.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

func (b *backend) Start(ctx context.Context, spec sandbox.Spec) (sandbox.Session, error) {
	if d, ok := b.inner.(*docker.Backend); ok && spec.Labels[LabelDockerfile] != "" {
		if err := b.ensureProjectImage(ctx, d, spec); err != nil {
			return nil, err
		}
	}
	s, err := b.inner.Start(ctx, spec)
	if errors.Is(err, sandbox.ErrImageMissing) {
		return nil, fmt.Errorf("%w: %s", err, ImageFix(spec.Image))
	}
	return s, err
}

func (b *backend) ensureProjectImage(ctx context.Context, d *docker.Backend, spec sandbox.Spec) error {
	_, err := image.BuildDockerfile(ctx, d.Client(), spec.Labels[LabelDockerfile], spec.Image, &image.DockerfileOptions{Progress: b.opts.Progress, SkipDirs: spec.ContextSkip, Logger: b.opts.Logger})
	return err
}

// ImageFix says how to get image: the build command for fixpoint's own
// images, a pull or config change for others.
func ImageFix(img string) string {
	if l, ok := image.ImageLang(img); ok {
		return "build it with `fixpoint sandbox images build --lang " + l + "`"
	}
	if strings.HasPrefix(img, image.ProjectImagePrefix) {
		return "it is built from sandbox.dockerfile; check that the Dockerfile builds with `docker build`"
	}
	if img == "" {
		return "set sandbox.image or build the defaults with `fixpoint sandbox images build`"
	}
	return "pull it with `docker pull " + img + "`, or unset sandbox.image (FIXPOINT_IMAGE) to use fixpoint's images (`fixpoint sandbox images build`)"
}

// DefaultImage is fixpoint's image for language l: fixpoint-sandbox-<l>;
// "" for nil. Which image a workspace in no known language gets is not
// sandbox's to say: the caller passes lang/registry's Fallback.
func DefaultImage(l lang.Language) string {
	if l == nil {
		return ""
	}
	return image.ImageName(l.Name())
}

// SpecFor returns the session spec for a workspace whose detected
// language is l (nil when none; the caller detects it once, with
// lang/registry): the image is cfg.Sandbox.Image when set, else the
// project Dockerfile's image when cfg.Sandbox.Dockerfile is set (its build
// context without snap.GeneratedDirs: spec.ContextSkip), else
// DefaultImage(l), and for l nil DefaultImage(fallback): the language
// whose image runs a workspace in no known language (the caller passes
// lang/registry's Fallback; it gives the image only, no host caches or
// tools). Limits come from cfg. The language's host caches
// (lang.HostCaches: Go's module cache) are mounted when
// cfg.Sandbox.GoModCache allows.
func SpecFor(cfg *config.Config, l, fallback lang.Language, snap *sandbox.Snapshot) sandbox.Spec {
	spec := sandbox.Spec{Limits: Limits(cfg), Labels: map[string]string{}}
	switch {
	case cfg.Sandbox.Image != "":
		spec.Image = cfg.Sandbox.Image
	case cfg.Sandbox.Dockerfile != "":
		df := cfg.Sandbox.Dockerfile
		if !filepath.IsAbs(df) && snap.Root != "" {
			df = filepath.Join(snap.Root, df)
		}
		spec.ContextSkip = snap.GeneratedDirs
		spec.Image = image.ProjectImageName(df, spec.ContextSkip)
		spec.Labels[LabelDockerfile] = df
	case l != nil:
		spec.Image = DefaultImage(l)
	default:
		spec.Image = DefaultImage(fallback)
	}
	if hc, ok := l.(lang.HostCaches); ok && (cfg.Sandbox.GoModCache == nil || *cfg.Sandbox.GoModCache) {
		spec.Caches = append(spec.Caches, hc.HostCaches(snap)...)
	}
	if ht, ok := l.(lang.HostTools); ok {
		spec.HostTools = ht.HostTools(snap)
	}
	if snap.Root != "" {
		// Keys the writable caches (the Go build cache) this project's
		// sessions share; a hash, so the path itself is not in labels.
		spec.Labels[docker.LabelProject] = ProjectLabel(snap.Root)
	}
	return spec
}

// ProjectLabel is the sandbox.LabelProject value of the workspace at root
// (a hash of its path): what its caches and remembered setup failures are
// keyed by.
func ProjectLabel(root string) string {
	sum := sha256.Sum256([]byte(root))
	return fmt.Sprintf("%x", sum[:8])
}

// diskCaps returns sandbox.workspace_size and sandbox.tmp_size in bytes; 0
// (absent) keeps the backend default. The config was validated by Load.
func diskCaps(cfg *config.Config) (workspace, tmp int64) {
	if n, err := config.ParseSize(cfg.Sandbox.WorkspaceSize); err == nil && cfg.Sandbox.WorkspaceSize != "" {
		workspace = n
	}
	if n, err := config.ParseSize(cfg.Sandbox.TmpSize); err == nil && cfg.Sandbox.TmpSize != "" {
		tmp = n
	}
	return workspace, tmp
}

func bwrapOptions(cfg *config.Config, o Options) *bwrap.Options {
	ws, tmp := diskCaps(cfg)
	return &bwrap.Options{Logger: o.Logger, WorkspaceSize: ws, TmpSize: tmp}
}

// Limits converts the sandbox configuration into per-command limits; zero
// fields keep the backend defaults. The config was validated by Load, so
// sizes parse.
func Limits(cfg *config.Config) sandbox.Limits {
	s := cfg.Sandbox
	l := sandbox.Limits{Timeout: s.Timeout.D(), Pids: s.Pids, NanoCPUs: int64(s.CPUs * 1e9)}
	if n, err := config.ParseSize(s.Memory); err == nil {
		l.Memory = n
	}
	if n, err := config.ParseSize(s.OutputCap); err == nil {
		l.OutputCap = n
	}
	return l
}

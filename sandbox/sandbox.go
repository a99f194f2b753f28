// Package sandbox runs untrusted commands on a copy of a workspace.
//
// The main types are [Backend], which starts a [Session] for a workspace
// [Snapshot], and [Session], which syncs files in, runs a [Command] under
// [Limits] and reads files back. Backends live in subpackages: docker (the
// default), bwrap and host ("none"). The agent only sees these interfaces.
//
// Invariants every backend keeps:
//   - the user's workspace on the host is never mounted or written: a session
//     works on its own copy, so nothing a command does reaches the host tree;
//   - the host environment never enters: a command sees only [Command.Env]
//     plus a fixed allow-list (PATH, HOME, LANG, TMPDIR);
//   - Close removes everything the session created, also when ctx is done.
package sandbox

import (
	"context"
	"errors"
	"io"
	"strings"
	"time"
)

// Sentinel errors. Backends wrap them so callers can use errors.Is.
var (
	// ErrUnavailable means the backend cannot run here (no engine, no bwrap).
	ErrUnavailable = errors.New("sandbox backend unavailable")
	// ErrImageMissing means the configured image does not exist locally.
	ErrImageMissing = errors.New("sandbox image missing")
	// ErrClosed is returned by a session used after Close.
	ErrClosed = errors.New("sandbox session closed")
)

// Limits bound one command. A zero field means the backend default.
type Limits struct {
	Timeout   time.Duration // wall clock; default 60s
	CPUTime   time.Duration // RLIMIT_CPU; default = Timeout
	Memory    int64         // bytes, swap included; default 1 GiB
	Pids      int           // default 256
	OutputCap int64         // bytes per stream; default 1 MiB
	FileSize  int64         // RLIMIT_FSIZE in bytes; default 256 MiB
	NoFile    int           // RLIMIT_NOFILE; default 1024
	NanoCPUs  int64         // CPU quota for the whole session; default 2e9 (2 cores)
}

// Command is one process to run inside a session.
type Command struct {
	Args []string // argv; Args[0] is looked up on the sandbox PATH
	Dir  string   // working directory relative to the workspace root; "" = root
	Env  []string // extra KEY=VALUE pairs; nothing from the host is inherited
	// Stdin, when non-nil, is fed to the command.
	Stdin []byte
	// Stdout and Stderr, when non-nil, receive output as it is produced
	// (already capped). The full capped output is also in Result.
	Stdout, Stderr io.Writer
	// FullStdout and FullStderr, when non-nil, receive the whole of each
	// stream as it is produced, however long: Limits.OutputCap bounds only
	// Result and Stdout/Stderr, the text kept for people and the model.
	// Test runners feed their result parsers from these, so that a long
	// run's results are never lost to the cap. Writes are not concurrent
	// per writer; a slow writer slows the command.
	FullStdout, FullStderr io.Writer
	Limits                 Limits
}

// Result is what a command did. A command that ran and failed is a Result
// with a non-zero ExitCode, not an error; errors mean the sandbox failed.
type Result struct {
	ExitCode  int // 124 on timeout, 137 when killed for memory, as in `timeout` and shells
	Stdout    []byte
	Stderr    []byte
	Truncated bool // an output stream hit Limits.OutputCap; the marker is in the text
	TimedOut  bool
	OOMKilled bool
	Duration  time.Duration
}

// SyncStats reports what a Sync transferred.
type SyncStats struct {
	Written int // files created or changed
	Deleted int
	Bytes   int64
}

// Session is a running sandbox holding one copy of a workspace.
// A Session is safe for use by one goroutine at a time, except Close, which
// may be called concurrently to abort a running command.
type Session interface {
	// Sync makes the sandbox workspace equal to snap, sending only files that
	// changed since the previous Sync (the first Sync sends everything).
	Sync(ctx context.Context, snap *Snapshot) (SyncStats, error)
	// Run runs cmd in the workspace and waits for it. Cancelling ctx kills the
	// command's whole process group; the session stays usable afterwards.
	Run(ctx context.Context, cmd Command) (*Result, error)
	// ReadFile reads a file from the sandbox workspace (rel is slash-separated,
	// relative to the workspace root). Used to read reports and results back.
	ReadFile(ctx context.Context, rel string) ([]byte, error)
	// Close stops the sandbox and removes everything it created.
	Close() error
}

// Spec describes the session to start.
type Spec struct {
	Image  string // container image (docker only); "" = chosen by language
	Limits Limits // defaults for every command of the session
	// Labels are added to every resource the backend creates, besides the
	// backend's own fixpoint.session and fixpoint.pid.
	Labels map[string]string
	// Caches are directories mounted read-only in every command of the
	// session: filled once by a setup step ([Installer]), or host
	// directories a language's toolchain keeps (CacheMount.HostDir).
	Caches []CacheMount
	// Env is added to every command's environment (after the image's);
	// Path lists directories put before the image's PATH.
	Env  []string
	Path []string
	// HostTools are host toolchain directories a native run uses
	// (rustup's ~/.rustup and ~/.cargo/bin): see [HostTool].
	HostTools []HostTool
	// RunnerCache keeps test runners' own caches (jest's transform
	// cache) in a per-project place that later sessions of the project
	// reuse (docker). Any code a session runs can write there, so it is
	// set only for sessions that run no model-written code (fixpoint
	// test); other sessions start with the runner's cache empty.
	RunnerCache bool
	// BuildCache selects the writable build cache (Go's GOCACHE) the
	// session's commands use; see [BuildCache].
	BuildCache BuildCache
	// DeferSeed, for a BuildCacheFresh session on a backend that copies
	// the project's user cache into it (docker; see SeedDeferrer), leaves
	// the copy to the caller's BuildCacheSeeder.SeedBuildCache call (or the
	// session's first Sync, whichever comes first) instead of Start: the
	// caller can start the session while the run that fills the user cache
	// (a fix's baseline) is still going, and seed it once that run has
	// ended. A backend that is not a SeedDeferrer ignores it.
	DeferSeed bool
	// ContextSkip are directory names a project Dockerfile's build context
	// leaves out, besides .git and .fixpoint (docker; SpecFor sets the
	// snapshot's GeneratedDirs): the image name hashes the same context.
	ContextSkip []string
}

// BuildCache is which writable build cache a session gets. Any command a
// session runs can write its cache, and a later command that reuses an
// entry trusts it: a model's code that rewrites a cached compile or test
// result decides what a later run reports. So the sessions that run
// model-written code never share a cache with the ones whose report
// counts.
type BuildCache int

const (
	// BuildCacheModel (the zero value) is the project's cache for
	// sessions that run model-written code: kept between them (fast),
	// never used by a BuildCacheUser or BuildCacheFresh session.
	BuildCacheModel BuildCache = iota
	// BuildCacheUser is the project's cache for sessions that run only the
	// user's own code (fixpoint test).
	BuildCacheUser
	// BuildCacheFresh starts as a private copy of the project's
	// BuildCacheUser cache when there is one (else empty: docker, the
	// image's prebuilt cache; bwrap, the standard library's), and is
	// removed with the session: nothing a model's code wrote is in it,
	// and what the session writes reaches no other session. The
	// sessions that run model-written code use it, the verifying run
	// included.
	BuildCacheFresh
)

// SeedDeferrer is a Backend that honours Spec.DeferSeed: its
// BuildCacheFresh sessions are BuildCacheSeeders.
type SeedDeferrer interface {
	DefersSeed() bool
}

// BuildCacheSeeder is a session started with Spec.DeferSeed.
// SeedBuildCache copies the project's user build cache, as it is now, into
// the session's fresh cache; only the first call (or first Sync) copies.
// A failed copy costs a slower run (missing entries are misses), not a
// wrong one: it is logged, not returned.
type BuildCacheSeeder interface {
	SeedBuildCache(ctx context.Context)
}

// Suffix is what a backend appends to the project key (LabelProject) to
// name the persistent cache of c: "-user" or "-model". Neither names a
// cache of the versions before the split, when one cache served both, so
// no session starts from a cache a model's code may have written then.
// BuildCacheFresh has no persistent cache ("").
func (c BuildCache) Suffix() string {
	switch c {
	case BuildCacheModel:
		return "-model"
	case BuildCacheUser:
		return "-user"
	}
	return ""
}

// CacheMount is one read-only cache directory of a session.
type CacheMount struct {
	// Source is backend-specific: a Docker volume name for docker, a host
	// directory for bwrap and none. Unused when HostDir is set.
	Source string
	Target string // absolute path inside the sandbox, e.g. /gomodcache
	// HostDir, when set, is a host directory offered read-only as this
	// cache (Go's module cache): the docker backend copies it once into a
	// volume named after Name and keyed by its listing (so a remote engine
	// works too), bwrap binds it at Target when the sandbox uid can read
	// it, none uses it in place. Never the workspace.
	HostDir string
	Name    string // short name for volumes and messages: "gomod"
	// DirEnv names a variable set to the cache directory as commands see
	// it (Target; HostDir for none), e.g. GOMODCACHE. Env is set with it.
	DirEnv string
	Env    []string
	// Writable names entries of Target (single names, "" and ".." never)
	// that each session gets as an empty writable tmpfs over the read-only
	// cache, discarded with the session: where tools write their own
	// caches (node_modules/.cache, .vite-temp). The install step makes
	// them directories (replacing anything else there), so that the mount
	// points exist; a cache without them gets no layer there.
	Writable []string
}

// WritableName reports whether name can be a CacheMount.Writable entry:
// one path element, not "." or "..".
func WritableName(name string) bool {
	return name != "" && name != "." && name != ".." && !strings.ContainsAny(name, "/\\\x00")
}

// HostEnv is the environment a mounted host cache gives commands that see
// it at dir.
func (c CacheMount) HostEnv(dir string) []string {
	var env []string
	if c.DirEnv != "" {
		env = append(env, c.DirEnv+"="+dir)
	}
	return append(env, c.Env...)
}

// CacheDir is a directory an install step fills.
type CacheDir struct {
	Name     string   // short name: "gomod", "node_modules", "venv"
	Target   string   // absolute path inside the sandbox
	Writable []string // as in CacheMount: the step makes them directories
}

// InstallSpec is one dependency install step: Script runs once, with
// network, on a copy of Snapshot, and fills Caches.
type InstallSpec struct {
	Image    string    // as in Spec
	Key      string    // cache key: same key, same result (lockfile hash, image, script)
	Snapshot *Snapshot // the workspace the step runs in; never written back
	Script   string    // run with `sh -c` in the workspace root
	Env      []string  // step environment, besides the host's proxy variables
	Path     []string  // directories before the image's PATH
	// HostTools: as in Spec (a Rust step needs rustup's cargo too).
	HostTools []HostTool
	Caches    []CacheDir
	// HostEnv lists KEY=VALUE pairs taken from the host for the step only:
	// the proxy and registry settings. CAFile is the host's CA bundle,
	// mounted read-only at the standard path ("" = none).
	HostEnv []string
	CAFile  string
	// CAEnv names variables set to the CA bundle's path when CAFile is
	// set (the installer's own: NODE_EXTRA_CA_CERTS, PIP_CERT), besides
	// SSL_CERT_FILE and GIT_SSL_CAINFO, which every step gets.
	CAEnv []string
	// Registries are the hosts (or URLs) the installer downloads from by
	// default (registry.npmjs.org): a backend that allowlists the step's
	// network (kubernetes) lets it reach these and the URLs in Env and
	// HostEnv.
	Registries []string
	Labels     map[string]string // as in Spec (LabelProject keys pruning)
	Limits     Limits            // Timeout bounds the whole step
	// Output receives the step's output as it is produced; nil = discard.
	Output io.Writer
}

// InstallResult says where an install step's caches are.
type InstallResult struct {
	Mounts []CacheMount
	Cached bool // an earlier run with the same key was reused
}

// ErrInstall is wrapped by an install step that ran and failed.
var ErrInstall = errors.New("dependency setup failed")

// Installer is implemented by backends that can run an install step.
type Installer interface {
	// Install runs spec.Script unless a cache for spec.Key exists, and
	// returns the mounts for Spec.Caches. A step that exits non-zero is an
	// error wrapping ErrInstall that names the exit code and ends with the
	// last lines of output.
	Install(ctx context.Context, spec InstallSpec) (*InstallResult, error)
}

// LabelProject, in Spec.Labels, keys the writable caches (the Go build
// cache) that a project's sessions share with its earlier sessions; the
// value is a hash of the project root (backends.SpecFor sets it). A cache
// is never shared between projects, so that one project's sandbox cannot
// plant entries another project would use.
const LabelProject = "fixpoint.project"

// Backend starts sessions.
type Backend interface {
	// Name is "docker", "bwrap" or "none".
	Name() string
	// Start starts a session. The session's workspace is empty until Sync.
	Start(ctx context.Context, spec Spec) (Session, error)
}

// HostTool is a host toolchain directory that a native run uses and that
// is not under /usr (rustup's ~/.rustup and ~/.cargo/bin). Backends that
// run the host's toolchains (bwrap) offer it read-only at the same path,
// with Dir first on PATH when OnPath and Env set. Never a directory that
// holds credentials (~/.cargo itself has credentials.toml).
//
// A Copy tool is for the backends whose image brings its own toolchain
// (docker) and only for them (bwrap and none skip it): one toolchain
// directory (rustup's ~/.rustup/toolchains/<name>), copied once into a
// read-only volume keyed by its listing (a remote engine works too; no
// bind mount), mounted at Target, with Target/bin first on PATH when
// OnPath. Only regular files and directories are copied (a symlink in it
// is left out, never followed); Skip names top-level entries left out
// (documentation). Key identifies its content (name and version) in
// setup cache keys. Note says, for messages, what it is ("the host's
// rustup toolchain stable-x86_64-unknown-linux-gnu, rustc 1.95.0"); a
// Copy tool without Dir offers nothing, and its Note says why the host's
// toolchain is not offered (the image's then runs). Backends that offer
// neither kind (kubernetes) run the image's toolchain.
type HostTool struct {
	Dir    string
	OnPath bool
	Env    []string
	Copy   bool
	Target string
	Skip   []string
	Key    string
	Note   string
}

package agent

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/runlog"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/memory"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// The baseline cache: a fix run whose workspace, test command, sandbox and
// fixpoint are those of an earlier run's baseline reuses that baseline's
// report instead of running the whole suite again.
//
// Entries live in <DataDir>/baselines/<memory.ProjectID(root)>/<key>.json,
// outside every sandbox (no backend mounts the data dir), and are written
// only by fixpoint, from the report it parsed of the runner's output on the
// unchanged workspace, masked like every report. The key hashes everything
// the report depends on (baselineInputs): a changed file or editor buffer,
// dependency manifest or lockfile, config, test command, image, host
// toolchain or fixpoint build is another key. Each entry carries an HMAC
// over its key and report under a per-data-dir secret (baselines/key, 0600):
// an entry edited in place or copied under another key (a report of an
// earlier, passing state) is rejected and removed, and the baseline runs.
//
// With sandbox = "none" the code under test runs on the host as the user
// and could write the data dir, secret included: there the cache is
// neither read nor written.

// maxBaselines is how many entries a project keeps; the oldest go first.
const maxBaselines = 16

// baselineEntry is one cached baseline on disk.
type baselineEntry struct {
	Key     string          `json:"key"`
	Created time.Time       `json:"created"`
	Report  json.RawMessage `json:"report"`
	// Trace is what the failing tests executed at baseline (agent/trace.go),
	// parsed and bounded, when a trace ran: reused with the report,
	// signed with it.
	Trace json.RawMessage `json:"trace,omitempty"`
	MAC   string          `json:"mac"`
}

// baselineInputs is what a baseline report depends on; its hash is the key.
type baselineInputs struct {
	Fixpoint string            `json:"fixpoint"` // this build
	Backend  string            `json:"backend"`
	Image    string            `json:"image"`
	Host     map[string]string `json:"host,omitempty"` // host toolchains a non-docker backend runs
	Setup    string            `json:"setup"`          // installed dependencies (setupKey)
	Snapshot string            `json:"snapshot"`       // sandbox.Snapshot.Digest
	Runner   runnerKey         `json:"runner"`
	Limits   sandbox.Limits    `json:"limits"`
	Sandbox  config.Sandbox    `json:"sandbox"`
	Test     config.Test       `json:"test"`
	TestCmd  string            `json:"test_cmd"`
}

// runnerKey is the part of a testrun.Runner that decides what runs.
type runnerKey struct {
	Name       string           `json:"name"`
	Args       []string         `json:"args"`
	Env        []string         `json:"env"`
	ReportPath string           `json:"report_path"`
	Git        *sandbox.GitInfo `json:"git"`
	Format     string           `json:"format"`  // the named format's name ("" for none)
	Formats    []string         `json:"formats"` // the formats a configured command is sniffed for
}

// baselineCacheable reports whether runs of this engine may use the cache:
// not when the code under test runs on the host.
func (e *Engine) baselineCacheable() bool {
	return e.opts.Backend != nil && e.opts.Backend.Name() != config.BackendNone && e.cfg.DataDir != ""
}

// baselineKey is the cache key of the baseline of proj's snapshot under
// this engine.
func (e *Engine) baselineKey(proj *project) string {
	snap := proj.snap
	r := e.testRunner(proj.lang, snap, true)
	spec := proj.spec
	in := baselineInputs{
		Fixpoint: buildID(),
		Backend:  e.opts.Backend.Name(),
		Image:    spec.Image,
		Setup:    proj.setupKey(),
		Snapshot: snap.Digest(),
		Runner: runnerKey{Name: r.Name, Args: r.Args, Env: r.Env, ReportPath: r.ReportPath, Git: r.Git,
			Format: formatName(r.Format), Formats: formatNames(r.Formats)},
		Limits:  limits(e.cfg),
		Sandbox: e.cfg.Sandbox,
		Test:    e.cfg.Test,
		TestCmd: e.cfg.TestCmd,
	}
	if in.Backend != config.BackendDocker {
		in.Host = hostTools(r)
	} else {
		// The host toolchain docker runs in place of the image's (a copy
		// of rustup's): a new one invalidates the baseline as a new
		// image does.
		for _, t := range spec.HostTools {
			if t.Copy && t.Dir != "" {
				if in.Host == nil {
					in.Host = map[string]string{}
				}
				in.Host[t.Target] = t.Key
			}
		}
	}
	b, _ := json.Marshal(in)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// hostTools fingerprints the host toolchains a bwrap session runs: the
// runner's program and every registered language's (the program of its
// VersionCommand), by path, size and modification time (an upgrade
// replaces the file).
func hostTools(r testrun.Runner) map[string]string {
	var names []string
	for _, l := range registry.All() {
		if vc := l.VersionCommand(); len(vc) > 0 {
			names = append(names, vc[0])
		}
	}
	if len(r.Args) > 0 {
		names = append(names, r.Args[0])
	}
	out := map[string]string{}
	for _, n := range names {
		p, err := exec.LookPath(n)
		if err != nil {
			continue
		}
		real, err := filepath.EvalSymlinks(p)
		if err != nil {
			continue
		}
		if fi, err := os.Stat(real); err == nil {
			out[n] = fmt.Sprintf("%s %d %d", real, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	return out
}

var buildIDOnce = sync.OnceValue(func() string {
	id := "unknown"
	if bi, ok := debug.ReadBuildInfo(); ok {
		id = bi.Main.Version
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" || s.Key == "vcs.modified" {
				id += " " + s.Value
			}
		}
	}
	// A development build keeps its version string across changes: the
	// executable's own hash tells two of them apart.
	if exe, err := os.Executable(); err == nil {
		if f, err := os.Open(exe); err == nil {
			h := sha256.New()
			if _, err := io.Copy(h, f); err == nil {
				id += " " + hex.EncodeToString(h.Sum(nil))
			}
			f.Close()
		}
	}
	return id
})

// buildID identifies this fixpoint build.
func buildID() string { return buildIDOnce() }

// baselineCache is one project's cache directory.
type baselineCache struct {
	dir    string // <DataDir>/baselines/<project>
	secret string // <DataDir>/baselines/key
}

func (e *Engine) baselineCache(root string) baselineCache {
	base := filepath.Join(e.cfg.DataDir, "baselines")
	return baselineCache{dir: filepath.Join(base, memory.ProjectID(root)), secret: filepath.Join(base, "key")}
}

// errBaselineRejected wraps the reason a cache entry was not trusted.
var errBaselineRejected = errors.New("baseline cache entry rejected")

// key returns the cache's secret, creating it on first use.
func (c baselineCache) key(create bool) ([]byte, error) {
	b, err := readNoFollow(c.secret, 64)
	if errors.Is(err, fs.ErrNotExist) && create {
		if err := os.MkdirAll(filepath.Dir(c.secret), 0o700); err != nil {
			return nil, err
		}
		k := make([]byte, 32)
		if _, err := rand.Read(k); err != nil {
			return nil, err
		}
		f, ferr := os.OpenFile(c.secret, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o600)
		if ferr == nil {
			_, ferr = f.Write(k)
			if cerr := f.Close(); ferr == nil {
				ferr = cerr
			}
			if ferr != nil {
				os.Remove(c.secret)
				return nil, ferr
			}
			return k, nil
		}
		if !errors.Is(ferr, fs.ErrExist) {
			return nil, ferr
		}
		// Another process made it first: read theirs.
		b, err = readNoFollow(c.secret, 64)
	}
	if err != nil {
		return nil, err
	}
	if len(b) != 32 {
		return nil, fmt.Errorf("%s: not a baseline cache key (%d bytes): remove it", c.secret, len(b))
	}
	return b, nil
}

func mac(secret []byte, key string, created time.Time, report, trace []byte) string {
	h := hmac.New(sha256.New, secret)
	fmt.Fprintf(h, "fixpoint baseline v2\x00%s\x00%s\x00%d\x00", key, created.UTC().Format(time.RFC3339Nano), len(report))
	h.Write(report)
	h.Write(trace)
	return hex.EncodeToString(h.Sum(nil))
}

func (c baselineCache) path(key string) string { return filepath.Join(c.dir, key+".json") }

// load returns the cached report for key: nil and no error when there is
// none; an error wrapping errBaselineRejected when the entry is not one
// fixpoint wrote for key (it is then removed).
func (c baselineCache) load(key string) (*cachedBaseline, error) {
	b, err := readNoFollow(c.path(key), 64<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, c.reject(key, err.Error())
	}
	secret, err := c.key(false)
	if err != nil {
		return nil, c.reject(key, fmt.Sprintf("no cache key: %v", err))
	}
	var ent baselineEntry
	if err := json.Unmarshal(b, &ent); err != nil {
		return nil, c.reject(key, "unreadable: "+err.Error())
	}
	if ent.Key != key || !hmac.Equal([]byte(ent.MAC), []byte(mac(secret, key, ent.Created, ent.Report, ent.Trace))) {
		return nil, c.reject(key, "its signature does not match: it was changed or copied from another state")
	}
	var rep testrun.Report
	if err := json.Unmarshal(ent.Report, &rep); err != nil {
		return nil, c.reject(key, "unreadable report: "+err.Error())
	}
	out := &cachedBaseline{rep: &rep, when: ent.Created}
	if len(ent.Trace) > 0 {
		if err := json.Unmarshal(ent.Trace, &out.trace); err != nil {
			return nil, c.reject(key, "unreadable trace: "+err.Error())
		}
	}
	return out, nil
}

func (c baselineCache) reject(key, why string) error {
	os.Remove(c.path(key))
	return fmt.Errorf("%w: %s: %s", errBaselineRejected, c.path(key), why)
}

// store writes rep as key's entry (atomically: a temporary file renamed
// over it) and drops the project's oldest entries past maxBaselines.
func (c baselineCache) store(key string, rep *testrun.Report, trace lang.Trace, now time.Time) error {
	secret, err := c.key(true)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(c.dir, 0o700); err != nil {
		return err
	}
	body, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	ent := baselineEntry{Key: key, Created: now.UTC(), Report: body}
	if len(trace) > 0 {
		if ent.Trace, err = json.Marshal(trace); err != nil {
			return err
		}
	}
	ent.MAC = mac(secret, key, ent.Created, body, ent.Trace)
	b, err := json.Marshal(ent)
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(c.dir, ".tmp-*")
	if err != nil {
		return err
	}
	_, err = f.Write(b)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), c.path(key))
	}
	if err != nil {
		os.Remove(f.Name())
		return err
	}
	c.prune()
	return nil
}

func (c baselineCache) prune() {
	ents, err := os.ReadDir(c.dir)
	if err != nil {
		return
	}
	type old struct {
		name string
		mod  time.Time
	}
	var all []old
	for _, e := range ents {
		if fi, err := e.Info(); err == nil && e.Type().IsRegular() && filepath.Ext(e.Name()) == ".json" {
			all = append(all, old{e.Name(), fi.ModTime()})
		}
	}
	if len(all) <= maxBaselines {
		return
	}
	sort.Slice(all, func(i, j int) bool { return all[i].mod.After(all[j].mod) })
	for _, o := range all[maxBaselines:] {
		os.Remove(filepath.Join(c.dir, o.name))
	}
}

// readNoFollow reads a regular file without following a symlink at its
// last element, at most limit bytes.
func readNoFollow(p string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, fmt.Errorf("%s is a symlink", p)
		}
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	if fi.Size() > limit {
		return nil, fmt.Errorf("%s is too large (%d bytes)", p, fi.Size())
	}
	return io.ReadAll(io.LimitReader(f, limit))
}

// storable reports whether a baseline report may be reused: one whose run
// finished and whose results agree with the runner's own output.
func storable(rep *testrun.Report) bool {
	return rep != nil && !rep.TimedOut && !rep.OOM && len(rep.Mismatch) == 0
}

// cachedBaseline is a reused baseline report, when it was recorded, and
// the trace of its failing tests (nil: none ran).
type cachedBaseline struct {
	rep   *testrun.Report
	when  time.Time
	trace lang.Trace
}

// cachedBaseline looks the run's snapshot up in the cache; nil when the
// baseline must run. It sets r.baseKey for storeBaseline.
func (r *run) cachedBaseline() *cachedBaseline {
	if r.req.Baseline != nil || !r.e.baselineCacheable() {
		return nil
	}
	r.baseKey = r.e.baselineKey(r.setupProj)
	cb, err := r.e.baselineCache(r.req.Root).load(r.baseKey)
	if err != nil {
		r.e.warnf("%v; running the baseline", err)
		r.log.Write(runlog.KindWarning, 0, map[string]string{"message": err.Error()})
		return nil
	}
	return cb
}

// storeBaseline caches a baseline report that ran on the run's snapshot,
// with the trace of its failing tests (nil: none).
func (r *run) storeBaseline(rep *testrun.Report, trace lang.Trace) {
	if r.baseKey == "" || !storable(rep) {
		return
	}
	if err := r.e.baselineCache(r.req.Root).store(r.baseKey, rep, trace, time.Now()); err != nil {
		r.e.warnf("the baseline is not cached: %v", err)
	}
}

func formatName(f *testrun.Format) string {
	if f == nil {
		return ""
	}
	return f.Name
}

func formatNames(fs []*testrun.Format) []string {
	var names []string
	for _, f := range fs {
		names = append(names, formatName(f))
	}
	return names
}

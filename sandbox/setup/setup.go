// Package setup prepares a workspace's sandbox before any test runs: it
// picks an image whose runtime satisfies the project's declared version
// (building a per-version image when the default one does not), and runs
// the project's dependency install step once, with network, into caches
// that every later, offline test run mounts read-only.
//
// The main types are [Plan] (what a workspace needs, read from its files
// by its language, which the caller detected and passes to [NewPlan]) and
// [Preparer] (which makes it so for one backend). The package does not
// import lang/registry: it sits below the languages. A version
// nobody publishes is a [*RuntimeError] before any test runs, so that a
// mismatch never reaches the model.
package setup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/tailscale/hujson"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/backends"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/image"
)

// Plan is what a workspace needs before its tests run.
type Plan struct {
	Lang        lang.Language     // nil when no language was detected
	Requirement *lang.Requirement // nil when the project declares none
	Step        *lang.Setup       // nil when there is nothing to install
	// Image and Dockerfile come from .devcontainer/devcontainer.json
	// ("" when absent); the Dockerfile path is absolute.
	Image, Dockerfile string
	// Warnings name files that declare something fixpoint could not read.
	Warnings []string
}

// NewPlan reads what snap needs; l is its detected language (nil when
// none; the caller detects it once, with lang/registry). override is
// [sandbox] setup: "" keeps the language's step (or .devcontainer's
// postCreateCommand), "off" turns setup off, anything else replaces the
// step's script.
func NewPlan(l lang.Language, snap *sandbox.Snapshot, override string) *Plan {
	p := &Plan{Lang: l}
	if p.Lang != nil {
		req, err := p.Lang.Requirement(snap)
		if err != nil {
			p.Warnings = append(p.Warnings, fmt.Sprintf("runtime version not checked: %v", err))
		}
		p.Requirement = req
		p.Step = p.Lang.SetupStep(snap)
	}
	dc, err := readDevcontainer(snap)
	if err != nil {
		p.Warnings = append(p.Warnings, err.Error())
	}
	script, from := "", ""
	if dc != nil {
		p.Image = dc.Image
		if dc.Build.Dockerfile != "" && snap.Root != "" {
			p.Dockerfile = path.Join(snap.Root, ".devcontainer", dc.Build.Dockerfile)
		}
		if s := dc.command(); s != "" {
			script, from = s, ".devcontainer/devcontainer.json (postCreateCommand)"
		}
	}
	switch strings.TrimSpace(override) {
	case "":
	case "off":
		script, from = "", ""
		if p.Step != nil {
			p.Step = &lang.Setup{TestEnv: p.Step.TestEnv}
		}
	default:
		script, from = strings.TrimSpace(override), ".fixpoint.toml ([sandbox] setup)"
	}
	if script != "" {
		st := &lang.Setup{}
		if p.Step != nil {
			*st = *p.Step
		}
		st.Name, st.Script, st.Override = script, script, from
		// The script itself is an input: the inputs of the detected step
		// (or every manifest) key the cache as before.
		p.Step = st
	}
	return p
}

// devcontainer is the part of devcontainer.json fixpoint reads.
type devcontainer struct {
	Image string `json:"image"`
	Build struct {
		Dockerfile string `json:"dockerfile"`
	} `json:"build"`
	PostCreate json.RawMessage `json:"postCreateCommand"`
}

// command turns postCreateCommand (a string, an argv array or an object of
// named commands) into one shell script.
func (d *devcontainer) command() string {
	if len(d.PostCreate) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(d.PostCreate, &s) == nil {
		return s
	}
	var argv []string
	if json.Unmarshal(d.PostCreate, &argv) == nil {
		return shellJoin(argv)
	}
	var named map[string]json.RawMessage
	if json.Unmarshal(d.PostCreate, &named) == nil {
		var parts []string
		for _, k := range sortedKeys(named) {
			sub := devcontainer{PostCreate: named[k]}
			if c := sub.command(); c != "" {
				parts = append(parts, "("+c+")")
			}
		}
		return strings.Join(parts, " && ")
	}
	return ""
}

func readDevcontainer(snap *sandbox.Snapshot) (*devcontainer, error) {
	name := ".devcontainer/devcontainer.json"
	f, ok := snap.Files[name]
	if !ok {
		name = ".devcontainer.json"
		if f, ok = snap.Files[name]; !ok {
			return nil, nil
		}
	}
	data, err := f.Bytes()
	if err != nil {
		return nil, fmt.Errorf("%s ignored: %v", name, err)
	}
	// devcontainer.json is JSON with comments and trailing commas
	// (JSONC); hujson parses it exactly where a hand-written stripper
	// mis-read ", // comment" before a closing brace.
	std, err := hujson.Standardize(data)
	if err == nil {
		var d devcontainer
		if err = json.Unmarshal(std, &d); err == nil {
			return &d, nil
		}
	}
	return nil, fmt.Errorf("%s ignored: %v; fix the file (JSON with comments and trailing commas)", name, err)
}

// RuntimeError is a declared runtime version the sandbox cannot provide.
type RuntimeError struct {
	Req   *lang.Requirement
	Lang  lang.Language // the language that declared Req; its lang.RuntimeHelp says the fix (nil = a generic fix)
	Have  string        // the version the sandbox has ("" when unknown)
	Where string        // "image fixpoint-sandbox-node", "the host (bwrap)"
	Why   string        // why no other version could be had
}

func (e *RuntimeError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s requires %s %s, but %s has ", e.Req.Source, e.Req.Runtime, e.Req.Constraint, e.Where)
	if e.Have != "" {
		fmt.Fprintf(&b, "%s %s", e.Req.Runtime, e.Have)
	} else {
		fmt.Fprintf(&b, "no %s", e.Req.Runtime)
	}
	if e.Why != "" {
		fmt.Fprintf(&b, " (%s)", e.Why)
	}
	b.WriteString("; no test was run. Fix: ")
	b.WriteString(fixFor(e.Req, e.Lang))
	return b.String()
}

func fixFor(req *lang.Requirement, l lang.Language) string {
	if h, ok := l.(lang.RuntimeHelp); ok {
		return h.RuntimeFix(req)
	}
	return "set [sandbox] image to an image with a matching " + req.Runtime
}

// Options configure a [Preparer]. The zero value is usable.
type Options struct {
	// Progress receives one line per phase and a tick every few seconds
	// while a phase runs ("installing dependencies (npm ci) · 34 s").
	Progress func(line string)
	// Output receives the install step's own output; nil = discard.
	Output io.Writer
	// Getenv reads the host's proxy and registry settings; nil = os.Getenv.
	Getenv func(string) string
	// CAFile is the host CA bundle given to the install step;
	// "" = /etc/ssl/certs/ca-certificates.crt when it exists.
	CAFile string
	// Runtimes builds per-version images (docker only); nil = none.
	Runtimes *image.Runtimes
	Logger   *slog.Logger
	// Tick is the progress interval; 0 = 5 s.
	Tick time.Duration
	// Warn receives warnings (an unavailable devcontainer image); nil =
	// Progress.
	Warn func(line string)
	// HostVersion reads the version of a language's runtime on the host,
	// which a per-version image matches when the project allows it (the
	// runtime a native run uses); nil = the version command on PATH.
	HostVersion func(ctx context.Context, l lang.Language) (lang.Version, bool)
	// LockDir holds the cross-process setup locks: a second process that
	// sets up the same cache key waits for the first and reuses its
	// result. "" = fixpoint/setup-locks in the user's cache directory.
	LockDir string
	// FailureDir remembers failed install steps by cache key (failed.go);
	// "" = fixpoint/setup-failures in the user's cache directory.
	FailureDir string
	// ProbeDir keeps image runtime probes by image content
	// (probecache.go); "" = fixpoint/image-probes in the user's cache
	// directory, "-" = keep none.
	ProbeDir string
}

// Preparer applies plans to specs for one backend.
type Preparer struct {
	b    sandbox.Backend
	opts Options
	log  *slog.Logger
}

// Prober reads an image's runtime version before a session starts
// (implemented by the docker backend).
type Prober interface {
	Probe(ctx context.Context, image string, argv []string) (string, error)
}

// New returns a Preparer for b (a backends.Open result is unwrapped).
// With the docker backend and no opts.Runtimes, per-version images are
// built through the backend's engine.
func New(b sandbox.Backend, opts *Options) *Preparer {
	if u, ok := b.(interface{ Unwrap() sandbox.Backend }); ok {
		b = u.Unwrap()
	}
	p := &Preparer{b: b}
	if opts != nil {
		p.opts = *opts
	}
	if p.opts.Getenv == nil {
		p.opts.Getenv = os.Getenv
	}
	if p.opts.CAFile == "" {
		if _, err := os.Stat("/etc/ssl/certs/ca-certificates.crt"); err == nil {
			p.opts.CAFile = "/etc/ssl/certs/ca-certificates.crt"
		}
	}
	if p.opts.Tick <= 0 {
		p.opts.Tick = 5 * time.Second
	}
	if p.opts.LockDir == "" {
		p.opts.LockDir = defaultLockDir()
	}
	if p.opts.FailureDir == "" {
		p.opts.FailureDir = defaultFailureDir()
	}
	if p.opts.ProbeDir == "" {
		p.opts.ProbeDir = defaultProbeDir()
	}
	p.log = p.opts.Logger
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if d, ok := b.(*docker.Backend); ok && p.opts.Runtimes == nil {
		p.opts.Runtimes = &image.Runtimes{Client: d.Client(), HTTP: HTTPClient(), Getenv: p.opts.Getenv}
	}
	return p
}

func (p *Preparer) progress(line string) {
	if p.opts.Progress != nil {
		p.opts.Progress(line)
	}
}

// Prepare makes spec satisfy plan: a per-version image when the default
// image's runtime does not satisfy the requirement (docker), and the
// install step's caches and environment. It fails with a *RuntimeError
// when no image can satisfy the requirement, and with an error wrapping
// sandbox.ErrInstall when the install step fails.
func (p *Preparer) Prepare(ctx context.Context, spec *sandbox.Spec, snap *sandbox.Snapshot, plan *Plan) error {
	if pf, ok := plan.Lang.(lang.Preflight); ok {
		if err := pf.Check(snap); err != nil {
			return err
		}
	}
	if err := p.projectImage(ctx, spec, snap, plan); err != nil {
		return err
	}
	if !isDefaultImage(spec.Image) {
		// An image of the user's (or the project's) brings the toolchain
		// they chose: the host's is not laid over it.
		spec.HostTools = slices.DeleteFunc(slices.Clone(spec.HostTools), func(t sandbox.HostTool) bool { return t.Copy })
	}
	p.hostToolNotes(spec, plan) // hostruntime.go
	if err := p.pickImage(ctx, spec, plan); err != nil {
		return err
	}
	if err := p.prebuildGo(ctx, spec, plan); err != nil {
		return err
	}
	st := plan.Step
	if st == nil {
		return nil
	}
	spec.Env = append(spec.Env, st.TestEnv...)
	spec.Path = append(spec.Path, st.Path...)
	if st.Script == "" {
		return nil
	}
	inst, ok := p.b.(sandbox.Installer)
	if !ok {
		p.log.Warn("dependency setup runs with the docker backend only", "backend", p.b.Name(), "step", st.Name)
		p.progress(fmt.Sprintf("not installing dependencies (%s): the %s backend has no setup phase; dependencies must be on the host", st.Name, p.b.Name()))
		return nil
	}
	if len(st.Caches) == 0 {
		return fmt.Errorf("%s sets a setup command, but fixpoint does not know where %s keeps what it installs (no language detected): set [sandbox] image to an image that has the dependencies", st.Override, st.Name)
	}
	var dirs []sandbox.CacheDir
	for _, c := range st.Caches {
		dirs = append(dirs, sandbox.CacheDir{Name: c.Name, Target: c.Path, Writable: c.Writable})
	}
	is := sandbox.InstallSpec{
		Image: spec.Image, Key: CacheKey(st, snap, *spec), Snapshot: snap, Script: st.Script,
		Env: st.Env, Path: st.Path, HostTools: spec.HostTools, Caches: dirs, HostEnv: p.hostEnv(st.HostEnv), CAFile: p.opts.CAFile, CAEnv: st.CAEnv, Registries: st.Registries,
		Labels: spec.Labels, Output: p.opts.Output,
		Limits: sandbox.Limits{Timeout: 15 * time.Minute, Memory: spec.Limits.Memory, NanoCPUs: spec.Limits.NanoCPUs},
	}
	// Another fixpoint process may be installing the same key: wait for
	// it, then Install finds its result cached.
	unlock, err := lockSetup(ctx, p.opts.LockDir, p.b.Name(), is.Key, func() {
		p.progress(fmt.Sprintf("waiting for another setup of %s (%s)", is.Key, st.Name))
	})
	if err != nil {
		return fmt.Errorf("dependency setup (%s): %w", st.Name, err)
	}
	defer unlock()
	record, logPath, remember := failurePaths(p.opts.FailureDir, spec.Labels[sandbox.LabelProject], p.b.Name(), is.Key)
	if remember {
		if f := recordedFailure(record, logPath); f != nil {
			return fmt.Errorf("%w\nThe agent did not start. Fix the install (run `%s` in the project), or set [sandbox] setup in .fixpoint.toml (\"off\" turns it off)", f, st.Script)
		}
	}
	flog := &failureLog{}
	if remember {
		flog = newFailureLog(logPath)
		is.Output = teeOutput(is.Output, flog)
	}
	start := time.Now()
	stop := p.ticker("installing dependencies ("+st.Name+")", start)
	res, err := inst.Install(ctx, is)
	stop()
	if err != nil {
		if errors.Is(err, sandbox.ErrInstall) {
			kept := ""
			// A cancelled run proves nothing about the inputs.
			if remember && ctx.Err() == nil {
				if kerr := flog.keep(record, logPath, failure{Step: st.Name, Error: strings.TrimPrefix(err.Error(), sandbox.ErrInstall.Error()+": "), Time: time.Now()}); kerr == nil {
					kept = fmt.Sprintf("\nIts output: %s. It is not run again with the same inputs: change them, or run with --retry-setup.", logPath)
				} else {
					p.log.Warn("cannot remember the failed setup", "err", kerr)
				}
			} else {
				flog.discard()
			}
			return fmt.Errorf("%w%s\nThe agent did not start.%s Fix the install (run `%s` in the project), or set [sandbox] setup in .fixpoint.toml (\"off\" turns it off)", err, kept, installHint(plan.Lang, err), st.Script)
		}
		flog.discard()
		return fmt.Errorf("dependency setup (%s): %w", st.Name, err)
	}
	flog.discard()
	if remember {
		forget(record, logPath)
	}
	if res.Cached {
		p.progress(fmt.Sprintf("dependencies ready (%s, cached)", st.Name))
	} else {
		p.progress(fmt.Sprintf("dependencies installed (%s) in %s", st.Name, time.Since(start).Round(time.Second)))
	}
	// An installed cache replaces the copy of a host one at the same place
	// (the module cache go mod download filled, at /gomodcache).
	installed := map[string]bool{}
	for _, m := range res.Mounts {
		installed[m.Target] = true
	}
	spec.Caches = slices.DeleteFunc(spec.Caches, func(c sandbox.CacheMount) bool { return c.HostDir != "" && installed[c.Target] })
	spec.Caches = append(spec.Caches, res.Mounts...)
	return nil
}

// CacheKey keys st's caches for a session spec: the manifest and lockfile
// contents, the script, the image, and the project (LabelProject): the
// install runs the project's own scripts, so a cache is never shared
// between projects, as the Go build cache is not.
func CacheKey(st *lang.Setup, snap *sandbox.Snapshot, spec sandbox.Spec) string {
	extra := spec.Image + "\x00" + spec.Labels[sandbox.LabelProject]
	// A host toolchain the step runs instead of the image's (docker's copy
	// of rustup's): what it built belongs to that toolchain.
	for _, t := range spec.HostTools {
		if t.Copy && t.Dir != "" {
			extra += "\x00" + t.Key
		}
	}
	return st.Key(snap, extra)
}

// ticker reports phase after a second (a cache hit says nothing) and then
// every Tick until stop is called. stop returns after the last report, so
// Progress is never called concurrently with the caller's own reports.
func (p *Preparer) ticker(phase string, start time.Time) (stop func()) {
	done, exited := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(exited)
		select {
		case <-done:
			return
		case <-time.After(time.Second):
			p.progress(phase)
		}
		t := time.NewTicker(p.opts.Tick)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				p.progress(fmt.Sprintf("%s · %d s", phase, int(time.Since(start).Seconds())))
			}
		}
	}()
	return func() { close(done); <-exited }
}

// proxyEnvKeys are the host variables every install step gets: the
// proxies a developer's machine sets. The registry locations its
// installer reads are the language's (lang.Setup.HostEnv).
var proxyEnvKeys = []string{"HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"}

// hostEnv is the host's values of the proxy variables and of the step's
// own (registry locations).
func (p *Preparer) hostEnv(step []string) []string {
	var out []string
	for _, k := range append(slices.Clone(proxyEnvKeys), step...) {
		if v := p.opts.Getenv(k); v != "" {
			out = append(out, k+"="+v)
		}
	}
	return out
}

func (p *Preparer) warn(line string) {
	if p.opts.Warn != nil {
		p.opts.Warn(line)
		return
	}
	p.progress("warning: " + line)
}

// projectImage applies .devcontainer's image or Dockerfile when the
// configuration names no image (spec has a fixpoint default image), and
// builds a project Dockerfile image before the install step needs it.
// A devcontainer image that is neither present nor pullable is skipped
// with a warning: fixpoint's image still runs the tests.
func (p *Preparer) projectImage(ctx context.Context, spec *sandbox.Spec, snap *sandbox.Snapshot, plan *Plan) error {
	d, ok := p.b.(*docker.Backend)
	if !ok {
		return nil
	}
	if isDefaultImage(spec.Image) && spec.Labels[backends.LabelDockerfile] == "" {
		switch {
		case plan.Dockerfile != "":
			spec.ContextSkip = snap.GeneratedDirs
			spec.Image = image.ProjectImageName(plan.Dockerfile, spec.ContextSkip)
			spec.Labels[backends.LabelDockerfile] = plan.Dockerfile
		case plan.Image != "":
			if err := d.EnsureImage(ctx, plan.Image); err != nil {
				p.warn(fmt.Sprintf(".devcontainer/devcontainer.json names image %s, which is not available (%v); using %s", plan.Image, err, spec.Image))
			} else {
				spec.Image = plan.Image
			}
		}
	}
	if df := spec.Labels[backends.LabelDockerfile]; df != "" {
		if _, err := image.BuildDockerfile(ctx, d.Client(), df, spec.Image, &image.DockerfileOptions{SkipDirs: spec.ContextSkip, Logger: p.log}); err != nil {
			return err
		}
	}
	return nil
}

// isDefaultImage reports whether img is fixpoint's own image for a
// language, not one the configuration named.
func isDefaultImage(img string) bool {
	_, ok := image.ImageLang(img)
	return ok
}

// pickImage replaces the language's default image with a per-version
// image when the default's runtime does not satisfy the requirement.
func (p *Preparer) pickImage(ctx context.Context, spec *sandbox.Spec, plan *Plan) error {
	req := plan.Requirement
	pr, ok := p.b.(Prober)
	if plan.Lang == nil || !ok || spec.Image != image.ImageName(plan.Lang.Name()) {
		return nil // other backends and images: CheckRuntime verifies in the session
	}
	if copiedTool(spec) != nil {
		// The host's toolchain runs, not the image's: the language offers
		// it only when it satisfies the requirement (lang/rust), and
		// CheckRuntime verifies it in the session.
		return nil
	}
	if req == nil {
		// No declared version: every version satisfies the project, so
		// the host's is the one a native run (and bwrap) uses.
		p.preferHostUndeclared(ctx, pr, spec, plan) // hostruntime.go
		return nil
	}
	have, err := p.imageVersion(ctx, pr, spec.Image, plan.Lang)
	if err != nil {
		return err
	}
	if req.Range.Allows(have) {
		p.preferHostRelease(ctx, pr, spec, plan, req.Range, have) // hostruntime.go
		return nil
	}
	rerr := &RuntimeError{Req: req, Lang: plan.Lang, Have: have.String(), Where: "image " + spec.Image}
	if p.opts.Runtimes == nil {
		return p.advisory(rerr)
	}
	rels, err := p.opts.Runtimes.Releases(ctx, plan.Lang)
	if err != nil {
		rerr.Why = err.Error()
		return p.advisory(rerr)
	}
	p.progress(fmt.Sprintf("%s requires %s %s; fetching a release", req.Source, req.Runtime, req.Constraint))
	host, hostOK := p.hostRuntime(ctx, plan.Lang)
	r, ok := lang.ChooseReleaseNear(plan.Lang, req.Range, rels, host, hostOK)
	if !ok {
		rerr.Why = fmt.Sprintf("none of the %d published %s releases satisfies it", len(rels), req.Runtime)
		return p.advisory(rerr)
	}
	start := time.Now()
	stop := p.ticker(fmt.Sprintf("preparing %s %s", req.Runtime, r.Version), start)
	name, err := p.opts.Runtimes.Ensure(ctx, plan.Lang, spec.Image, r)
	stop()
	if err != nil {
		rerr.Why = err.Error()
		return p.advisory(rerr)
	}
	spec.Image = name
	return nil
}

// advisory returns rerr, or nil after a warning when the project's own
// tools only warn about its requirement (lang.Requirement.Advisory): the
// image's version then runs the tests, as a native run would run the
// host's.
func (p *Preparer) advisory(rerr *RuntimeError) error {
	if rerr.Req.Advisory == "" {
		return rerr
	}
	have := "no " + rerr.Req.Runtime
	if rerr.Have != "" {
		have = rerr.Req.Runtime + " " + rerr.Have
	}
	why := ""
	if rerr.Why != "" {
		why = " (" + rerr.Why + ")"
	}
	p.warn(fmt.Sprintf("%s requires %s %s, but %s has %s%s; %s, so the tests run with it as a native run would", rerr.Req.Source, rerr.Req.Runtime, rerr.Req.Constraint, rerr.Where, have, why, rerr.Req.Advisory))
	return nil
}

func (p *Preparer) imageVersion(ctx context.Context, pr Prober, img string, l lang.Language) (lang.Version, error) {
	out, err := p.probe(ctx, pr, img, l.VersionCommand()) // probecache.go
	if err != nil {
		return lang.Version{}, fmt.Errorf("read the %s version of %s: %w", l.Name(), img, err)
	}
	return l.ParseVersion(out)
}

// CheckRuntime runs the language's version command in sess and returns a
// *RuntimeError when the version does not satisfy plan's requirement.
// where names the sandbox in the message ("image X", "the host"). A
// requirement the project's own tools treat as advice
// (lang.Requirement.Advisory) is not an error: warn (nil = discard) gets
// the same message, and the tests run with the version there is, as a
// native run would.
func CheckRuntime(ctx context.Context, sess sandbox.Session, plan *Plan, where string, warn func(string)) error {
	if plan == nil || plan.Requirement == nil || plan.Lang == nil {
		return nil
	}
	if plan.Requirement.Channel != "" {
		return checkChannel(ctx, sess, plan, where)
	}
	res, err := sess.Run(ctx, sandbox.Command{Args: plan.Lang.VersionCommand(), Env: plan.Requirement.ProbeEnv, Limits: sandbox.Limits{Timeout: 30 * time.Second}})
	if err != nil {
		return fmt.Errorf("read the %s version: %w", plan.Lang.Name(), err)
	}
	v, perr := plan.Lang.ParseVersion(string(res.Stdout) + string(res.Stderr))
	if res.ExitCode != 0 || perr != nil {
		return &RuntimeError{Req: plan.Requirement, Lang: plan.Lang, Where: where}
	}
	if !plan.Requirement.Range.Allows(v) {
		if req := plan.Requirement; req.Advisory != "" {
			if warn != nil {
				warn(fmt.Sprintf("%s requires %s %s, but %s has %s %s; %s, so the tests run with %s %s as a native run would (counts may differ from a run on a version it allows)", req.Source, req.Runtime, req.Constraint, where, req.Runtime, v, req.Advisory, req.Runtime, v))
			}
			return nil
		}
		return &RuntimeError{Req: plan.Requirement, Lang: plan.Lang, Have: v.String(), Where: where}
	}
	return nil
}

// HTTPClient is the client per-version downloads use: the host's proxy
// settings and CA store, a 10-minute bound.
func HTTPClient() *http.Client {
	return &http.Client{Timeout: 10 * time.Minute, Transport: &http.Transport{Proxy: http.ProxyFromEnvironment}}
}

// installHint explains a failed install: the language's own reading of
// its installer's output first ([lang.InstallHints]: a module proxy's
// 403 for a version it does not have is no credentials problem), else
// credentialHint.
func installHint(l lang.Language, err error) string {
	if h, ok := l.(lang.InstallHints); ok {
		if hint := h.InstallHint(err.Error()); hint != "" {
			return " " + hint
		}
	}
	return credentialHint(err)
}

// credentialHint explains a registry that refused the install for want
// of credentials ("" for other failures): none of the user's tokens reach
// a sandbox, so such a registry cannot be used from the setup step.
func credentialHint(err error) string {
	msg := err.Error()
	for _, sign := range []string{"E401", "E403", "401 Unauthorized", "403 Forbidden", "401 Client Error", "403 Client Error", "terminal prompts disabled"} {
		if strings.Contains(msg, sign) {
			return " The registry asked for credentials, and no credentials of yours (~/.npmrc, ~/.netrc, ~/.pip, tokens in the environment) reach the setup step: set [sandbox] image to an image that already has these dependencies, or install them with [sandbox] setup from a registry the sandbox can read without credentials."
		}
	}
	return ""
}

// goStdPrebuilder is a backend that compiles the Go standard library into
// a project's build cache before its first test run (bwrap; the docker
// images carry it prebuilt).
type goStdPrebuilder interface {
	PrebuildGoStd(ctx context.Context, labels map[string]string) error
}

// prebuildGo has the standard library compiled once per project before
// any test runs, with progress, when the backend needs it and the
// project's language builds with the Go toolchain (its image carries
// GOROOT: [lang.Image]).
func (p *Preparer) prebuildGo(ctx context.Context, spec *sandbox.Spec, plan *Plan) error {
	pb, ok := p.b.(goStdPrebuilder)
	if !ok || plan.Lang == nil || !plan.Lang.Image().GoRoot {
		return nil
	}
	stop := p.ticker("compiling the Go standard library into the project's build cache (once)", time.Now())
	err := pb.PrebuildGoStd(ctx, spec.Labels)
	stop()
	if err != nil {
		// Only time is lost: the first test run compiles it instead.
		p.warn(fmt.Sprintf("the Go standard library was not prebuilt: %v", err))
	}
	return nil
}

// checkChannel is CheckRuntime for a requirement of a release channel
// (lang.Requirement.Channel: Rust's nightly or beta): the version command
// runs with the requirement's ProbeEnv, which selects the pinned
// toolchain where the sandbox's runtime manager has it (the host's
// rustup under bwrap and none), and the language reads the channel of
// what answered (lang.ChannelRuntime). Otherwise the error says what the
// sandbox has: the runtime it runs without the pin, and why the pinned
// one did not answer.
func checkChannel(ctx context.Context, sess sandbox.Session, plan *Plan, where string) error {
	req := plan.Requirement
	cr, ok := plan.Lang.(lang.ChannelRuntime)
	run := func(env []string) (string, bool, error) {
		res, err := sess.Run(ctx, sandbox.Command{Args: plan.Lang.VersionCommand(), Env: env, Limits: sandbox.Limits{Timeout: 30 * time.Second}})
		if err != nil {
			return "", false, fmt.Errorf("read the %s version: %w", plan.Lang.Name(), err)
		}
		return string(res.Stdout) + string(res.Stderr), res.ExitCode == 0, nil
	}
	out, exited, err := run(req.ProbeEnv)
	if err != nil {
		return err
	}
	if ok && exited && cr.Channel(out) == req.Channel {
		return nil
	}
	rerr := &RuntimeError{Req: req, Lang: plan.Lang, Where: where}
	if !exited {
		rerr.Why = strings.Map(func(r rune) rune {
			if r < 0x20 || r == 0x7f {
				return '?'
			}
			return r
		}, firstError(out))
		if len(rerr.Why) > 300 {
			rerr.Why = rerr.Why[:300] + " ..."
		}
		if out, exited, err = run(nil); err != nil {
			return err
		}
	}
	if v, perr := plan.Lang.ParseVersion(out); exited && perr == nil {
		channel := "stable"
		if ok && cr.Channel(out) != "" {
			channel = cr.Channel(out)
		}
		rerr.Have = v.String() + " (" + channel + ")"
	}
	return rerr
}

// firstError is the line of a failed version command that says why
// ("error: toolchain 'beta-…' is not installed"), without the lines of
// a backtrace after it.
func firstError(out string) string {
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(strings.ToLower(l), "error") {
			return l
		}
	}
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			return l
		}
	}
	return ""
}

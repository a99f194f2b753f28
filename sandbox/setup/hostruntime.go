package setup

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"time"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/image"
	"github.com/fixpoint-dev/fixpoint/sandbox/kubernetes"
)

// hostRuntime is the version of l's runtime a native run on this machine
// uses: Options.HostVersion, else HostRuntime.
func (p *Preparer) hostRuntime(ctx context.Context, l lang.Language) (lang.Version, bool) {
	if p.opts.HostVersion != nil {
		return p.opts.HostVersion(ctx, l)
	}
	return HostRuntime(ctx, l)
}

// HostRuntime runs l's version command from the host's PATH (an absolute
// path only: exec.LookPath refuses the current directory) in the
// temporary directory, never in the workspace; ok is false when the host
// has no such runtime.
func HostRuntime(ctx context.Context, l lang.Language) (lang.Version, bool) {
	argv := l.VersionCommand()
	if len(argv) == 0 {
		return lang.Version{}, false
	}
	bin, err := exec.LookPath(argv[0])
	if err != nil {
		return lang.Version{}, false
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, argv[1:]...)
	cmd.Dir = os.TempDir()
	out, err := cmd.Output()
	if err != nil {
		return lang.Version{}, false
	}
	v, err := l.ParseVersion(string(out))
	return v, err == nil
}

// preferHostRelease moves spec to a per-version image of the host's
// runtime version when the image's version have satisfies the requirement
// but is not what a native run uses (lang.PreferHost). It is best effort:
// without the release (offline, unpublished), the image stays.
func (p *Preparer) preferHostRelease(ctx context.Context, pr Prober, spec *sandbox.Spec, plan *Plan, rng lang.Range, have lang.Version) {
	host, ok := p.hostRuntime(ctx, plan.Lang)
	if !lang.PreferHost(rng, have, host, ok) || p.opts.Runtimes == nil {
		return
	}
	// Built by an earlier run: no registry request.
	if built := image.RuntimeImage(spec.Image, host); func() bool {
		v, err := p.imageVersion(ctx, pr, built, plan.Lang)
		return err == nil && v == host
	}() {
		spec.Image = built
		return
	}
	lctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	rels, err := p.opts.Runtimes.Releases(lctx, plan.Lang)
	cancel()
	if err != nil {
		p.log.Info("keeping the image's runtime", "image", spec.Image, "have", have, "host", host, "err", err)
		return
	}
	r, ok := lang.ChooseReleaseNear(plan.Lang, rng, rels, host, true)
	if !ok || r.Version != host {
		return
	}
	stop := p.ticker(fmt.Sprintf("preparing %s %s, the host's version (the image has %s)", plan.Lang.Name(), host, have), time.Now())
	name, err := p.opts.Runtimes.Ensure(ctx, plan.Lang, spec.Image, r)
	stop()
	if err != nil {
		p.log.Info("keeping the image's runtime", "image", spec.Image, "host", host, "err", err)
		return
	}
	spec.Image = name
}

// preferHostUndeclared is preferHostRelease for a project that declares
// no version (no engines in package.json): any version satisfies it, so
// the host's is the one a native run uses (docker kept the image's Node
// 18 where the user and bwrap ran 20). Only languages whose releases
// fixpoint can fetch (lang.RuntimeSource) are probed; the others' images
// have the one version Debian ships.
func (p *Preparer) preferHostUndeclared(ctx context.Context, pr Prober, spec *sandbox.Spec, plan *Plan) {
	if _, ok := plan.Lang.(lang.RuntimeSource); !ok || p.opts.Runtimes == nil {
		return
	}
	if _, ok := p.hostRuntime(ctx, plan.Lang); !ok {
		return
	}
	have, err := p.imageVersion(ctx, pr, spec.Image, plan.Lang)
	if err != nil {
		p.log.Info("keeping the image's runtime", "image", spec.Image, "err", err)
		return
	}
	p.preferHostRelease(ctx, pr, spec, plan, lang.Range{}, have)
}

// copiedTool returns the spec's host toolchain that docker offers as a
// read-only copy in place of the image's (sandbox.HostTool.Copy: the
// rustup toolchain a native run uses), or nil.
func copiedTool(spec *sandbox.Spec) *sandbox.HostTool {
	for i, t := range spec.HostTools {
		if t.Copy && t.Dir != "" {
			return &spec.HostTools[i]
		}
	}
	return nil
}

// hostToolNotes says which toolchain the sessions run when the language
// offers the host's own as a copy (Rust): on docker, that one, or why the
// image's runs instead; on kubernetes, that the image's runs, since no
// host directory reaches a cluster. bwrap and none run the host's
// toolchain itself and say nothing.
func (p *Preparer) hostToolNotes(spec *sandbox.Spec, plan *Plan) {
	name := "the runtime"
	if plan.Lang != nil {
		name = plan.Lang.Name()
	}
	if _, ok := p.b.(*kubernetes.Backend); ok {
		if _, fetchable := plan.Lang.(lang.RuntimeSource); fetchable {
			// docker moves to the host's version, or to one the project
			// requires, with a per-version image; a cluster has only the
			// image it was given.
			p.progress(fmt.Sprintf("%s: the kubernetes backend runs the image's %s version; the host's version and per-version images are docker's (a project's requirement is still checked in the pod)", name, name))
		}
	}
	for _, t := range spec.HostTools {
		if !t.Copy || t.Note == "" {
			continue
		}
		switch p.b.(type) {
		case *docker.Backend:
			if t.Dir != "" {
				p.progress(fmt.Sprintf("%s: running %s, as a native run does (a read-only copy in the sandbox)", name, t.Note))
			} else {
				p.progress(fmt.Sprintf("%s: the image's toolchain runs, not the host's: %s", name, t.Note))
			}
		case *kubernetes.Backend:
			if t.Dir != "" {
				p.warn(fmt.Sprintf("%s: the kubernetes backend runs the image's toolchain, not %s: no host directory reaches the cluster (docker and bwrap run the host's); counts may differ from a native run", name, t.Note))
			}
		}
	}
}

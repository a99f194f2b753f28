package main

import (
	"context"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/backends"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/image"
	"github.com/fixpoint-dev/fixpoint/sandbox/setup"
)

// checkProject reports the workspace's runtime requirement next to the
// sandbox's version, and its dependency setup step. ok is false when the
// requirement cannot be met.
func checkProject(ctx context.Context, cfg *config.Config, root string) (checks []check, ok bool) {
	snap, err := sandbox.SnapshotDir(root, &sandbox.SnapshotOptions{SkipDirs: registry.CacheDirs(), GeneratedDirs: registry.GeneratedDirs()})
	if err != nil {
		return []check{{Name: "project", Status: "warn", Detail: oneLine(err.Error())}}, true
	}
	plan := setup.NewPlan(registry.Detect(snap), snap, cfg.Sandbox.Setup)
	if plan.Lang == nil {
		return []check{{Name: "project", Status: "info", Detail: root + ": no language detected (fixpoint knows " + strings.Join(registry.Names(), ", ") + ")"}}, true
	}
	checks = append(checks, check{Name: "project", Status: "info", Detail: fmt.Sprintf("%s: %s", root, plan.Lang.Name())})
	for _, w := range plan.Warnings {
		checks = append(checks, check{Name: "project files", Status: "warn", Detail: w})
	}
	if n, ok := plan.Lang.(lang.Notes); ok {
		for _, line := range n.Notes(snap) {
			checks = append(checks, check{Name: "project", Status: "info", Detail: line})
		}
	}
	spec := backends.SpecFor(cfg, plan.Lang, registry.Fallback(), snap)
	var d *docker.Backend
	if cfg.Sandbox.Backend == "" || cfg.Sandbox.Backend == config.BackendDocker {
		dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		d, _ = docker.New(dctx, &docker.Options{NoReap: true})
		cancel()
	}
	if d != nil {
		defer d.Close()
	}
	rc, ok, img := checkRuntime(ctx, plan, spec.Image, d)
	if tc := copiedTool(spec); tc != nil && d != nil {
		// docker runs the host's toolchain (a read-only copy), which the
		// language offers only when it satisfies the requirement.
		rc.Status, rc.Fix, ok = "ok", "", true
		rc.Detail = "docker runs " + tc.Note + ", as a native run does, not the image's (" + describeHave(sandboxVersion(ctx, plan.Lang, spec.Image, d)) + "); bwrap runs the host's own; kubernetes runs the image's"
	} else {
		for _, t := range spec.HostTools {
			if t.Copy && t.Dir == "" && t.Note != "" {
				rc.Detail += "; the host's toolchain is not used on docker: " + t.Note
			}
		}
	}
	checks = append(checks, rc)
	spec.Image = img
	checks = append(checks, checkSetup(ctx, plan, snap, spec, d))
	return checks, ok
}

// checkRuntime also returns the image the tests will run in.
func checkRuntime(ctx context.Context, plan *setup.Plan, img string, d *docker.Backend) (check, bool, string) {
	ch := check{Name: "runtime " + plan.Lang.Name()}
	req := plan.Requirement
	have, where, err := sandboxVersion(ctx, plan.Lang, img, d)
	if req == nil {
		ch.Status, ch.Detail = "info", "the project declares no version; "+describeHave(have, where, err)
		return ch, true, img
	}
	ch.Detail = fmt.Sprintf("%s requires %s; %s", req.Source, req.Constraint, describeHave(have, where, err))
	switch {
	case err != nil:
		ch.Status = "warn"
		return ch, true, img
	case req.Range.Allows(have):
		ch.Status = "ok"
		if host, ok := setup.HostRuntime(ctx, plan.Lang); d != nil && lang.PreferHost(req.Range, have, host, ok) {
			ch.Detail += fmt.Sprintf("; runs use the host's %s %s (a per-version image) when the release can be fetched", req.Runtime, host)
		}
		return ch, true, img
	case d == nil && req.Advisory != "":
		ch.Status = "warn"
		ch.Detail += "; " + req.Advisory + ", so the tests run with that version, as a native run would"
		return ch, true, img
	case d == nil:
		ch.Status = "fail"
		ch.Fix = (&setup.RuntimeError{Req: req, Lang: plan.Lang}).Error()
		_, ch.Fix, _ = strings.Cut(ch.Fix, "Fix: ")
		return ch, false, img
	}
	rt := &image.Runtimes{Client: d.Client(), HTTP: setup.HTTPClient()}
	rctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	rels, err := rt.Releases(rctx, plan.Lang)
	if err != nil {
		ch.Status, ch.Detail = "fail", ch.Detail+"; no other release: "+oneLine(err.Error())
		_, ch.Fix, _ = strings.Cut((&setup.RuntimeError{Req: req, Lang: plan.Lang}).Error(), "Fix: ")
		return ch, false, img
	}
	rel, found := lang.ChooseRelease(plan.Lang, req.Range, rels)
	best := rel.Version
	if !found {
		ch.Status, ch.Detail = "fail", ch.Detail+fmt.Sprintf("; none of %d published releases satisfies it", len(rels))
		_, ch.Fix, _ = strings.Cut((&setup.RuntimeError{Req: req, Lang: plan.Lang}).Error(), "Fix: ")
		return ch, false, img
	}
	name := image.RuntimeImage(img, best)
	state := "built on first use"
	if _, err := d.Client().ImageInspect(ctx, name); err == nil {
		state = "built"
	}
	ch.Status, ch.Detail = "ok", ch.Detail+fmt.Sprintf("; fixpoint runs %s %s in %s (%s)", req.Runtime, best, name, state)
	return ch, true, name
}

func describeHave(have lang.Version, where string, err error) string {
	if err != nil {
		return where + ": version unknown (" + oneLine(err.Error()) + ")"
	}
	return fmt.Sprintf("%s has %s", where, have)
}

// sandboxVersion reads the runtime version of img (docker) or the host.
func sandboxVersion(ctx context.Context, l lang.Language, img string, d *docker.Backend) (lang.Version, string, error) {
	argv := l.VersionCommand()
	if d != nil {
		out, err := d.Probe(ctx, img, argv)
		if err != nil {
			return lang.Version{}, "image " + img, err
		}
		v, err := l.ParseVersion(out)
		return v, "image " + img, err
	}
	out, err := exec.CommandContext(ctx, argv[0], argv[1:]...).CombinedOutput()
	if err != nil {
		return lang.Version{}, "the host", err
	}
	v, err := l.ParseVersion(string(out))
	return v, "the host", err
}

func checkSetup(ctx context.Context, plan *setup.Plan, snap *sandbox.Snapshot, spec sandbox.Spec, d *docker.Backend) check {
	ch := check{Name: "dependency setup", Status: "info"}
	st := plan.Step
	if st == nil || st.Script == "" {
		ch.Detail = "nothing to install"
		if st != nil && len(st.TestEnv) > 0 {
			ch.Detail += "; tests get " + strings.Join(st.TestEnv, " ")
		}
		return ch
	}
	from := st.Override
	if from == "" {
		from = "detected from " + strings.Join(st.Inputs, ", ")
	}
	ch.Detail = fmt.Sprintf("`%s` (%s)", st.Script, from)
	if d == nil {
		ch.Detail += "; runs with the docker backend only"
		return ch
	}
	key := setup.CacheKey(st, snap, spec)
	if _, err := d.Client().VolumeInspect(ctx, "fixpoint-deps-"+key+"-done"); err == nil {
		ch.Detail += "; cached (key " + key + ")"
	} else {
		ch.Detail += "; runs before the first test (not cached yet)"
	}
	return ch
}

// copiedTool is the host toolchain docker runs in place of the image's
// (sandbox.HostTool.Copy with a directory: Rust's rustup toolchain), or
// nil.
func copiedTool(spec sandbox.Spec) *sandbox.HostTool {
	for i, t := range spec.HostTools {
		if t.Copy && t.Dir != "" && isFixpointImage(spec.Image) {
			return &spec.HostTools[i]
		}
	}
	return nil
}

func isFixpointImage(img string) bool {
	_, ok := image.ImageLang(img)
	return ok
}

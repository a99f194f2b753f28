package agent

import (
	"maps"
	"slices"
	"strings"
	"sync"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/setup"
)

// project is what one walk through the engine (Run, Test, a prewarm)
// derives from a workspace snapshot before a session starts: its
// language (lang/registry), the session spec (sandbox/backends, through
// specFor) and the setup plan (sandbox/setup). It is derived once and
// passed down — to the setup key, the warm key, every session start and
// the test command — so that no step detects the language or plans the
// setup again. A snapshot the model edited keeps its run's language
// (projectIn): an edit never changes what decides how the tests run.
type project struct {
	snap *sandbox.Snapshot
	lang lang.Language // nil: no language detected
	spec sandbox.Spec  // without the setup phase's additions; see sessionSpec
	plan *setup.Plan

	// prepared holds the outcome of the setup phase for p, by noScripts
	// (Engine.prepare): a run's sessions (the baseline's, the working and
	// verifying ones, each iteration's) are prepared alike, so the phase
	// (the image's runtime probed in a container, the install's cache
	// looked up) runs once per run, not once per session. A failed phase
	// is not kept. preparing serializes the sessions started side by side.
	preparing sync.Mutex
	prepared  [2]*preparedSetup
}

// preparedSetup is a setup phase's outcome: the session spec with its
// additions, and the plan it ran.
type preparedSetup struct {
	spec sandbox.Spec
	plan *setup.Plan
}

// cloneSpec copies what the setup phase adds to and a start may change.
func cloneSpec(s sandbox.Spec) sandbox.Spec {
	s.Labels = maps.Clone(s.Labels)
	s.Caches = slices.Clip(slices.Clone(s.Caches))
	s.Env = slices.Clip(slices.Clone(s.Env))
	s.Path = slices.Clip(slices.Clone(s.Path))
	s.HostTools = slices.Clip(slices.Clone(s.HostTools))
	return s
}

// newProject derives the project of snap, detecting its language.
func (e *Engine) newProject(snap *sandbox.Snapshot) *project {
	return e.projectIn(snap, e.detect(snap))
}

// projectIn derives the project of snap in the language l, detected
// before.
func (e *Engine) projectIn(snap *sandbox.Snapshot, l lang.Language) *project {
	return e.projectWith(snap, l, setup.NewPlan(l, snap, e.cfg.Sandbox.Setup))
}

// projectWith is projectIn with the setup plan of snap in l, made before.
func (e *Engine) projectWith(snap *sandbox.Snapshot, l lang.Language, plan *setup.Plan) *project {
	e.derived.Add(1)
	return &project{snap: snap, lang: l, spec: specFor(e.cfg, l, snap), plan: plan}
}

// detect is the language of snap (lang/registry.Detect), counted for the
// test that proves a walk detects once (Engine.detected).
func (e *Engine) detect(snap *sandbox.Snapshot) lang.Language {
	e.detected.Add(1)
	return registry.Detect(snap)
}

// sessionSpec is a copy of p's spec that the setup phase may add to
// (caches, environment, image) without changing p's.
func (p *project) sessionSpec() sandbox.Spec {
	s := p.spec
	s.Labels = maps.Clone(s.Labels)
	s.Caches = slices.Clip(slices.Clone(s.Caches))
	s.Env = slices.Clip(slices.Clone(s.Env))
	s.Path = slices.Clip(slices.Clone(s.Path))
	return s
}

// setupKey identifies the dependencies p's setup installs: it changes
// when a manifest or lockfile does ("" when nothing is installed).
func (p *project) setupKey() string { return planKey(p.plan, p.snap) }

// mayChange reports whether next differs from p's snapshot in a file its
// setup plan could read: one of the step's inputs (the files whose
// content keys its cache: manifests, lockfiles), a .devcontainer file,
// or a file p's snapshot does not have (a new lockfile may change the
// step) or that is gone. An edit of existing source files changes no
// plan, so a run plans its setup once however many edits the model makes.
func (p *project) mayChange(next *sandbox.Snapshot) bool {
	changed, deleted := p.snap.Diff(next)
	if len(deleted) > 0 {
		return true
	}
	var inputs []string
	if p.plan.Step != nil {
		inputs = p.plan.Step.Inputs
	}
	for _, f := range changed {
		if _, had := p.snap.Files[f]; !had || slices.Contains(inputs, f) || strings.HasPrefix(f, ".devcontainer") {
			return true
		}
	}
	return false
}

// planKey is the key of the dependencies plan installs for snap.
func planKey(plan *setup.Plan, snap *sandbox.Snapshot) string {
	if plan.Step == nil || plan.Step.Script == "" {
		return ""
	}
	return plan.Step.Key(snap, "")
}

package agent

import (
	"context"
	"fmt"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/setup"
)

// prepare is the setup phase before a session starts (sandbox/setup): the
// image for the project's runtime version and the dependency install,
// whose caches the spec mounts. progress receives the phase lines. It runs
// once per project and noScripts (project.prepared): the later sessions
// of a run get a copy of the first one's outcome, and no lines.
func (e *Engine) prepare(ctx context.Context, proj *project, progress func(string), noScripts bool) (sandbox.Spec, *setup.Plan, error) {
	i := 0
	if noScripts {
		i = 1
	}
	proj.preparing.Lock()
	defer proj.preparing.Unlock()
	if ps := proj.prepared[i]; ps != nil {
		return cloneSpec(ps.spec), ps.plan, nil
	}
	spec, plan, err := e.setupPhase(ctx, proj, progress, noScripts)
	if err != nil {
		return spec, plan, err
	}
	e.setups.Add(1)
	proj.prepared[i] = &preparedSetup{spec: cloneSpec(spec), plan: plan}
	return spec, plan, nil
}

// setupPhase runs the setup phase for proj.
func (e *Engine) setupPhase(ctx context.Context, proj *project, progress func(string), noScripts bool) (sandbox.Spec, *setup.Plan, error) {
	spec, plan := proj.sessionSpec(), proj.plan
	if noScripts && plan.Step != nil {
		cp := *plan
		plan = &cp
		st := *plan.Step
		st.Env = append(append([]string(nil), st.Env...), st.NoScripts...)
		plan.Step = &st
	}
	for _, w := range plan.Warnings {
		e.warnf("%s", w)
	}
	p := setup.New(e.opts.Backend, &setup.Options{Progress: progress, Logger: e.log, Output: setupOutput{e},
		Warn: func(line string) { e.warnf("%s", line) }})
	if err := p.Prepare(ctx, &spec, proj.snap, plan); err != nil {
		return spec, plan, err
	}
	return spec, plan, nil
}

// setupOutput sends the install step's output to the debug log.
type setupOutput struct{ e *Engine }

func (w setupOutput) Write(p []byte) (int, error) {
	w.e.log.Debug("setup output", "text", string(p))
	return len(p), nil
}

// resetupIfChanged restarts the run's session with a fresh setup phase
// when next changes a manifest or lockfile (an approved dependency edit):
// the new dependencies are installed before the tests run. The edit is
// the model's, so the step runs only the project's declared command, with
// the installer's scripts off (lang.Setup.NoScripts); it is not re-run
// when the model edited an input the step executes (setup.py) or the
// step's declaration (.devcontainer): the old session stays, and missing
// dependencies fail the tests like any missing package.
func (r *run) resetupIfChanged(ctx context.Context, it int, next *sandbox.Snapshot) error {
	if !r.setupProj.mayChange(next) {
		return nil
	}
	// The edited snapshot's setup, in the run's language: a model edit
	// never changes the language its tests run as.
	plan := setup.NewPlan(r.language, next, r.e.cfg.Sandbox.Setup)
	key := planKey(plan, next)
	if key == r.setupKey {
		return nil
	}
	changed, deleted := r.base.Diff(next)
	if why := resetupRefused(plan, append(changed, deleted...)); why != "" {
		r.e.warnf("dependencies changed but the setup phase is not re-run: %s", why)
		r.setupKey = key
		return nil
	}
	r.emit(PhaseTest, it, "dependencies changed: running the setup phase again", nil)
	p := r.e.projectWith(next, r.language, plan)
	sess, done, err := r.e.startSessionNoScripts(ctx, p, func(line string) { r.emit(PhaseTest, it, line, nil) })
	if err != nil {
		return fmt.Errorf("setup after a dependency change: %w", err)
	}
	r.closeSession()
	r.sess, r.closeFn, r.setupKey, r.setupProj = sess, done, key, p
	return nil
}

// resetupRefused says why a model edit must not re-run setup, or "".
func resetupRefused(plan *setup.Plan, changed []string) string {
	for _, p := range changed {
		if p == ".devcontainer/devcontainer.json" || p == ".devcontainer.json" {
			return p + " was edited, and it declares the setup step"
		}
		if plan.Step != nil {
			for _, c := range plan.Step.Code {
				if p == c {
					return p + " was edited, and the install step would run it"
				}
			}
		}
	}
	return ""
}

// PrepareSetup runs the setup phase for the workspace at root (the image
// for its runtime, the dependency install into the caches), without
// starting a session or running a test: what a later Run or Test finds
// cached. The benchmarks call it so that a timed run compares with a
// native run whose dependencies are installed.
func (e *Engine) PrepareSetup(ctx context.Context, root string) error {
	if e.opts.Backend == nil {
		return fmt.Errorf("prepare: %w: no backend configured", sandbox.ErrUnavailable)
	}
	snap, err := e.snapshot(root)
	if err != nil {
		return fmt.Errorf("prepare: %w", err)
	}
	_, _, err = e.prepare(ctx, e.newProject(snap), nil, false)
	return err
}

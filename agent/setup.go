package agent

import (
	"context"
	"fmt"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/setup"
)

// prepare is the setup phase before a session starts (sandbox/setup): the
// image for the project's runtime version and the dependency install,
// whose caches the spec mounts. progress receives the phase lines.
func (e *Engine) prepare(ctx context.Context, snap *sandbox.Snapshot, progress func(string)) (sandbox.Spec, *setup.Plan, error) {
	spec := specFor(e.cfg, snap)
	plan := setup.NewPlan(snap, e.cfg.Sandbox.Setup)
	for _, w := range plan.Warnings {
		e.warnf("%s", w)
	}
	p := setup.New(e.opts.Backend, &setup.Options{Progress: progress, Logger: e.log, Output: setupOutput{e},
		Warn: func(line string) { e.warnf("%s", line) }})
	if err := p.Prepare(ctx, &spec, snap, plan); err != nil {
		return spec, plan, err
	}
	return spec, plan, nil
}

// setupKey identifies the installed dependencies of snap: it changes when
// a manifest or lockfile does ("" when nothing is installed).
func setupKey(cfg string, snap *sandbox.Snapshot) string {
	plan := setup.NewPlan(snap, cfg)
	if plan.Step == nil || plan.Step.Script == "" {
		return ""
	}
	return plan.Step.Key(snap, "")
}

// setupOutput sends the install step's output to the debug log.
type setupOutput struct{ e *Engine }

func (w setupOutput) Write(p []byte) (int, error) {
	w.e.log.Debug("setup output", "text", string(p))
	return len(p), nil
}

// resetupIfChanged restarts the run's session with a fresh setup phase
// when next changes a manifest or lockfile (an approved dependency edit):
// the new dependencies are installed before the tests run.
func (r *run) resetupIfChanged(ctx context.Context, it int, next *sandbox.Snapshot) error {
	key := setupKey(r.e.cfg.Sandbox.Setup, next)
	if key == r.setupKey {
		return nil
	}
	r.emit(PhaseTest, it, "dependencies changed: running the setup phase again", nil)
	sess, done, err := r.e.startSession(ctx, next, func(line string) { r.emit(PhaseTest, it, line, nil) })
	if err != nil {
		return fmt.Errorf("setup after a dependency change: %w", err)
	}
	r.closeSession()
	r.sess, r.closeFn, r.setupKey = sess, done, key
	return nil
}

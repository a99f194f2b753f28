package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/fixpoint-dev/fixpoint/agent/policy"
	"github.com/fixpoint-dev/fixpoint/agent/runlog"
)

// policyProblem checks a reply's changes against the project policy (code
// constructs with action block, and dependencies that need approval). It
// returns feedback for the model, or "" when the changes may run.
func (r *run) policyProblem(ctx context.Context, it int, changes map[string][]byte) string {
	if r.policy != nil {
		var findings policy.Findings
		for _, p := range sortedKeys(changes) {
			if changes[p] == nil {
				continue
			}
			fs, err := r.policy.Check(ctx, p, changes[p])
			if err != nil {
				r.e.log.Warn("policy check", "path", p, "err", err)
				continue
			}
			if old, ok := r.base.Text(p); ok && len(fs) > 0 {
				// What the user's own file already has is theirs
				// (per-use rules: policy.Checker.Added).
				if before, err := r.policy.Check(ctx, p, []byte(old)); err == nil {
					fs = r.policy.Added(before, fs)
				}
			}
			findings = append(findings, fs...)
		}
		for _, f := range findings {
			if f.Action == policy.Warn {
				r.e.warnf("policy: %s", f)
			}
		}
		if len(findings) > 0 {
			r.log.Write(runlog.KindWarning, it, map[string]any{"policy": findings})
		}
		if fb := findings.Feedback(); fb != "" {
			return strings.TrimSpace(fb)
		}
	}
	deps := policy.DepsAdded(r.cur, r.cur.With(changes))
	if len(deps) == 0 {
		return ""
	}
	_, need := policy.Allowed(deps, r.e.cfg.Policy.AllowDeps)
	if len(need) == 0 {
		return ""
	}
	var names []string
	for _, d := range need {
		names = append(names, d.String())
	}
	ok := false
	if r.e.opts.Approve != nil {
		var err error
		ok, err = r.e.opts.Approve(ctx, names)
		if err != nil {
			r.e.log.Warn("dependency approval", "err", err)
		}
	}
	if ok {
		return ""
	}
	return fmt.Sprintf("The reply adds dependencies that were not approved: %s. The sandbox has no network; solve the task with what the project already has (or the user can add them to [policy] allow_deps).", strings.Join(names, ", "))
}

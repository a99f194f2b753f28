package agent

import (
	"context"
	"strings"

	"github.com/fixpoint-dev/fixpoint/agent/policy"
	"github.com/fixpoint-dev/fixpoint/agent/runlog"
)

// policyProblem checks a reply's changes against the project policy (code
// constructs with action block), then asks for what needs the user's
// approval (approvalProblem). It returns feedback for the model, or ""
// when the changes may run.
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
	return r.approvalProblem(ctx, it, changes)
}

// approvalProblem asks the user about the changes that reach the
// networked setup phase: dependencies not on the allow-list and changes
// to what setup executes or downloads (policy.SetupChanges). It returns
// feedback for the model when they were not allowed, or "".
func (r *run) approvalProblem(ctx context.Context, it int, changes map[string][]byte) string {
	next := r.cur.With(changes)
	var a Approval
	_, need := policy.Allowed(policy.DepsAdded(r.cur, next), r.e.cfg.Policy.AllowDeps)
	for _, d := range need {
		a.Deps = append(a.Deps, d.String())
	}
	a.Setup = policy.SetupChanges(r.cur, next, sortedKeys(changes))
	if len(a.Deps) == 0 && len(a.Setup) == 0 {
		return ""
	}
	r.log.Write(runlog.KindWarning, it, map[string]any{"approval": a.Items()})
	ok := false
	if r.e.opts.Approve != nil {
		var err error
		ok, err = r.e.opts.Approve(ctx, a)
		if err != nil {
			r.e.log.Warn("approval", "err", err)
		}
	}
	if ok {
		return ""
	}
	return a.feedback()
}

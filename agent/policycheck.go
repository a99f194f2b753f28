package agent

import (
	"context"
	"fmt"
	"strings"

	"github.com/fixpoint-dev/fixpoint/agent/policy"
	"github.com/fixpoint-dev/fixpoint/agent/runlog"
)

// Bounds of one reply's changes. A reply past them is refused before any
// check runs, with the reason fed back to the model: no real fix needs
// more, and checking (and syncing, and testing) 100,000 files or hundreds
// of megabytes is a denial of service, not an edit.
const (
	maxReplyFiles = 1000
	maxReplyBytes = 32 << 20
)

// replyTooBig returns feedback when changes exceed the bounds, else "".
func replyTooBig(changes map[string][]byte) string {
	var size int64
	for _, b := range changes {
		size += int64(len(b))
	}
	if len(changes) <= maxReplyFiles && size <= maxReplyBytes {
		return ""
	}
	return fmt.Sprintf("The reply was refused: it changes %d files (%d bytes); one reply may change at most %d files and %d MiB. Make the smallest change that solves the task.",
		len(changes), size, maxReplyFiles, maxReplyBytes>>20)
}

// policyProblem checks a reply's changes against the project policy (code
// constructs with action block), then asks for what needs the user's
// approval (approvalProblem). It returns feedback for the model, or ""
// when the changes may run. The files are checked in one policy.Batch:
// one parser process per language per reply, not per file.
func (r *run) policyProblem(ctx context.Context, it int, changes map[string][]byte) string {
	if fb := replyTooBig(changes); fb != "" {
		return fb
	}
	if r.policy != nil {
		var findings policy.Findings
		batch := r.policy.Batch()
		defer func() {
			if err := batch.Close(); err != nil {
				r.e.log.Debug("policy parser", "err", err)
			}
		}()
		for _, p := range sortedKeys(changes) {
			if changes[p] == nil {
				continue
			}
			fs, err := batch.Check(ctx, p, changes[p])
			if err != nil {
				r.e.log.Warn("policy check", "path", p, "err", err)
				continue
			}
			// Only what the edit introduces counts: a finding the user's
			// own file already had (an existing import socket) must not
			// block every edit to that file.
			if len(fs) > 0 && r.base != nil {
				if before, err := r.base.Read(p); err == nil {
					if old, err := batch.Check(ctx, p, before); err == nil {
						fs = policy.Introduced(before, changes[p], old, fs)
					}
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

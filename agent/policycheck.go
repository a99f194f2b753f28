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
// constructs with action block, and dependencies that need approval). It
// returns feedback for the model, or "" when the changes may run. The
// files are checked in one policy.Batch: one parser process per language
// per reply, not per file.
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

package agent

import (
	"github.com/fixpoint-dev/fixpoint/agent/redact"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// newIgnorer returns the workspace's gitignore rules (sandbox.Ignore):
// the ones the snapshot applied, or those of the .gitignore files it
// holds. Ignored files a snapshot still carries (tracked ones, [sandbox]
// include) stay out of prompts unless policy.include_ignored is set.
func newIgnorer(snap *sandbox.Snapshot) *sandbox.Ignore { return snap.IgnoreRules() }

// isSecretPath reports files never shown to the model (agent/redact).
func isSecretPath(p string) bool { return redact.IsSecretPath(p) }

// redactText masks keys and tokens in prompt and log text (agent/redact).
func redactText(s string) string { return redact.String(s) }

package agent

import (
	"github.com/fixpoint-dev/fixpoint/agent/edit"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// parseEdits reads a reply's SEARCH/REPLACE blocks (agent/edit).
func parseEdits(reply string) ([]edit.Block, error) { return edit.Parse(reply) }

// applyEdits applies blocks all or nothing; root guards against symlinks
// that leave the workspace on the host.
func applyEdits(snap *sandbox.Snapshot, blocks []edit.Block) (map[string][]byte, error) {
	return edit.Apply(snap, blocks, &edit.ApplyOptions{Root: snap.Root})
}

// editFeedback is the precise message for a reply that did not apply.
func editFeedback(err error) string { return edit.FormatFeedback(err) }

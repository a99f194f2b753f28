package agent

import (
	"path/filepath"

	"github.com/fixpoint-dev/fixpoint/agent/edit"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// parseEdits reads a reply's SEARCH/REPLACE blocks (agent/edit).
func parseEdits(reply string) ([]edit.Block, error) { return edit.Parse(reply) }

// applyEdits applies blocks all or nothing. Every path is checked by name
// (git directories, secret and protected files, with the configuration's
// allow_protected; files the snapshot found a credential in are secret)
// and resolved on the host without following symlinks.
func applyEdits(cfg *config.Config, snap *sandbox.Snapshot, blocks []edit.Block) (map[string][]byte, error) {
	o := editOptions(cfg, snap.Root)
	for p := range snap.Credentials() {
		o.Secrets = append(o.Secrets, p)
	}
	return edit.Apply(snap, blocks, o)
}

func editOptions(cfg *config.Config, root string) *edit.ApplyOptions {
	o := &edit.ApplyOptions{Root: root, AllowProtected: cfg.Policy.AllowProtected}
	if df := cfg.Sandbox.Dockerfile; df != "" {
		if filepath.IsAbs(df) && root != "" {
			if rel, err := filepath.Rel(root, df); err == nil {
				df = rel
			}
		}
		if c, err := sandbox.CleanRel(filepath.ToSlash(df)); err == nil {
			o.Protect = append(o.Protect, c)
		}
	}
	return o
}

// editFeedback is the precise message for a reply that did not apply.
func editFeedback(err error) string { return edit.FormatFeedback(err) }

// WriteChanges writes a result's changes into the workspace at root: only
// when every file is still as the run started, never through a symlink,
// never into a git directory, each file replaced atomically (see
// edit.WriteFiles). It is how the CLI writes a verified result.
func WriteChanges(root string, changes []FileChange) error {
	out := make([]edit.Change, len(changes))
	for i, c := range changes {
		out[i] = edit.Change{Path: c.Path, Before: c.Before, After: c.After, Created: c.Created, Deleted: c.Deleted}
	}
	return edit.WriteFiles(root, out)
}

// CheckChanges checks the paths of a result's changes on the host as they
// are now (no symlink on the way, no git directory, regular files): the
// last check before an editor is asked to write them.
func CheckChanges(root string, changes []FileChange) error {
	paths := make([]string, len(changes))
	for i, c := range changes {
		paths[i] = c.Path
	}
	return edit.CheckPaths(root, paths)
}

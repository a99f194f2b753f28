package agent

import (
	"fmt"

	"github.com/fixpoint-dev/fixpoint/agent/redact"
	"github.com/fixpoint-dev/fixpoint/agent/runlog"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// SnapshotOptions are the snapshot settings of cfg ([sandbox] include,
// exclude, include_secrets, max_file_size, max_workspace_size). Secret
// files (redact.IsSecretPath) never enter a snapshot unless
// include_secrets names them: every snapshot that may reach a sandbox
// must be taken with these options.
func SnapshotOptions(cfg *config.Config) *sandbox.SnapshotOptions {
	sf := cfg.Sandbox.SandboxFiles
	maxFile, maxTotal := sf.Sizes()
	return &sandbox.SnapshotOptions{
		MaxFileSize:    maxFile,
		MaxTotalSize:   maxTotal,
		Include:        sf.Include,
		Exclude:        sf.Exclude,
		IsSecret:       redact.IsSecretPath,
		IncludeSecrets: sf.IncludeSecrets,
	}
}

// snapshot takes the workspace snapshot and tells what it left out: one
// line to the user (the CLI's stderr, the editor's log), every path at
// debug level.
func (e *Engine) snapshot(root string) (*sandbox.Snapshot, error) {
	snap, err := sandbox.SnapshotDir(root, SnapshotOptions(e.cfg))
	if err != nil {
		return nil, err
	}
	fmt.Fprintln(e.warn, "fixpoint: "+SnapshotSummary(snap))
	for _, l := range snap.Skipped.Lines() {
		e.log.Debug("snapshot: "+l, "root", root)
	}
	return snap, nil
}

// SnapshotSummary is the one line that says what a snapshot holds and
// what it left out.
func SnapshotSummary(snap *sandbox.Snapshot) string {
	var size int64
	for _, f := range snap.Files {
		size += f.Size()
	}
	return fmt.Sprintf("snapshot: %d files, %s; %s", len(snap.Files), sandbox.FormatBytes(size), snap.Skipped.Summary())
}

// logSnapshot records what the run's snapshot left out in the run log.
func (r *run) logSnapshot() {
	if r.log == nil {
		return
	}
	r.log.Write(runlog.KindWarning, 0, map[string]any{"message": SnapshotSummary(r.base), "skipped": r.base.Skipped.Lines()})
}

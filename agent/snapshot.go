package agent

import (
	"fmt"
	"path"
	"strings"

	"github.com/fixpoint-dev/fixpoint/agent/redact"
	"github.com/fixpoint-dev/fixpoint/agent/runlog"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// SnapshotOptions are the snapshot settings of cfg ([sandbox] include,
// exclude, include_secrets, max_file_size, max_workspace_size). Secret
// files never enter a snapshot unless include_secrets names them: those
// named like one (redact.IsSecretPath) and those whose contents hold a
// credential (redact.Rules, as the snapshot hashes them). Every snapshot
// that may reach a sandbox must be taken with these options. The
// languages' caches are never entered and their generated directories
// recorded for a project Dockerfile's build context (lang/registry).
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
		HoldsSecret:    holdsSecret,
		ScanSecret:     func(string) sandbox.SecretScanner { return &ruleScanner{} },
		SkipDirs:       registry.CacheDirs(),
		GeneratedDirs:  registry.GeneratedDirs(),
	}
}

// ruleScanner is redact.Scanner as a sandbox.SecretScanner.
type ruleScanner struct{ redact.Scanner }

func (s *ruleScanner) Rule() string {
	if f := s.Finding(); f != nil {
		return f.Rule.ID
	}
	return ""
}

// credentialKeys end the keys of credential settings in package manager
// configs: `//registry/:_authToken=…`, `_auth = …`, `password = …`,
// `npmAuthToken: …`.
var credentialKeys = []string{"_authtoken", "_auth", "_password", "password", "token", "npmauthtoken", "npmauthident"}

// holdsCredential reports a line that sets a credential to a literal
// value; a value naming an environment variable (`${NPM_TOKEN}`) is none.
func holdsCredential(text string) bool {
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		i := strings.IndexAny(line, "=:")
		for i >= 0 && strings.HasPrefix(line[i:], ":_") { // the ":" of //host/:_authToken
			j := strings.IndexAny(line[i+1:], "=:")
			if j < 0 {
				i = -1
				break
			}
			i += 1 + j
		}
		if i < 0 {
			continue
		}
		key := strings.ToLower(strings.Trim(strings.TrimSpace(line[:i]), `"'`))
		val := strings.Trim(strings.TrimSpace(line[i+1:]), `"'`)
		if val == "" || strings.HasPrefix(val, "$") {
			continue
		}
		for _, k := range credentialKeys {
			if strings.HasSuffix(key, k) {
				return true
			}
		}
	}
	return false
}

// holdsSecret: package manager configs are secret only when they hold a
// credential, and PEM files (.pem, .key) only when they hold a private
// key or are not PEM text (a DER key); every other file
// redact.IsSecretPath names is secret.
func holdsSecret(rel string, head []byte) bool {
	switch lower := strings.ToLower(path.Base(rel)); {
	case lower == ".npmrc", lower == ".pypirc", lower == ".yarnrc", lower == ".yarnrc.yml":
		return holdsCredential(string(head))
	case strings.HasSuffix(lower, ".pem"), strings.HasSuffix(lower, ".key"):
		return !publicPEM(string(head))
	}
	return true
}

// publicPEM reports PEM text that holds only public material:
// certificates, public keys, certificate requests.
func publicPEM(text string) bool {
	return strings.Contains(text, "-----BEGIN ") && !strings.Contains(text, "PRIVATE KEY") &&
		!strings.Contains(text, "ENCRYPTED") && len(redact.Detect(text, 1)) == 0
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

// warnDropped tells the user which unsaved editor buffers stayed out of
// the sandbox: a buffer of a secret file, or one that now holds a
// credential, is tested as it is on disk.
func (e *Engine) warnDropped(paths []string) {
	if len(paths) > 0 {
		fmt.Fprintf(e.warn, "fixpoint: unsaved buffers left out of the sandbox (ignored, excluded, secret or holding a credential): %s\n", strings.Join(paths, ", "))
	}
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

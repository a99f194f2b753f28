package agent

import (
	"context"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/fixpoint-dev/fixpoint/agent/redact"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// Secret masking: a run builds one [redact.Masker] from the values in the
// workspace's secret files (named like one, redact.IsSecretPath, or found
// holding a credential by the snapshot, sandbox.Snapshot.Credentials) and
// in the environment (the model's API key, credential variables, proxy
// passwords: envSecrets), and applies it at three sinks, one place each:
//
//   - the model: every message in [run.chat] and every tool result;
//   - the run log: the runlog.Writer's Redact option;
//   - the failure memory: agent/memory.go masks every string it gives the
//     store (excerpt, goal, diffs, lesson) and the recall query.
//
// Test reports are masked as they come out of the sandbox ([run.test]),
// before anything normalises them (failure signatures rewrite digits, the
// memory rewrites paths and numbers, trimming cuts text): a value is only
// recognisable as the code printed it.

// maxSecretFile bounds what is read of one secret file on the host.
const maxSecretFile = 1 << 20

// hostSkipDir reports directories never walked for secret files (they are
// not snapshotted either, and can be huge): version control, fixpoint's
// own, and what a language's tools make (lang.ProjectDirs: node_modules,
// .venv, target).
func hostSkipDir(name string) bool {
	return name == ".git" || name == ".fixpoint" || registry.GeneratedDir(name)
}

// envSecrets are the secret values fixpoint itself holds: the model's API
// key, and those of the process environment (redact.EnvValues).
func envSecrets(cfg *config.Config) []string {
	out := redact.EnvValues(os.Environ())
	if k := cfg.Model.APIKey; k != "" {
		out = append(out, k)
	}
	return out
}

// fileValues are the values a Masker masks for one secret file: those
// redact.Values finds, and every credential the rule table detects.
func fileValues(rel string, data []byte) []string {
	out := redact.Values(rel, data)
	for _, f := range redact.Detect(string(data), 0) {
		out = append(out, f.Secret)
	}
	return out
}

// newSecretMasker collects the secret values of the workspace: the secret
// files of snap (editor overlays included), those on disk under root that
// snap does not hold (too large for a snapshot, or kept out of it), the
// files it found a credential in, and extra (envSecrets). Symlinks are not
// followed.
func newSecretMasker(root string, snap *sandbox.Snapshot, extra []string) *redact.Masker {
	values := append([]string(nil), extra...)
	seen := map[string]bool{}
	creds := snap.Credentials()
	for _, p := range snap.Paths() {
		if _, cred := creds[p]; cred || redact.IsSecretPath(p) {
			data, err := snap.Files[p].Bytes()
			if err != nil {
				continue // changed or gone since the snapshot: the disk walk below reads it
			}
			seen[p] = true
			values = append(values, fileValues(p, data)...)
		}
	}
	for _, c := range snap.Skipped.Credentials {
		if root == "" {
			break
		}
		if data, ok := readSmall(filepath.Join(root, filepath.FromSlash(c.Path))); ok {
			seen[c.Path] = true
			values = append(values, fileValues(c.Path, data)...)
		}
	}
	if root != "" {
		_ = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return nil // unreadable parts of the tree hold nothing we can read either
			}
			if d.IsDir() {
				if p != root && hostSkipDir(d.Name()) {
					return filepath.SkipDir
				}
				return nil
			}
			rel, rerr := filepath.Rel(root, p)
			rel = filepath.ToSlash(rel)
			if rerr != nil || !d.Type().IsRegular() || seen[rel] || !redact.IsSecretPath(rel) {
				return nil
			}
			if data, ok := readSmall(p); ok {
				values = append(values, fileValues(rel, data)...)
			}
			return nil
		})
	}
	return redact.NewMasker(values)
}

func readSmall(p string) ([]byte, bool) {
	f, err := os.Open(p)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxSecretFile))
	return data, err == nil && len(data) > 0
}

// mask masks the workspace's secret values, then well-known token shapes.
func (r *run) mask(s string) string { return r.masker.String(s) }

// test runs the tests and masks the report before anything else sees it.
func (r *run) test(ctx context.Context, snap *sandbox.Snapshot) (*testrun.Report, error) {
	r.res.FullRuns++
	rep, err := r.e.runTests(ctx, r.sess, r.language, snap, nil, true)
	if err != nil {
		return nil, err
	}
	return maskReport(rep, r.mask), nil
}

// maskReport returns a copy of rep with every text masked. Paths and the
// command are the workspace's and fixpoint's own and stay as they are.
func maskReport(rep *testrun.Report, mask func(string) string) *testrun.Report {
	if rep == nil {
		return nil
	}
	out := *rep
	out.Output = mask(rep.Output)
	out.Tests = make([]testrun.Result, len(rep.Tests))
	for i, t := range rep.Tests {
		t.ID, t.Name, t.Package = mask(t.ID), mask(t.Name), mask(t.Package)
		t.Message, t.Expected, t.Actual, t.Excerpt = mask(t.Message), mask(t.Expected), mask(t.Actual), mask(t.Excerpt)
		t.Frames = append([]testrun.Frame(nil), t.Frames...)
		for j := range t.Frames {
			t.Frames[j].Func = mask(t.Frames[j].Func)
		}
		out.Tests[i] = t
	}
	return &out
}

// Package swe is the real-bug benchmark (`fixpoint bench swe`): bug-fix
// commits of public repositories, each an [Instance] in the SWE-bench
// style (the tree before the fix, the maintainers' test patch, their fix
// as the gold patch, the tests the fix makes pass). [Run] puts each
// instance through `fixpoint fix` — the real loop, sandbox and context
// builder — with the user's model or, with Oracle set, a model that
// replies with the gold patch, and reports per instance whether the failure
// was reproduced, whether the fix was verified, whether the code every gold
// hunk edits was in the first prompt, the prompt's size, the requests and
// the wall time against a native run of the same suites.
//
// Instances are JSON lines (see [Instance]); archives are paths relative to
// the JSONL file. docs/BENCHMARKS.md and corpus/README.md say how the
// bundled corpus was built and split.
package swe

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Instance is one real bug. The JSON names are the user-facing format:
// one object per line of a .jsonl file.
type Instance struct {
	ID         string `json:"id"`          // unique, e.g. "owner__repo-abc1234"
	Repo       string `json:"repo"`        // "owner/name"
	Language   string `json:"language"`    // go, python, node or rust
	BaseCommit string `json:"base_commit"` // the parent of the fix
	FixCommit  string `json:"fix_commit,omitempty"`
	// Archive is a .tar.gz of the tree at BaseCommit (files at its root),
	// relative to the JSONL file.
	Archive string `json:"archive"`
	// TestPatch adds or changes the tests (applied before the run); the
	// model never sees it as a diff, only its failing tests.
	TestPatch string `json:"test_patch"`
	// GoldPatch is the maintainers' fix of the code (no test files).
	GoldPatch string `json:"gold_patch"`
	// FailToPass are the tests that fail at BaseCommit with TestPatch and
	// pass with GoldPatch, named as fixpoint names them (a Go test's name,
	// a pytest node id, a node test's full title); PassToPass pass in both
	// (may be empty: every test that passed must still pass anyway).
	FailToPass []string `json:"fail_to_pass"`
	PassToPass []string `json:"pass_to_pass,omitempty"`
	// TestCmd overrides fixpoint's test runner detection, as test_cmd.
	TestCmd string `json:"test_cmd,omitempty"`
	// NativeSeconds is the wall time of the native test command on the
	// instance (with TestPatch), dependencies installed: the cost a run is
	// compared with (two such runs: before and after the fix).
	NativeSeconds float64 `json:"native_seconds,omitempty"`
	// Split is "tuning" or "heldout": decided by a rule before anyone
	// looked at the instance (corpus/README.md).
	Split string `json:"split,omitempty"`
	// Problem is the fix's commit message or issue title, for reports.
	Problem string `json:"problem,omitempty"`
	// Round is the round of the bundled corpus that added the instance
	// (0: unknown, or added before round 5), so that a round's new
	// instances can be run alone (--round).
	Round int `json:"round,omitempty"`
}

// Load reads a JSONL file of instances and resolves their archives
// against its directory.
func Load(path string) ([]Instance, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Instance
	seen := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "//") {
			continue
		}
		var in Instance
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, n, err)
		}
		if err := in.validate(); err != nil {
			return nil, fmt.Errorf("%s:%d: %s: %w", path, n, in.ID, err)
		}
		if seen[in.ID] {
			return nil, fmt.Errorf("%s:%d: duplicate id %q", path, n, in.ID)
		}
		seen[in.ID] = true
		if !filepath.IsAbs(in.Archive) {
			in.Archive = filepath.Join(filepath.Dir(path), in.Archive)
		}
		out = append(out, in)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return out, nil
}

func (in *Instance) validate() error {
	switch {
	case in.ID == "":
		return fmt.Errorf("no id")
	case in.Archive == "":
		return fmt.Errorf("no archive")
	case in.GoldPatch == "":
		return fmt.Errorf("no gold_patch")
	case len(in.FailToPass) == 0:
		return fmt.Errorf("no fail_to_pass tests")
	case in.Split != "" && in.Split != "tuning" && in.Split != "heldout":
		return fmt.Errorf("split %q: want tuning or heldout", in.Split)
	}
	if _, err := ParsePatch(in.GoldPatch); err != nil {
		return fmt.Errorf("gold_patch: %w", err)
	}
	if _, err := ParsePatch(in.TestPatch); err != nil {
		return fmt.Errorf("test_patch: %w", err)
	}
	return nil
}

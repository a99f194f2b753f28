// Package langtest holds test helpers shared by the language packages.
package langtest

import (
	"sort"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// SetupCase is an edit (Before -> After; a file missing from After is
// deleted) and the changes SetupChanges must report: one substring of
// "file: what" per change, none for an edit setup does not see.
type SetupCase struct {
	Name          string
	Before, After map[string]string
	Want          []string
}

// RunSetupCases checks l's SetupChanges on each case: the number of
// changes, each one's text, and that none carries control characters.
func RunSetupCases(t *testing.T, l lang.SetupChanges, cases []SetupCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.Name, func(t *testing.T) {
			before, after := SnapOf(tt.Before), SnapOf(tt.After)
			var changed []string
			for p := range tt.After {
				if b, ok := tt.Before[p]; !ok || b != tt.After[p] {
					changed = append(changed, p)
				}
			}
			for p := range tt.Before {
				if _, ok := tt.After[p]; !ok {
					changed = append(changed, p)
				}
			}
			sort.Strings(changed)
			got := l.SetupChanges(before, after, changed)
			if len(got) != len(tt.Want) {
				t.Fatalf("SetupChanges(%v) = %q, want %d change(s) matching %q", changed, got, len(tt.Want), tt.Want)
			}
			for i, w := range tt.Want {
				if !strings.Contains(got[i].String(), w) {
					t.Errorf("change %d = %q, want it to contain %q", i, got[i], w)
				}
				if strings.ContainsAny(got[i].String(), "\x1b\x07\r") {
					t.Errorf("change %d carries control characters: %q", i, got[i])
				}
			}
		})
	}
}

// SnapOf is a snapshot of files (path -> content).
func SnapOf(files map[string]string) *sandbox.Snapshot {
	s := &sandbox.Snapshot{Files: map[string]sandbox.File{}}
	for p, c := range files {
		s.Files[p] = sandbox.File{Data: []byte(c)}
	}
	return s
}

// MustVersion parses a version a test spells out, and panics on a typo.
func MustVersion(s string) lang.Version {
	x, err := lang.ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return x
}

package agent

import (
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestUnifiedDiffApplies checks the diff with git apply: every case's diff
// must turn Before into After.
func TestUnifiedDiffApplies(t *testing.T) {
	sandboxtest.RequireCommand(t, "git")
	lines := func(n int, f func(i int) string) string {
		var b strings.Builder
		for i := 1; i <= n; i++ {
			b.WriteString(f(i) + "\n")
		}
		return b.String()
	}
	long := lines(40, func(i int) string { return "line " + string(rune('A'+i%26)) })
	tests := []struct {
		name   string
		change FileChange
	}{
		{name: "edit middle", change: FileChange{Path: "a.txt", Before: []byte(long), After: []byte(strings.Replace(long, "line K\n", "line K changed\n", 1))}},
		{name: "two hunks", change: FileChange{Path: "b.txt", Before: []byte(long), After: []byte("new first\n" + strings.TrimSuffix(long, "line O\n") + "new last\n")}},
		{name: "create", change: FileChange{Path: "dir/c.txt", After: []byte("hello\nworld\n"), Created: true}},
		{name: "delete", change: FileChange{Path: "d.txt", Before: []byte("bye\n"), Deleted: true}},
		{name: "no final newline", change: FileChange{Path: "e.txt", Before: []byte("x\ny"), After: []byte("x\nz")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			p := filepath.Join(dir, filepath.FromSlash(tt.change.Path))
			if !tt.change.Created {
				os.WriteFile(p, tt.change.Before, 0o644)
			}
			diff := UnifiedDiff([]FileChange{tt.change})
			cmd := exec.Command("git", "apply", "--unsafe-paths", "-")
			cmd.Dir = dir
			cmd.Stdin = strings.NewReader(diff)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("git apply: %v: %s\ndiff:\n%s", err, out, diff)
			}
			got, err := os.ReadFile(p)
			if tt.change.Deleted {
				if err == nil {
					t.Error("file still exists after the delete diff")
				}
				return
			}
			if string(got) != string(tt.change.After) {
				t.Errorf("after git apply = %q, want %q\ndiff:\n%s", got, tt.change.After, diff)
			}
		})
	}
}

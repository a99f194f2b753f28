package edit

import (
	"fmt"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestDiffAppliesWithGit checks Diff's output against a real patch tool:
// git apply must turn before into after for random edits.
func TestDiffAppliesWithGit(t *testing.T) {
	sandboxtest.RequireCommand(t, "git")
	r := rand.New(rand.NewPCG(1, 2))
	for n := range 100 {
		var a, b []string
		for range 30 {
			a = append(a, fmt.Sprintf("l%d\n", r.IntN(8)))
		}
		for _, l := range a {
			switch r.IntN(6) {
			case 0: // delete
			case 1:
				b = append(b, "new\n", l)
			case 2:
				b = append(b, "changed\n")
			default:
				b = append(b, l)
			}
		}
		before, after := strings.Join(a, ""), strings.Join(b, "")
		if r.IntN(3) == 0 {
			after = strings.TrimSuffix(after, "\n")
		}
		d := Diff("f", []byte(before), []byte(after))
		if d == "" {
			continue
		}
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "f"), []byte(before), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(t.Context(), "git", "apply", "-")
		cmd.Dir = dir
		cmd.Stdin = strings.NewReader(d)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("case %d: git apply: %v: %s\n%s", n, err, out, d)
		}
		got, _ := os.ReadFile(filepath.Join(dir, "f"))
		if string(got) != after {
			t.Fatalf("case %d: git apply gave %q, want %q\n%s", n, got, after, d)
		}
	}
}

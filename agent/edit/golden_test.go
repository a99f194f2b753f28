package edit

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/internal/txtar"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/*/*.txtar")

// runGolden runs fn on every archive in dir and compares its output with
// the "want" section.
func runGolden(t *testing.T, dir string, fn func(t *testing.T, a *txtar.Archive) string) {
	paths, err := filepath.Glob(filepath.Join("testdata", dir, "*.txtar"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no golden files in testdata/%s: %v", dir, err)
	}
	for _, p := range paths {
		t.Run(strings.TrimSuffix(filepath.Base(p), ".txtar"), func(t *testing.T) {
			raw, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			a := txtar.Parse(string(raw))
			got := fn(t, a)
			if *update {
				a.Set("want", got)
				if err := os.WriteFile(p, []byte(a.Format()), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, _ := a.Get("want")
			if got != want {
				t.Errorf("%s: got\n%s\nwant\n%s\n(run go test -update to accept)", p, got, want)
			}
		})
	}
}

func renderBlocks(blocks []Block) string {
	var b strings.Builder
	for _, bl := range blocks {
		fmt.Fprintf(&b, "block %d: %s\nsearch:\n%sreplace:\n%s", bl.Index, bl.Path, bar(bl.Search), bar(bl.Replace))
	}
	if len(blocks) == 0 {
		b.WriteString("no blocks\n")
	}
	return b.String()
}

// bar prefixes each line with "|" so whitespace shows.
func bar(s string) string {
	var b strings.Builder
	for _, l := range splitBlock(s) {
		b.WriteString("|" + l + "\n")
	}
	return b.String()
}

func TestParseGolden(t *testing.T) {
	runGolden(t, "parse", func(t *testing.T, a *txtar.Archive) string {
		reply, ok := a.Get("reply")
		if !ok {
			t.Fatal("no reply section")
		}
		blocks, err := Parse(reply)
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		return renderBlocks(blocks)
	})
}

// TestApplyGolden: sections named "file/PATH" form the snapshot.
func TestApplyGolden(t *testing.T) {
	runGolden(t, "apply", func(t *testing.T, a *txtar.Archive) string {
		reply, _ := a.Get("reply")
		snap := &sandbox.Snapshot{Files: map[string]sandbox.File{}}
		for _, f := range a.Files {
			if p, ok := strings.CutPrefix(f.Name, "file/"); ok {
				snap.Files[p] = sandbox.File{Data: []byte(f.Data)}
			}
		}
		blocks, err := Parse(reply)
		if err != nil {
			return "parse error: " + err.Error() + "\n"
		}
		changed, err := Apply(snap, blocks, nil)
		if err != nil {
			if changed != nil {
				t.Errorf("Apply returned changes with an error")
			}
			return "error: " + err.Error() + "\nfeedback:\n" + FormatFeedback(err)
		}
		var paths []string
		for p := range changed {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		var b strings.Builder
		for _, p := range paths {
			b.WriteString(Diff(p, snap.Files[p].Data, changed[p]))
		}
		if len(paths) == 0 {
			b.WriteString("no changes\n")
		}
		return b.String()
	})
}

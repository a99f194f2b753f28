package edit

import (
	"flag"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

var update = flag.Bool("update", false, "rewrite the want sections of testdata/*/*.txtar")

// section returns the text of the first section called name.
func section(a *txtar.Archive, name string) (string, bool) {
	for _, f := range a.Files {
		if f.Name == name {
			return string(f.Data), true
		}
	}
	return "", false
}

// setSection replaces the first section called name, or appends it.
func setSection(a *txtar.Archive, name, data string) {
	for i := range a.Files {
		if a.Files[i].Name == name {
			a.Files[i].Data = []byte(data)
			return
		}
	}
	a.Files = append(a.Files, txtar.File{Name: name, Data: []byte(data)})
}

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
			a := txtar.Parse(raw)
			got := fn(t, a)
			if *update {
				setSection(a, "want", got)
				if err := os.WriteFile(p, txtar.Format(a), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, _ := section(a, "want")
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
		reply, ok := section(a, "reply")
		if !ok {
			t.Fatal("no reply section")
		}
		blocks, err := Parse(reply)
		// Independent of the want sections, which -update rewrites.
		if name := path.Base(t.Name()); (err != nil) != strings.HasPrefix(name, "err_") {
			t.Errorf("Parse(%s) error = %v; archives named err_* must fail, the others parse", name, err)
		} else if err == nil && (len(blocks) == 0) != (name == "no_blocks") {
			t.Errorf("Parse(%s) = %d blocks, want some (none only for no_blocks)", name, len(blocks))
		}
		if err != nil {
			return "error: " + err.Error() + "\n"
		}
		return renderBlocks(blocks)
	})
}

var lineNumber = regexp.MustCompile(`^\s*[0-9]+\| ?`)

// applyMustFail are the apply archives whose reply must be refused.
var applyMustFail = map[string]bool{"all_or_nothing": true, "ambiguous": true, "sequential_same_file": true,
	"err_absolute": true, "err_dotdot": true, "err_empty_search_existing": true, "err_missing_file": true,
	"no_match_closest": true, "no_match_fuzzy_line": true, "no_match_nothing_close": true,
	"err_gitdir": true, "err_protected": true, "err_secret": true}

// checkApplied holds, independently of the want sections, for an applied
// reply: each block's file changed, and every non-blank REPLACE line is
// in it (indentation may be adapted).
func checkApplied(t *testing.T, blocks []Block, changed map[string][]byte) {
	t.Helper()
	for _, bl := range blocks {
		data, ok := changed[bl.Path]
		if !ok {
			t.Errorf("block %d: %s not changed", bl.Index, bl.Path)
			continue
		}
		lines := map[string]bool{}
		for _, l := range strings.Split(string(data), "\n") {
			lines[strings.TrimSpace(l)] = true
		}
		for _, l := range strings.Split(bl.Replace, "\n") {
			l = lineNumber.ReplaceAllString(l, "") // a numbered reply's "12| " prefixes
			if l = strings.TrimSpace(l); l != "" && !lines[l] {
				t.Errorf("block %d: REPLACE line %q is not in %s after Apply", bl.Index, l, bl.Path)
			}
		}
	}
}

// TestApplyGolden: sections named "file/PATH" form the snapshot.
func TestApplyGolden(t *testing.T) {
	runGolden(t, "apply", func(t *testing.T, a *txtar.Archive) string {
		reply, _ := section(a, "reply")
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
		if name := path.Base(t.Name()); (err != nil) != applyMustFail[name] {
			t.Errorf("Apply(%s) error = %v, want an error: %v", name, err, applyMustFail[name])
		} else if err == nil {
			checkApplied(t, blocks, changed)
		}
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

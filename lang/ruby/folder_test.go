package ruby_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/internal/editorgen"
	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
)

// mentionsRuby matches what only Ruby support would write.
var mentionsRuby = regexp.MustCompile(`(?i)\bruby\b|minitest`)

// outside are the files outside lang/ruby that may mention Ruby, and why.
// Anything else that does is knowledge of Ruby that left its folder.
var outside = map[string]string{
	"lang/registry/registry.go": "registration: the import, its place in All, and why there",
	"README.md":                 "documentation: the Architecture section tells how Ruby was added",
}

// TestRubyLivesInItsFolder is the proof that a new language is a new
// folder: among the repository's tracked files, only the registration
// line's file and the docs mention Ruby or minitest outside lang/ruby;
// the editor recipes do only in what editorgen generates from the
// registry (generated without Ruby, they do not mention it at all).
func TestRubyLivesInItsFolder(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	git, err := exec.LookPath("git")
	if err != nil {
		t.Fatalf("git is needed to list the repository's files: %v", err)
	}
	cmd := exec.Command(git, "ls-files", "-z")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("git ls-files: %v", err)
	}
	generated := generatedWithoutRuby(t, root)
	var found []string
	for _, p := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if strings.HasPrefix(p, "lang/ruby/") {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, p))
		if err != nil {
			if os.IsNotExist(err) { // deleted in the work tree, not yet committed
				continue
			}
			t.Fatal(err)
		}
		if !mentionsRuby.Match(data) {
			continue
		}
		if rel, ok := strings.CutPrefix(p, "editors/"); ok && generated[rel] != nil {
			if mentionsRuby.Match(generated[rel]) {
				t.Errorf("%s mentions Ruby outside its generated language lists", p)
			}
			continue
		}
		found = append(found, p)
		if _, ok := outside[p]; !ok {
			t.Errorf("%s mentions Ruby or minitest: move that knowledge into lang/ruby behind a lang interface", p)
		}
	}
	slices.Sort(found)
	t.Logf("files outside lang/ruby that mention Ruby or minitest, besides generated recipes: %d %v", len(found), found)
	if len(found) == 0 {
		t.Fatal("no file outside lang/ruby mentions Ruby: the registration line is gone, or this test reads nothing")
	}
}

// generatedWithoutRuby renders the editor recipes from every registered
// language but Ruby, from the committed recipes (editors' own test checks
// that those are what the generator makes with Ruby).
func generatedWithoutRuby(t *testing.T, root string) map[string][]byte {
	t.Helper()
	var langs []lang.Language
	for _, l := range registry.All() {
		if l.Name() != "ruby" {
			langs = append(langs, l)
		}
	}
	files, err := editorgen.Generate(langs, func(p string) ([]byte, error) {
		return os.ReadFile(filepath.Join(root, "editors", p))
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

package swe

import (
	"crypto/sha256"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The bundled corpus keeps the rules its README states: every instance
// loads, is named owner__repo-<fix sha, 7>, sits in the split its id's
// sha256 decides, keeps its archive under the size limit (0.5 MB from round
// 8), and its test patch and then its gold patch apply to its archive (the
// order a run applies them in: in Rust a src file's #[cfg(test)] module
// changes are in the test patch and the rest of the file's in the gold
// patch). The README's count of instances, repositories and splits is the JSONL's.
func TestBundledCorpus(t *testing.T) {
	const file = "corpus/instances.jsonl"
	ins, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	repos := map[string]bool{}
	splits := map[string]int{}
	for _, in := range ins {
		repos[in.Repo] = true
		splits[in.Split]++
		want := strings.ReplaceAll(in.Repo, "/", "__") + "-"
		if len(in.FixCommit) < 7 || in.ID != want+in.FixCommit[:7] {
			t.Errorf("%s: id is not %s<fix sha, 7> (fix_commit %q)", in.ID, want, in.FixCommit)
		}
		split := "tuning"
		if sha256.Sum256([]byte(in.ID))[0]%2 == 1 {
			split = "heldout"
		}
		if in.Split != split {
			t.Errorf("%s: split %q, the sha256 rule says %q", in.ID, in.Split, split)
		}
		switch in.Language {
		case "go", "python", "node", "rust":
		default:
			t.Errorf("%s: language %q", in.ID, in.Language)
		}
		if in.Round != 0 && in.Round < 5 {
			t.Errorf("%s: round %d: the field starts with round 5", in.ID, in.Round)
		}
		st, err := os.Stat(in.Archive)
		if err != nil {
			t.Errorf("%s: %v", in.ID, err)
			continue
		}
		if st.Size() > 1_500_000 {
			t.Errorf("%s: archive %d bytes, over the limit of 1.5 MB", in.ID, st.Size())
		}
		if in.Round >= 8 && st.Size() > 500_000 {
			t.Errorf("%s: archive %d bytes, over round 8's limit of 0.5 MB", in.ID, st.Size())
		}
		root := t.TempDir()
		if out, err := exec.Command("tar", "-xzf", in.Archive, "-C", root).CombinedOutput(); err != nil {
			t.Errorf("%s: tar: %v: %s", in.ID, err, out)
			continue
		}
		for _, p := range []struct{ name, text string }{{"test_patch", in.TestPatch}, {"gold_patch", in.GoldPatch}} {
			fps, err := ParsePatch(p.text)
			if err != nil {
				t.Errorf("%s: %s: %v", in.ID, p.name, err)
				continue
			}
			for _, f := range fps {
				if err := applyFile(root, f); err != nil {
					t.Errorf("%s: %s does not apply after the earlier patches: %v", in.ID, p.name, err)
				}
			}
		}
	}
	readme, err := os.ReadFile(filepath.Join("corpus", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	head := fmt.Sprintf("%d instances from %d repositories, %d tuning and %d held-out", len(ins), len(repos), splits["tuning"], splits["heldout"])
	if !strings.Contains(string(readme), head) {
		got := regexp.MustCompile(`\d+ instances from \d+ repositories[^\n]*`).FindString(string(readme))
		t.Errorf("corpus/README.md says %q; the JSONL has %q", got, head)
	}
}

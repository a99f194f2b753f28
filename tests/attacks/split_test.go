package attacks

import (
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"testing"
)

// setOf is the split rule, fixed before any case was run or shown: the
// first hex digit of sha256(file name) even -> tuning, odd -> heldout.
func setOf(file string) string {
	sum := fmt.Sprintf("%x", sha256.Sum256([]byte(filepath.Base(file))))
	switch sum[0] {
	case '0', '2', '4', '6', '8', 'a', 'c', 'e':
		return "tuning"
	}
	return "heldout"
}

// TestSplitRule checks that every case sits in the set the rule gives it,
// and that every case file parses.
func TestSplitRule(t *testing.T) {
	for _, set := range []string{"tuning", "heldout"} {
		files, err := filepath.Glob(filepath.Join(set, "*.txtar"))
		if err != nil {
			t.Fatal(err)
		}
		if len(files) == 0 {
			t.Errorf("%s/ has no cases", set)
		}
		for _, f := range files {
			if got := setOf(f); got != set {
				t.Errorf("%s is in %s/, the split rule puts it in %s/", f, set, got)
			}
			if _, err := parseCase(f, set+"/"+filepath.Base(f)); err != nil {
				t.Error(err)
			}
		}
	}
}

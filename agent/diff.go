package agent

import (
	"fmt"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/agent/edit"
)

// UnifiedDiff renders changes as a unified diff (git style, a/ and b/
// prefixes, 3 lines of context), files in path order. The hunks come from
// edit.Diff, whose output git apply accepts.
func UnifiedDiff(changes []FileChange) string {
	cs := append([]FileChange(nil), changes...)
	sort.Slice(cs, func(i, j int) bool { return cs[i].Path < cs[j].Path })
	var b strings.Builder
	for _, c := range cs {
		from, to := "a/"+c.Path, "b/"+c.Path
		if c.Created {
			from = "/dev/null"
		}
		if c.Deleted {
			to = "/dev/null"
		}
		fmt.Fprintf(&b, "diff --git a/%s b/%s\n", c.Path, c.Path)
		if c.Created {
			b.WriteString("new file mode 100644\n")
		}
		if c.Deleted {
			b.WriteString("deleted file mode 100644\n")
		}
		fmt.Fprintf(&b, "--- %s\n+++ %s\n", from, to)
		// edit.Diff starts with its own ---/+++ lines; ours above know
		// about created and deleted files.
		hunks := edit.Diff(c.Path, c.Before, c.After)
		for i := 0; i < 2 && hunks != ""; i++ {
			_, hunks, _ = strings.Cut(hunks, "\n")
		}
		b.WriteString(hunks)
	}
	return b.String()
}

package policy

import (
	"path"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// SetupChanges lists what the edit from before to after changes in what
// the setup phase (run with network) executes or downloads: each
// language's knowledge (registry.SetupChanges), plus the files that
// declare the setup step for any language: .devcontainer (its image,
// Dockerfile and postCreateCommand) and fixpoint's own configuration
// ([sandbox] setup). The agent asks the user before such an edit runs.
func SetupChanges(before, after *sandbox.Snapshot, changed []string) []lang.SetupChange {
	changed = append([]string(nil), changed...)
	sort.Strings(changed)
	out := registry.SetupChanges(before, after, changed)
	for _, p := range changed {
		old, hadOld := lang.FileBytes(before, p)
		cur, ok := lang.FileBytes(after, p)
		if !ok || hadOld && string(old) == string(cur) {
			continue
		}
		switch {
		case p == ".devcontainer.json" || strings.HasPrefix(p, ".devcontainer/"):
			out = append(out, lang.SetupChange{File: p, What: "changes the dev container (image, Dockerfile or postCreateCommand), which the setup phase builds and runs"})
		case path.Base(p) == ".fixpoint.toml":
			out = append(out, lang.SetupChange{File: p, What: "changes fixpoint's configuration, which can set the setup command ([sandbox] setup)"})
		}
	}
	return out
}

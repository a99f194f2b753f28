package node

import (
	"encoding/json"
	"path"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// workspacePatterns are package.json's npm/yarn workspace globs
// ("packages/*"), as an array or as {"packages": [...]}; nil without.
func workspacePatterns(raw json.RawMessage) []string {
	if len(raw) == 0 {
		return nil
	}
	var list []string
	if json.Unmarshal(raw, &list) == nil {
		return list
	}
	var obj struct {
		Packages []string `json:"packages"`
	}
	if json.Unmarshal(raw, &obj) == nil {
		return obj.Packages
	}
	return nil
}

// workspaceManifests are the package.json files of the workspace
// packages the patterns name (one directory level per pattern element,
// as npm globs them; "**" is not followed).
func workspaceManifests(snap *sandbox.Snapshot, patterns []string) []string {
	var out []string
	for _, p := range snap.Paths() {
		if path.Base(p) != "package.json" || p == "package.json" || strings.Contains(p, "node_modules/") {
			continue
		}
		dir := path.Dir(p)
		for _, pat := range patterns {
			pat = strings.TrimSuffix(strings.TrimPrefix(path.Clean(pat), "./"), "/")
			if ok, _ := path.Match(pat, dir); ok {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

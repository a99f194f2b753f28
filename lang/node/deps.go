package node

import (
	"encoding/json"
	"path"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// Deps lists the packages every package.json depends on, in any of its
// dependency tables (ecosystem "npm").
func (Language) Deps(s *sandbox.Snapshot) []lang.Dep {
	var out []lang.Dep
	for p := range s.Files {
		if path.Base(p) != "package.json" {
			continue // read only the manifests: contents stay on disk
		}
		text, _ := s.Text(p)
		var pj map[string]json.RawMessage
		if json.Unmarshal([]byte(text), &pj) != nil {
			continue
		}
		for _, key := range []string{"dependencies", "devDependencies", "optionalDependencies", "peerDependencies"} {
			var deps map[string]string
			if json.Unmarshal(pj[key], &deps) == nil {
				for name := range deps {
					out = append(out, lang.Dep{Ecosystem: "npm", Name: name, File: p})
				}
			}
		}
	}
	return out
}

package golang

import (
	"path"
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

var goRequireRe = regexp.MustCompile(`(?m)^\s*(?:require\s+)?([A-Za-z0-9][\w.\-/]*\.[\w.\-/]+)\s+v[\w.\-+]+`)

// Deps lists the modules every go.mod requires (ecosystem "go").
func (Language) Deps(s *sandbox.Snapshot) []lang.Dep {
	var out []lang.Dep
	for p := range s.Files {
		if path.Base(p) != "go.mod" {
			continue // read only the manifests: contents stay on disk
		}
		text, _ := s.Text(p)
		for _, m := range goRequireRe.FindAllStringSubmatch(text, -1) {
			if !strings.HasPrefix(strings.TrimSpace(m[0]), "module") {
				out = append(out, lang.Dep{Ecosystem: "go", Name: m[1], File: p})
			}
		}
	}
	return out
}

package python

import (
	"path"
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

var (
	pyReqRe      = regexp.MustCompile(`^\s*([A-Za-z0-9][A-Za-z0-9._\-]*)`)
	pyprojDepsRe = regexp.MustCompile(`(?s)\bdependencies\s*=\s*\[(.*?)\]`)
	pyStringRe   = regexp.MustCompile(`["']([A-Za-z0-9][A-Za-z0-9._\-]*)`)
)

// Deps lists the distributions requirements*.txt files and
// pyproject.toml dependency arrays name (ecosystem "python", lower case).
func (Language) Deps(s *sandbox.Snapshot) []lang.Dep {
	var out []lang.Dep
	for p := range s.Files {
		base := path.Base(p)
		switch {
		case strings.HasPrefix(base, "requirements") && strings.HasSuffix(base, ".txt"):
			text, _ := s.Text(p)
			for _, line := range strings.Split(text, "\n") {
				line = strings.TrimSpace(line)
				if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "-") {
					continue
				}
				if m := pyReqRe.FindStringSubmatch(line); m != nil {
					out = append(out, lang.Dep{Ecosystem: "python", Name: strings.ToLower(m[1]), File: p})
				}
			}
		case base == "pyproject.toml":
			text, _ := s.Text(p)
			for _, block := range pyprojDepsRe.FindAllStringSubmatch(text, -1) {
				for _, m := range pyStringRe.FindAllStringSubmatch(block[1], -1) {
					out = append(out, lang.Dep{Ecosystem: "python", Name: strings.ToLower(m[1]), File: p})
				}
			}
		}
	}
	return out
}

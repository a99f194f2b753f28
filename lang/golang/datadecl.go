package golang

import (
	"path"
	"regexp"

	"github.com/fixpoint-dev/fixpoint/lang"
)

var _ lang.DataDecls = Language{}

// goDataRe is a top-level type, const or var declaration of one name
// (a grouped `const (` has no name to rank).
var goDataRe = regexp.MustCompile(`^(?:type|const|var)\s+[A-Za-z_]\w*`)

// DataDecl reports a Go type, const or var declaration (lang.DataDecls).
func (Language) DataDecl(p, line string) bool {
	return path.Ext(p) == ".go" && goDataRe.MatchString(line)
}

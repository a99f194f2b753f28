package python

import (
	"path"
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
)

var _ lang.DataDecls = Language{}

// pyDataRe is a module-level assignment (TABLE = {…}, NAME: T = …) or a
// class statement: the class's own lines (attributes, not its methods)
// are data no tracer sees run.
var pyDataRe = regexp.MustCompile(`^(?:[A-Za-z_]\w*\s*(?::\s*[^=]+)?=[^=]|\s*class\s+[A-Za-z_])`)

// DataDecl reports a module-level assignment or a class statement
// (lang.DataDecls); not a module's metadata (__all__, __version__): it
// lists names every traced line uses, and no code reads it.
func (Language) DataDecl(p, line string) bool {
	switch path.Ext(p) {
	case ".py", ".pyi":
		return pyDataRe.MatchString(line) && !strings.HasPrefix(line, "__")
	}
	return false
}

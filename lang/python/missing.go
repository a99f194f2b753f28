package python

import (
	"regexp"

	"github.com/fixpoint-dev/fixpoint/lang"
)

var _ lang.MissingNames = Language{}

// missingNameRe matches Python's messages for a name a module lacks: an
// import of it (ImportError) or an attribute of a module
// (AttributeError; not of an object: "'NoneType' object has no
// attribute" names no missing definition).
var missingNameRe = regexp.MustCompile(`cannot import name '([A-Za-z_][A-Za-z0-9_]*)'|module '[\w.]+' has no attribute '([A-Za-z_][A-Za-z0-9_]*)'`)

// missingNamesMax bounds the names one message yields.
const missingNamesMax = 4

// MissingNames returns the names an ImportError or a module's
// AttributeError in message says are missing ([lang.MissingNames]).
func (Language) MissingNames(message string) []string {
	var out []string
	for _, m := range missingNameRe.FindAllStringSubmatch(message, -1) {
		n := m[1] + m[2]
		seen := false
		for _, o := range out {
			seen = seen || o == n
		}
		if !seen {
			out = append(out, n)
		}
		if len(out) >= missingNamesMax {
			break
		}
	}
	return out
}

package rust

import (
	"path"
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
)

// rsHeaderItemRe is an item a Rust file's header holds: a use
// declaration, an extern crate, a module declared by file (mod x;).
var rsHeaderItemRe = regexp.MustCompile(`^(?:pub(?:\([^)]*\))?\s+)?(?:use\s|extern\s+crate\s|mod\s+\w+\s*;)`)

// HeaderLines is the number of lines a Rust file's header takes: its
// comments and inner doc comments (//!, /*! */), inner attributes
// (#![no_std], over several lines too), use declarations, extern crates
// and file modules (mod x;), with the outer attributes on those
// (#[macro_use], #[cfg(test)] mod tests;), up to the last of them. 0 for
// other files.
func (Language) HeaderLines(p string, data []byte) int {
	if path.Ext(p) != ".rs" {
		return 0
	}
	return lang.ScanHeader(data, func(ls []string, i int, t string) (int, bool) {
		switch {
		case strings.HasPrefix(t, "#!["):
			return attrEnd(ls, i), true
		case strings.HasPrefix(t, "#["):
			// An outer attribute belongs to the item after it: part of the
			// header only when that item is.
			j := i
			for j < len(ls) && strings.HasPrefix(strings.TrimSpace(ls[j]), "#[") {
				j = attrEnd(ls, j) + 1
			}
			if j >= len(ls) || !rsHeaderItemRe.MatchString(strings.TrimSpace(ls[j])) {
				return i, false
			}
			return stmtEnd(ls, j), true
		case rsHeaderItemRe.MatchString(t):
			return stmtEnd(ls, i), true
		}
		return i, false
	})
}

// attrEnd is the line an attribute opened at line i closes on.
func attrEnd(ls []string, i int) int {
	depth := 0
	for j := i; j < len(ls); j++ {
		depth += strings.Count(ls[j], "[") - strings.Count(ls[j], "]")
		if depth <= 0 {
			return j
		}
	}
	return len(ls) - 1
}

// stmtEnd is the line the item opened at line i ends on (its ;).
func stmtEnd(ls []string, i int) int {
	for j := i; j < len(ls) && j-i < 200; j++ {
		if strings.Contains(ls[j], ";") {
			return j
		}
	}
	return i
}

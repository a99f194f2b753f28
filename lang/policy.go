package lang

import (
	"bytes"
	"strings"
)

// OutsideWorkspace reports whether a literal path in checked code leaves
// the workspace: absolute, home-relative or climbing with "..".
func OutsideWorkspace(p string) bool {
	return strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || p == ".." ||
		strings.HasPrefix(p, "../") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/..")
}

// LineOf is the 1-based line of byte offset off in b.
func LineOf(b []byte, off int) int { return bytes.Count(b[:off], []byte("\n")) + 1 }

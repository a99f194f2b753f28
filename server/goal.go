package server

import (
	"regexp"
	"strings"
)

// goalRE matches a whole-line goal comment in any common comment syntax:
// //, #, --, ;, /* */, <!-- -->, and a " * " block-comment continuation.
var goalRE = regexp.MustCompile(`^\s*(?://+|#+|--+|;+|/\*+|<!--|\*)\s*(?:TODO\(fixpoint\)|fixpoint)\s*:\s*(.*?)\s*(?:\*+/|-->)?\s*$`)

// goalIn returns the goal of a `fixpoint: <goal>` or
// `TODO(fixpoint): <goal>` comment line, and whether line is one.
func goalIn(line string) (string, bool) {
	m := goalRE.FindStringSubmatch(line)
	if m == nil || strings.TrimSpace(m[1]) == "" {
		return "", false
	}
	return m[1], true
}

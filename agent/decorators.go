package agent

import "strings"

// decoratorStart is the first line of a decorator (or attribute) written
// over several lines whose last line is j, for a declaration at
// indentation ind: the nearest line above j at indentation ind that
// opens with @ (Python, TypeScript, Java) or #[ (Rust), when every line
// from it to j is its continuation (indented deeper, or closing a
// bracket at ind) and its brackets close at j. -1 when line j ends no
// such decorator. The decorator belongs to the declaration under it:
// the route patterns of `@router.route('a/.*',\n    'b/.*')` decide
// when the function runs, and a fix to the routing edits them (round 9).
func decoratorStart(ls []string, j, ind int) int {
	t := strings.TrimSpace(ls[j])
	if t == "" || indentOf(ls[j]) < ind || indentOf(ls[j]) == ind && !strings.ContainsAny(t[:1], ")]}") {
		return -1
	}
	for k := j - 1; k >= 0 && j-k <= 40; k-- {
		l := ls[k]
		tk := strings.TrimSpace(l)
		if tk == "" {
			return -1
		}
		if indentOf(l) == ind {
			if !strings.HasPrefix(tk, "@") && !strings.HasPrefix(tk, "#[") {
				return -1
			}
			if bracketDepth(ls[k:j+1]) != 0 {
				return -1
			}
			return k
		}
		if indentOf(l) < ind {
			return -1
		}
	}
	return -1
}

// bracketDepth is the count of opening brackets less closing ones in
// lines, outside string literals ('…', "…", `…`, on one line each) and
// # or // comments (a Rust attribute's #[ is no comment).
func bracketDepth(lines []string) int {
	d := 0
	for _, l := range lines {
		var q byte
		for i := 0; i < len(l); i++ {
			c := l[i]
			switch {
			case q != 0:
				if c == '\\' {
					i++
				} else if c == q {
					q = 0
				}
			case c == '\'' || c == '"' || c == '`':
				q = c
			case c == '#' && (i+1 >= len(l) || l[i+1] != '[') || c == '/' && i+1 < len(l) && l[i+1] == '/':
				i = len(l)
			case c == '(' || c == '[' || c == '{':
				d++
			case c == ')' || c == ']' || c == '}':
				d--
			}
		}
	}
	return d
}

package sandbox

import (
	"strings"
)

// Ignore is a gitignore matcher (gitignore(5) semantics): patterns with *,
// ?, [...] and **, negation with !, directory-only patterns with a trailing
// slash, patterns anchored to their file's directory when they contain a
// slash, backslash escapes, and per-directory .gitignore files whose rules
// apply only below their directory and override the rules above them.
//
// Rules are kept in precedence order, lowest first: core.excludesFile,
// .git/info/exclude, then .gitignore files from the root down, then the
// [sandbox] exclude setting. The last rule that matches decides. The zero
// value ignores nothing. An Ignore is not safe for concurrent AddPatterns.
type Ignore struct {
	rules  []ignoreRule
	prefix string // the workspace's path in its repository, "" at the top; Match and Ignored prepend it
}

type ignoreRule struct {
	base    string // directory of the file the rule came from, "" = root
	pattern string
	negate  bool
	dirOnly bool
	rooted  bool // the pattern contained a slash: matched against the path below base
	literal bool // no glob characters: compare strings
}

// AddPatterns adds the lines of a gitignore file found in directory base
// (slash-separated, relative to the workspace root, "" for the root).
func (ig *Ignore) AddPatterns(base string, text string) {
	base = strings.Trim(base, "/")
	if base == "." {
		base = ""
	}
	for _, line := range strings.Split(text, "\n") {
		if r, ok := parseIgnoreLine(base, line); ok {
			ig.rules = append(ig.rules, r)
		}
	}
}

// Len is the number of rules.
func (ig *Ignore) Len() int {
	if ig == nil {
		return 0
	}
	return len(ig.rules)
}

func parseIgnoreLine(base, line string) (ignoreRule, bool) {
	line = strings.TrimSuffix(line, "\r")
	line = trimTrailingSpace(line)
	if line == "" || line[0] == '#' {
		return ignoreRule{}, false
	}
	r := ignoreRule{base: base}
	switch {
	case line[0] == '!':
		r.negate, line = true, line[1:]
	case strings.HasPrefix(line, `\!`), strings.HasPrefix(line, `\#`):
		line = line[1:]
	}
	if strings.HasSuffix(line, "/") {
		r.dirOnly, line = true, strings.TrimRight(line, "/")
	}
	if line == "" {
		return ignoreRule{}, false
	}
	if strings.Contains(line, "/") {
		r.rooted, line = true, strings.TrimPrefix(line, "/")
	}
	r.pattern = line
	r.literal = !strings.ContainsAny(line, `*?[\`)
	return r, true
}

// trimTrailingSpace removes trailing spaces unless escaped with a backslash.
func trimTrailingSpace(s string) string {
	for strings.HasSuffix(s, " ") {
		if strings.HasSuffix(s, `\ `) {
			n := 0 // count the backslashes before the space
			for i := len(s) - 2; i >= 0 && s[i] == '\\'; i-- {
				n++
			}
			if n%2 == 1 {
				return s
			}
		}
		s = s[:len(s)-1]
	}
	return s
}

// Match reports whether the rules decide that rel (a file, or a directory
// when isDir) is ignored, looking at rel itself only: a caller walking the
// tree stops at an ignored directory, which is how git keeps a file whose
// parent directory is excluded from being re-included.
func (ig *Ignore) Match(rel string, isDir bool) bool {
	ignored, _ := ig.decide(rel, isDir)
	return ignored
}

// decide returns the verdict and whether any rule matched.
func (ig *Ignore) decide(rel string, isDir bool) (ignored, matched bool) {
	if ig == nil {
		return false, false
	}
	if ig.prefix != "" {
		rel = ig.prefix + "/" + rel
	}
	for i := len(ig.rules) - 1; i >= 0; i-- {
		if ig.rules[i].matches(rel, isDir) {
			return !ig.rules[i].negate, true
		}
	}
	return false, false
}

// Ignored reports whether the file rel, or any directory above it, is
// ignored.
func (ig *Ignore) Ignored(rel string) bool {
	if ig.Len() == 0 {
		return false
	}
	for i := 0; i < len(rel); i++ {
		if rel[i] == '/' && ig.Match(rel[:i], true) {
			return true
		}
	}
	return ig.Match(rel, false)
}

func (r *ignoreRule) matches(p string, isDir bool) bool {
	if r.dirOnly && !isDir {
		return false
	}
	if r.base != "" {
		if len(p) <= len(r.base) || p[len(r.base)] != '/' || p[:len(r.base)] != r.base {
			return false
		}
		p = p[len(r.base)+1:]
	}
	if !r.rooted {
		if i := strings.LastIndexByte(p, '/'); i >= 0 {
			p = p[i+1:]
		}
	}
	if r.literal {
		return p == r.pattern
	}
	return wildmatch(r.pattern, p)
}

// wildmatch matches a gitignore pattern against a slash-separated path:
// '*' and '?' never match '/', "**" between slashes (or at either end)
// matches any number of directories, [...] is a class ([!...] or [^...]
// negated), and a backslash quotes the next character.
func wildmatch(pat, s string) bool {
	for len(pat) > 0 {
		switch c := pat[0]; c {
		case '*':
			if strings.HasPrefix(pat, "**") {
				rest := strings.TrimLeft(pat, "*")
				switch {
				case rest == "":
					return true // "**" at the end: everything below
				case rest[0] == '/':
					// "**/": zero or more leading directories
					rest = rest[1:]
					if wildmatch(rest, s) {
						return true
					}
					for i := 0; i < len(s); i++ {
						if s[i] == '/' && wildmatch(rest, s[i+1:]) {
							return true
						}
					}
					return false
				}
				// "**" not followed by a slash acts as "*"
			}
			rest := strings.TrimLeft(pat, "*")
			for i := 0; i <= len(s); i++ {
				if wildmatch(rest, s[i:]) {
					return true
				}
				if i < len(s) && s[i] == '/' {
					return false
				}
			}
			return false
		case '?':
			if s == "" || s[0] == '/' {
				return false
			}
			pat, s = pat[1:], s[1:]
		case '[':
			n, ok, valid := matchClass(pat, s)
			if !valid { // no closing bracket: a literal '['
				if s == "" || s[0] != '[' {
					return false
				}
				pat, s = pat[1:], s[1:]
				continue
			}
			if !ok {
				return false
			}
			pat, s = pat[n:], s[1:]
		case '\\':
			if len(pat) > 1 {
				pat = pat[1:]
			}
			if s == "" || s[0] != pat[0] {
				return false
			}
			pat, s = pat[1:], s[1:]
		default:
			if s == "" || s[0] != c {
				return false
			}
			pat, s = pat[1:], s[1:]
		}
	}
	return s == ""
}

// matchClass matches s[0] against the class at the start of pat and
// returns the class's length in pat. valid is false when the class does
// not close.
func matchClass(pat, s string) (n int, ok, valid bool) {
	i := 1
	negate := false
	if i < len(pat) && (pat[i] == '!' || pat[i] == '^') {
		negate = true
		i++
	}
	matched := false
	var ch byte
	if s != "" {
		ch = s[0]
	}
	first := true
	for i < len(pat) {
		c := pat[i]
		if c == ']' && !first {
			if s == "" || ch == '/' {
				return i + 1, false, true
			}
			return i + 1, matched != negate, true
		}
		first = false
		if c == '\\' && i+1 < len(pat) {
			i++
			c = pat[i]
		}
		lo, hi := c, c
		if i+2 < len(pat) && pat[i+1] == '-' && pat[i+2] != ']' {
			hi = pat[i+2]
			if hi == '\\' && i+3 < len(pat) {
				hi = pat[i+3]
				i++
			}
			i += 2
		}
		if lo <= ch && ch <= hi && s != "" {
			matched = true
		}
		i++
	}
	return 0, false, false
}

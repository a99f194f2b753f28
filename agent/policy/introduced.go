package policy

import "strings"

// Introduced returns the findings of after (a file's new content) that
// its old content did not already have: a construct the user's code had
// before the edit (an existing `import socket`) is the user's, and an edit
// elsewhere in the file must not be blocked for it. Findings are matched
// by rule, the text of their line and of the nearest non-blank line
// before it (trimmed), as a multiset: a finding shifted by lines added
// elsewhere is the same finding, while a second copy of an existing
// construct, or an existing line moved somewhere else (an exit call moved
// from main() to module level), is a new one. A finding without a line is
// matched by rule and message. before is nil for a new file: every finding
// is new.
func Introduced(before, after []byte, old, cur Findings) Findings {
	if before == nil || len(old) == 0 {
		return cur
	}
	key := func(src []byte, f Finding) string {
		if f.Line <= 0 {
			return f.Rule + "\x00" + f.Message
		}
		return f.Rule + "\x00" + lineText(src, f.Line) + "\x00" + prevText(src, f.Line)
	}
	had := map[string]int{}
	for _, f := range old {
		had[key(before, f)]++
	}
	var out Findings
	for _, f := range cur {
		k := key(after, f)
		if had[k] > 0 {
			had[k]--
			continue
		}
		out = append(out, f)
	}
	return out
}

// lineText is the trimmed text of a 1-based line of src.
func lineText(src []byte, n int) string {
	s := string(src)
	for i := 1; i < n; i++ {
		j := strings.IndexByte(s, '\n')
		if j < 0 {
			return ""
		}
		s = s[j+1:]
	}
	if j := strings.IndexByte(s, '\n'); j >= 0 {
		s = s[:j]
	}
	return strings.TrimSpace(s)
}

// prevText is the trimmed text of the nearest non-blank line before the
// 1-based line n of src, or "" at the top.
func prevText(src []byte, n int) string {
	for i := n - 1; i >= 1; i-- {
		if t := lineText(src, i); t != "" {
			return t
		}
	}
	return ""
}

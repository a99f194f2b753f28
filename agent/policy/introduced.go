package policy

import "strings"

// Introduced returns the findings of after (a file's new content) that
// its old content did not already have: a construct the user's code had
// before the edit (an existing `import socket`) is the user's, and an edit
// elsewhere in the file must not be blocked for it. Findings are matched
// by rule, the text of their line and of the nearest non-blank line
// before it (trimmed), or else after it, as a multiset: a finding shifted by lines added
// elsewhere is the same finding, while a second copy of an existing
// construct, or an existing line moved somewhere else (an exit call moved
// from main() to module level), is a new one. A finding without a line is
// matched by rule and message. before is nil for a new file: every finding
// is new.
//
// One more pairing: an existing construct edited in place. A finding left
// unmatched whose line is new (its text is nowhere in before) is the
// user's when an unmatched finding of the same rule sat on a line the
// edit removed (its text is nowhere in after) within rewriteWindow lines
// of it: the line holding `unsafe {` rewritten around the same block.
// Each old finding pairs once, so the count of a rule's constructs never
// grows unblocked; what it allows is what editing the body of an existing
// multi-line block already allowed.
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
	had := map[string][]int{} // key -> indexes into old, unmatched
	for i, f := range old {
		k := key(before, f)
		had[k] = append(had[k], i)
	}
	var first Findings
	for _, f := range cur {
		k := key(after, f)
		if idx := had[k]; len(idx) > 0 {
			had[k] = idx[1:]
			continue
		}
		first = append(first, f)
	}
	if len(first) == 0 {
		return nil
	}
	// Second pass: the same line whose line before changed but whose line
	// after did not is the same construct too (an import kept when the
	// import above it was removed: golang/term's fix dropped "io" above
	// an existing "syscall"). A line moved elsewhere changes both.
	next := func(src []byte, f Finding) string {
		return f.Rule + "\x00" + lineText(src, f.Line) + "\x00" + nextText(src, f.Line)
	}
	hadNext := map[string][]int{}
	for _, idx := range had {
		for _, i := range idx {
			if old[i].Line > 0 {
				k := next(before, old[i])
				hadNext[k] = append(hadNext[k], i)
			}
		}
	}
	used := map[int]bool{}
	var unmatched Findings
	for _, f := range first {
		if f.Line > 0 {
			k := next(after, f)
			if idx := hadNext[k]; len(idx) > 0 {
				hadNext[k] = idx[1:]
				used[idx[0]] = true
				continue
			}
		}
		unmatched = append(unmatched, f)
	}
	if len(unmatched) == 0 {
		return nil
	}
	var spare []Finding // old findings no new one matched
	for _, idx := range had {
		for _, i := range idx {
			if !used[i] {
				spare = append(spare, old[i])
			}
		}
	}
	beforeLines, afterLines := lineSet(before), lineSet(after)
	var out Findings
	for _, f := range unmatched {
		paired := -1
		if f.Line > 0 && !beforeLines[lineText(after, f.Line)] {
			for j, g := range spare {
				if g.Rule == f.Rule && g.Line > 0 && !afterLines[lineText(before, g.Line)] && abs(g.Line-f.Line) <= rewriteWindow {
					paired = j
					break
				}
			}
		}
		if paired < 0 {
			out = append(out, f)
			continue
		}
		spare = append(spare[:paired], spare[paired+1:]...)
	}
	return out
}

// rewriteWindow is how far (in lines) an edited-in-place construct may be
// from where it was (see Introduced).
const rewriteWindow = 10

// lineSet is the set of src's trimmed lines.
func lineSet(src []byte) map[string]bool {
	set := map[string]bool{}
	for _, l := range strings.Split(string(src), "\n") {
		set[strings.TrimSpace(l)] = true
	}
	return set
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
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

// nextText is the trimmed text of the nearest non-blank line after the
// 1-based line n of src, or "" at the end.
func nextText(src []byte, n int) string {
	lines := strings.Count(string(src), "\n") + 1
	for i := n + 1; i <= lines; i++ {
		if t := lineText(src, i); t != "" {
			return t
		}
	}
	return ""
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

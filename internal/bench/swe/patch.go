package swe

import (
	"fmt"
	"strconv"
	"strings"
)

// FilePatch is one file of a unified diff (git's format).
type FilePatch struct {
	Old, New string // paths without a/ b/; "" for /dev/null
	// Mode is git's mode of the file after the patch when its header
	// gives one ("new file mode", "new mode"): 100644, 100755 (an
	// executable), 120000 (a symbolic link, whose text is its target).
	Mode  string
	Hunks []Hunk
}

// Path is the file the patch edits (its new path, or the old one for a
// deletion).
func (f FilePatch) Path() string {
	if f.New != "" {
		return f.New
	}
	return f.Old
}

// Hunk is one @@ section: the lines before (context and removed) and
// after (context and added) the change, at OldStart/NewStart (1-based).
type Hunk struct {
	OldStart, NewStart int
	Old, New           []string // lines without their newline
	// Removed are the lines the hunk deletes or replaces; Around, for a
	// hunk that only adds, the context lines on either side of the
	// insertion. Together they are the code a model must see to make it.
	Removed, Around []string
	// Groups are the hunk's change groups (runs of removed and added lines
	// between context lines), each as the old lines a model must see to
	// make it: the context line before it, the lines it removes, the
	// context line after it (those the hunk has). Each group is contiguous
	// in the old file: it pins the place of the edit, not only its lines.
	Groups [][]string
	// OldNoEOL and NewNoEOL say that the hunk ends its side's file and that
	// file has no final newline ("\ No newline at end of file" after the
	// side's last line).
	OldNoEOL, NewNoEOL bool
}

// ParsePatch reads a unified diff. It accepts git's headers (diff --git,
// index, mode lines) and plain ---/+++ pairs; binary patches are an error.
func ParsePatch(text string) ([]FilePatch, error) {
	var out []FilePatch
	lines := strings.Split(text, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	var cur *FilePatch
	mode := "" // the mode line of the file whose header is being read
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		switch {
		case strings.HasPrefix(l, "diff --git "):
			cur, mode = nil, ""
		case cur == nil && (strings.HasPrefix(l, "new file mode ") || strings.HasPrefix(l, "new mode ")):
			mode = strings.TrimSpace(l[strings.LastIndexByte(l, ' ')+1:])
		case strings.HasPrefix(l, "Binary files ") || strings.HasPrefix(l, "GIT binary patch"):
			return nil, fmt.Errorf("line %d: binary patches are not supported", i+1)
		case strings.HasPrefix(l, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
			out = append(out, FilePatch{Old: patchPath(l[4:]), New: patchPath(lines[i+1][4:]), Mode: mode})
			cur = &out[len(out)-1]
			i++
		case strings.HasPrefix(l, "@@ "):
			if cur == nil {
				return nil, fmt.Errorf("line %d: hunk before a file header", i+1)
			}
			h, n, err := readHunk(lines, i)
			if err != nil {
				return nil, err
			}
			cur.Hunks = append(cur.Hunks, h)
			i = n - 1
		}
	}
	return out, nil
}

func patchPath(s string) string {
	if i := strings.IndexByte(s, '\t'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSpace(s)
	if s == "/dev/null" {
		return ""
	}
	if strings.HasPrefix(s, "a/") || strings.HasPrefix(s, "b/") {
		return s[2:]
	}
	return s
}

// readHunk reads the hunk whose header is lines[i]; it returns the index
// after its last line.
func readHunk(lines []string, i int) (Hunk, int, error) {
	var h Hunk
	hdr := lines[i]
	end := strings.Index(hdr[3:], " @@")
	if end < 0 {
		return h, 0, fmt.Errorf("line %d: bad hunk header %q", i+1, hdr)
	}
	parts := strings.Fields(hdr[3 : 3+end])
	if len(parts) != 2 {
		return h, 0, fmt.Errorf("line %d: bad hunk header %q", i+1, hdr)
	}
	var oldN, newN int
	var err error
	if h.OldStart, oldN, err = hunkRange(parts[0], '-'); err != nil {
		return h, 0, fmt.Errorf("line %d: %w", i+1, err)
	}
	if h.NewStart, newN, err = hunkRange(parts[1], '+'); err != nil {
		return h, 0, fmt.Errorf("line %d: %w", i+1, err)
	}
	j := i + 1
	var prev byte     // the kind of the last line read: ' ', '-' or '+'
	noEOL := func() { // a "\ No newline at end of file" marker after prev
		switch prev {
		case '-':
			h.OldNoEOL = true
		case '+':
			h.NewNoEOL = true
		case ' ':
			h.OldNoEOL, h.NewNoEOL = true, true
		}
	}
	lastCtx, added := "", false
	var group []string // the removed lines of the open change group
	open, before := false, ""
	closeGroup := func(after *string) {
		if !open {
			return
		}
		var g []string
		if before != "" {
			g = append(g, before)
		}
		g = append(g, group...)
		if after != nil {
			g = append(g, *after)
		}
		if len(g) > 0 {
			h.Groups = append(h.Groups, g)
		}
		group, open = nil, false
	}
	startGroup := func() {
		if !open {
			open, before, group = true, lastCtx, nil
		}
	}
	for ; j < len(lines) && (oldN > 0 || newN > 0); j++ {
		l := lines[j]
		if l == "" { // a context line whose space was stripped
			l = " "
		}
		switch l[0] {
		case ' ':
			ctx := l[1:]
			closeGroup(&ctx)
			h.Old, h.New = append(h.Old, l[1:]), append(h.New, l[1:])
			oldN, newN = oldN-1, newN-1
			if added {
				h.Around, added = append(h.Around, l[1:]), false
			}
			lastCtx = l[1:]
		case '-':
			startGroup()
			group = append(group, l[1:])
			h.Old = append(h.Old, l[1:])
			h.Removed = append(h.Removed, l[1:])
			oldN--
		case '+':
			startGroup()
			h.New = append(h.New, l[1:])
			newN--
			if !added && lastCtx != "" {
				h.Around = append(h.Around, lastCtx)
			}
			added = true
		case '\\': // "\ No newline at end of file"
			noEOL()
			continue
		default:
			return h, 0, fmt.Errorf("line %d: unexpected %q inside a hunk", j+1, l)
		}
		prev = l[0]
	}
	closeGroup(nil)
	for j < len(lines) && strings.HasPrefix(lines[j], "\\") {
		noEOL()
		j++
	}
	if oldN != 0 || newN != 0 {
		return h, 0, fmt.Errorf("line %d: hunk shorter than its header says", i+1)
	}
	return h, j, nil
}

func hunkRange(s string, sign byte) (start, n int, err error) {
	if s == "" || s[0] != sign {
		return 0, 0, fmt.Errorf("bad hunk range %q", s)
	}
	s = s[1:]
	n = 1
	if a, b, ok := strings.Cut(s, ","); ok {
		if n, err = strconv.Atoi(b); err != nil {
			return 0, 0, fmt.Errorf("bad hunk range %q", s)
		}
		s = a
	}
	if start, err = strconv.Atoi(s); err != nil {
		return 0, 0, fmt.Errorf("bad hunk range %q", s)
	}
	return start, n, nil
}

// Apply applies the hunks of f to content (the file's text before; "" for
// a new file) and returns the text after. Hunks are found at their line
// number, or else where their old lines occur. The text after ends with a
// newline when the text before did, unless a hunk at the end of the file
// says otherwise ("\ No newline at end of file").
func (f FilePatch) Apply(content string) (string, error) {
	lines := splitKeep(content)
	eol := content == "" || strings.HasSuffix(content, "\n")
	offset := 0
	for k, h := range f.Hunks {
		if h.OldNoEOL || h.NewNoEOL {
			eol = !h.NewNoEOL
		}
		at := h.OldStart - 1 + offset
		if len(h.Old) == 0 { // pure insertion: OldStart is the line before
			at = h.OldStart + offset
		}
		if !matchAt(lines, at, h.Old) {
			at = find(lines, h.Old)
			if at < 0 {
				return "", fmt.Errorf("%s: hunk %d does not apply", f.Path(), k+1)
			}
		}
		repl := make([]string, len(h.New))
		copy(repl, h.New)
		lines = append(lines[:at], append(repl, lines[at+len(h.Old):]...)...)
		offset += len(h.New) - len(h.Old)
	}
	if len(lines) == 0 {
		return "", nil
	}
	if !eol {
		return strings.Join(lines, "\n"), nil
	}
	return strings.Join(lines, "\n") + "\n", nil
}

func splitKeep(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}

func matchAt(lines []string, at int, want []string) bool {
	if at < 0 || at+len(want) > len(lines) {
		return false
	}
	for i, w := range want {
		if lines[at+i] != w {
			return false
		}
	}
	return true
}

func find(lines, want []string) int {
	if len(want) == 0 {
		return -1
	}
	for i := range lines {
		if matchAt(lines, i, want) {
			return i
		}
	}
	return -1
}

// Edits turns f into SEARCH/REPLACE blocks of fixpoint's edit format that
// change before into the patched text: one block per hunk, its SEARCH
// grown with surrounding lines until it is unique in the file. A new file
// is one block with an empty SEARCH.
//
// A block's text is whole lines, each with its newline, so a block must not
// end at the last line of a file that has no final newline: its SEARCH
// would not occur in the file. Such a block drops the unchanged lines at its
// end (growing upwards instead to stay unique); an edit of that last line
// itself is an error.
func (f FilePatch) Edits(before string) (string, error) {
	after, err := f.Apply(before)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	if before == "" {
		fmt.Fprintf(&b, "%s\n<<<<<<< SEARCH\n=======\n%s>>>>>>> REPLACE\n", f.Path(), after)
		return b.String(), nil
	}
	offset := 0
	cur := splitKeep(before)
	for k, h := range f.Hunks {
		at := h.OldStart - 1 + offset
		if len(h.Old) == 0 {
			at = h.OldStart + offset
		}
		if !matchAt(cur, at, h.Old) {
			if at = find(cur, h.Old); at < 0 {
				return "", fmt.Errorf("%s: hunk %d does not apply", f.Path(), k+1)
			}
		}
		// Grow the block until its SEARCH text is unique in the current file.
		lo, hi := at, at+len(h.Old)
		for (hi == lo || count(cur, cur[lo:hi]) != 1) && (lo > 0 || hi < len(cur)) {
			if lo > 0 {
				lo--
			}
			if hi < len(cur) {
				hi++
			}
		}
		repl := append(append(append([]string{}, cur[lo:at]...), h.New...), cur[at+len(h.Old):hi]...)
		if !strings.HasSuffix(before, "\n") && hi == len(cur) {
			// Drop the unchanged last lines, then grow upwards only.
			for hi-lo > 1 && len(repl) > 1 && cur[hi-1] == repl[len(repl)-1] {
				hi, repl = hi-1, repl[:len(repl)-1]
			}
			for count(cur, cur[lo:hi]) != 1 && lo > 0 {
				lo--
				repl = append([]string{cur[lo]}, repl...)
			}
			if hi == len(cur) {
				return "", fmt.Errorf("%s: hunk %d edits the last line of a file with no final newline, which a SEARCH/REPLACE block cannot match", f.Path(), k+1)
			}
		}
		search := cur[lo:hi]
		fmt.Fprintf(&b, "%s\n<<<<<<< SEARCH\n%s=======\n%s>>>>>>> REPLACE\n", f.Path(), joinLines(search), joinLines(repl))
		cur = append(append(append([]string{}, cur[:lo]...), repl...), cur[hi:]...)
		offset += len(h.New) - len(h.Old)
	}
	return b.String(), nil
}

func count(lines, want []string) int {
	n := 0
	for i := range lines {
		if matchAt(lines, i, want) {
			n++
		}
	}
	return n
}

func joinLines(l []string) string {
	if len(l) == 0 {
		return ""
	}
	return strings.Join(l, "\n") + "\n"
}

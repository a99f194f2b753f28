package edit

import (
	"fmt"
	"strings"
)

// Hunk replaces lines [StartLine, EndLine) of the old text (0-based) with
// NewLines. Each new line includes its terminator, except possibly the
// text's last line; StartLine == EndLine is an insertion before StartLine.
// For an LSP TextEdit the range is StartLine:0 to EndLine:0 and the new
// text strings.Join(NewLines, "").
type Hunk struct {
	StartLine int
	EndLine   int
	NewLines  []string
}

// LineEdits returns the minimal line hunks turning before into after, in
// order and non-overlapping.
func LineEdits(before, after []byte) []Hunk {
	a, b := splitKeep(string(before)), splitKeep(string(after))
	var out []Hunk
	ops := diffLines(a, b)
	for i := 0; i < len(ops); {
		if ops[i].kind == opEqual {
			i++
			continue
		}
		h := Hunk{StartLine: ops[i].a, EndLine: ops[i].a}
		for ; i < len(ops) && ops[i].kind != opEqual; i++ {
			switch ops[i].kind {
			case opDelete:
				h.EndLine = ops[i].a + 1
			case opInsert:
				h.NewLines = append(h.NewLines, b[ops[i].b])
			}
		}
		out = append(out, h)
	}
	return out
}

// Diff returns a unified diff (3 lines of context) of one file, "" when
// nothing changed. A nil or empty before is shown as a new file.
func Diff(path string, before, after []byte) string {
	if string(before) == string(after) {
		return ""
	}
	a, b := splitKeep(string(before)), splitKeep(string(after))
	ops := diffLines(a, b)
	var sb strings.Builder
	from, to := "a/"+path, "b/"+path
	if len(before) == 0 {
		from = "/dev/null"
	}
	if len(after) == 0 {
		to = "/dev/null"
	}
	fmt.Fprintf(&sb, "--- %s\n+++ %s\n", from, to)
	const ctx = 3
	for i := 0; i < len(ops); {
		if ops[i].kind == opEqual {
			i++
			continue
		}
		// Extend the hunk while changes are within 2*ctx equal lines.
		start := max(0, i-ctx)
		end := i
		for end < len(ops) {
			if ops[end].kind != opEqual {
				end++
				continue
			}
			run := end
			for run < len(ops) && ops[run].kind == opEqual {
				run++
			}
			if run == len(ops) || run-end > 2*ctx {
				end = min(len(ops), end+ctx)
				break
			}
			end = run
		}
		writeHunk(&sb, ops[start:end], a, b)
		i = end
	}
	return sb.String()
}

func writeHunk(sb *strings.Builder, ops []op, a, b []string) {
	var na, nb int
	aStart, bStart := -1, -1
	for _, o := range ops {
		if o.kind != opInsert {
			na++
			if aStart < 0 {
				aStart = o.a
			}
		}
		if o.kind != opDelete {
			nb++
			if bStart < 0 {
				bStart = o.b
			}
		}
	}
	// A side with no lines names the line before the hunk.
	if aStart < 0 {
		aStart = ops[0].a - 1
	}
	if bStart < 0 {
		bStart = ops[0].b - 1
	}
	fmt.Fprintf(sb, "@@ -%s +%s @@\n", rangeOf(aStart, na), rangeOf(bStart, nb))
	for _, o := range ops {
		var prefix, line string
		switch o.kind {
		case opEqual:
			prefix, line = " ", a[o.a]
		case opDelete:
			prefix, line = "-", a[o.a]
		case opInsert:
			prefix, line = "+", b[o.b]
		}
		sb.WriteString(prefix)
		sb.WriteString(line)
		if !strings.HasSuffix(line, "\n") {
			sb.WriteString("\n\\ No newline at end of file\n")
		}
	}
}

func rangeOf(start, n int) string {
	if n == 0 {
		return fmt.Sprintf("%d,0", start+1)
	}
	return fmt.Sprintf("%d,%d", start+1, n)
}

// splitKeep splits s into lines that keep their "\n".
func splitKeep(s string) []string {
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}

type opKind uint8

const (
	opEqual opKind = iota
	opDelete
	opInsert
)

// op is one line of an edit script: a is the index in the old lines (for
// an insert: the old line it goes before), b the index in the new lines
// (for a delete: the new line it comes before).
type op struct {
	kind opKind
	a, b int
}

// maxEditDistance bounds the Myers search; beyond it the changed middle is
// reported as one replacement (correct, not minimal).
const maxEditDistance = 2000

// diffLines is Myers' O(ND) diff after trimming the common prefix and
// suffix.
func diffLines(a, b []string) []op {
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	var ops []op
	for i := 0; i < pre; i++ {
		ops = append(ops, op{opEqual, i, i})
	}
	ma, mb := a[pre:len(a)-suf], b[pre:len(b)-suf]
	for _, o := range myers(ma, mb) {
		ops = append(ops, op{o.kind, o.a + pre, o.b + pre})
	}
	for i := 0; i < suf; i++ {
		ops = append(ops, op{opEqual, len(a) - suf + i, len(b) - suf + i})
	}
	return ops
}

func myers(a, b []string) []op {
	n, m := len(a), len(b)
	if n == 0 || m == 0 {
		return replaceAll(n, m)
	}
	limit := min(n+m, maxEditDistance)
	off := limit + 1
	v := make([]int, 2*limit+3)
	var trace [][]int // trace[d] = v[k] for k in [-d-1, d+1] before step d
	found := false
	for d := 0; d <= limit && !found; d++ {
		snap := make([]int, 2*d+3)
		copy(snap, v[off-d-1:off+d+2])
		trace = append(trace, snap)
		for k := -d; k <= d; k += 2 {
			var x int
			if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
				x = v[off+k+1]
			} else {
				x = v[off+k-1] + 1
			}
			y := x - k
			for x < n && y < m && a[x] == b[y] {
				x, y = x+1, y+1
			}
			v[off+k] = x
			if x >= n && y >= m {
				found = true
				break
			}
		}
	}
	if !found {
		return replaceAll(n, m)
	}
	var rev []op
	x, y := n, m
	for d := len(trace) - 1; d >= 0; d-- {
		vd := trace[d]
		at := func(k int) int { return vd[k+d+1] }
		k := x - y
		var pk int
		if k == -d || (k != d && at(k-1) < at(k+1)) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := at(pk)
		py := px - pk
		if d == 0 {
			px, py = 0, 0
		}
		for x > px && y > py {
			x, y = x-1, y-1
			rev = append(rev, op{opEqual, x, y})
		}
		if d > 0 {
			if x == px {
				y--
				rev = append(rev, op{opInsert, x, y})
			} else {
				x--
				rev = append(rev, op{opDelete, x, y})
			}
		}
	}
	for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
		rev[i], rev[j] = rev[j], rev[i]
	}
	return rev
}

func replaceAll(n, m int) []op {
	ops := make([]op, 0, n+m)
	for i := 0; i < n; i++ {
		ops = append(ops, op{opDelete, i, 0})
	}
	for j := 0; j < m; j++ {
		ops = append(ops, op{opInsert, n, j})
	}
	return ops
}

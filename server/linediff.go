package server

import (
	"strings"

	"go.lsp.dev/protocol"
)

// hunk replaces old lines [start, end) with lines (each keeping its
// terminator, so CRLF and a missing final newline survive).
type hunk struct {
	start, end int
	lines      []string
}

// splitLines splits after each "\n"; the last element has no terminator
// and is omitted when empty.
func splitLines(s string) []string {
	if s == "" {
		return nil
	}
	out := strings.SplitAfter(s, "\n")
	if out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return out
}

// maxDiffCost bounds the Myers search; past it the changed middle becomes
// one hunk (still correct, only less minimal).
const maxDiffCost = 2000

// lineHunks returns a minimal list of line hunks turning before into
// after (Myers' O(ND) diff on whole lines, common prefix and suffix
// trimmed first).
func lineHunks(before, after string) []hunk {
	a, b := splitLines(before), splitLines(after)
	pre := 0
	for pre < len(a) && pre < len(b) && a[pre] == b[pre] {
		pre++
	}
	suf := 0
	for suf < len(a)-pre && suf < len(b)-pre && a[len(a)-1-suf] == b[len(b)-1-suf] {
		suf++
	}
	a, b = a[pre:len(a)-suf], b[pre:len(b)-suf]
	if len(a) == 0 && len(b) == 0 {
		return nil
	}
	ops, ok := myers(a, b)
	if !ok {
		return []hunk{{start: pre, end: pre + len(a), lines: b}}
	}
	// Group consecutive non-equal ops into hunks.
	var out []hunk
	i, j := 0, 0
	var cur *hunk
	flush := func() {
		if cur != nil {
			out = append(out, *cur)
			cur = nil
		}
	}
	for _, op := range ops {
		switch op {
		case '=':
			flush()
			i++
			j++
		case '-':
			if cur == nil {
				cur = &hunk{start: pre + i, end: pre + i}
			}
			cur.end++
			i++
		case '+':
			if cur == nil {
				cur = &hunk{start: pre + i, end: pre + i}
			}
			cur.lines = append(cur.lines, b[j])
			j++
		}
	}
	flush()
	return out
}

// myers returns the edit script ('=', '-', '+') from a to b, or false
// when it costs more than maxDiffCost.
func myers(a, b []string) ([]byte, bool) {
	n, m := len(a), len(b)
	max := n + m
	if max > maxDiffCost {
		max = maxDiffCost
	}
	off := max + 1
	v := make([]int, 2*max+3)
	var trace [][]int
	for d := 0; d <= max; d++ {
		snap := make([]int, len(v))
		copy(snap, v)
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
				x++
				y++
			}
			v[off+k] = x
			if x >= n && y >= m {
				return backtrack(trace, off, n, m, d, a, b), true
			}
		}
	}
	return nil, false
}

func backtrack(trace [][]int, off, x, y, d int, a, b []string) []byte {
	var ops []byte
	for ; d > 0; d-- {
		v := trace[d]
		k := x - y
		var pk int
		if k == -d || (k != d && v[off+k-1] < v[off+k+1]) {
			pk = k + 1
		} else {
			pk = k - 1
		}
		px := v[off+pk]
		py := px - pk
		for x > px && y > py {
			ops = append(ops, '=')
			x--
			y--
		}
		if x == px {
			ops = append(ops, '+')
		} else {
			ops = append(ops, '-')
		}
		x, y = px, py
	}
	for x > 0 && y > 0 {
		ops = append(ops, '=')
		x--
		y--
	}
	for i, j := 0, len(ops)-1; i < j; i, j = i+1, j-1 {
		ops[i], ops[j] = ops[j], ops[i]
	}
	return ops
}

// textEdits converts the hunks from before to after into LSP text edits
// on before, positions in UTF-16.
func textEdits(before, after string) []protocol.TextEdit {
	hs := lineHunks(before, after)
	if len(hs) == 0 {
		return []protocol.TextEdit{}
	}
	idx := newLineIndex(before)
	lines := splitLines(before)
	offs := make([]int, len(lines)+1)
	for i, l := range lines {
		offs[i+1] = offs[i] + len(l)
	}
	out := make([]protocol.TextEdit, 0, len(hs))
	for _, h := range hs {
		out = append(out, protocol.TextEdit{
			Range:   protocol.Range{Start: idx.position(offs[h.start]), End: idx.position(offs[h.end])},
			NewText: strings.Join(h.lines, ""),
		})
	}
	return out
}

// rebase applies our change (base → ours) on top of theirs (base →
// theirs, the user's edits during the run). It fails when any hunk of
// ours overlaps or touches a hunk of theirs.
func rebase(base, theirs, ours string) (string, bool) {
	if theirs == base {
		return ours, true
	}
	if ours == base {
		return theirs, true
	}
	th, oh := lineHunks(base, theirs), lineHunks(base, ours)
	for _, o := range oh {
		for _, t := range th {
			if o.start <= t.end && t.start <= o.end {
				return "", false
			}
		}
	}
	all := append(append([]hunk(nil), th...), oh...)
	// Hunks are disjoint and non-adjacent: apply in order of start.
	for i := 1; i < len(all); i++ {
		for j := i; j > 0 && all[j].start < all[j-1].start; j-- {
			all[j], all[j-1] = all[j-1], all[j]
		}
	}
	lines := splitLines(base)
	var b strings.Builder
	at := 0
	for _, h := range all {
		for ; at < h.start; at++ {
			b.WriteString(lines[at])
		}
		for _, l := range h.lines {
			b.WriteString(l)
		}
		at = h.end
	}
	for ; at < len(lines); at++ {
		b.WriteString(lines[at])
	}
	return b.String(), true
}

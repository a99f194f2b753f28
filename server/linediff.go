package server

import (
	"strings"

	"go.lsp.dev/protocol"

	"github.com/fixpoint-dev/fixpoint/agent/edit"
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

// lineHunks returns the minimal line hunks turning before into after
// (agent/edit.LineEdits, the diff the agent's own diffs use).
func lineHunks(before, after string) []hunk {
	hs := edit.LineEdits([]byte(before), []byte(after))
	out := make([]hunk, len(hs))
	for i, h := range hs {
		out[i] = hunk{start: h.StartLine, end: h.EndLine, lines: h.NewLines}
	}
	return out
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

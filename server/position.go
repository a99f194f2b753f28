package server

import (
	"sort"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"go.lsp.dev/protocol"
)

// lineIndex maps between byte offsets and LSP positions in one text.
//
// LSP positions count UTF-16 code units within a line (LSP 3.15 has no
// positionEncoding negotiation). Lines end at "\n", "\r\n" or a lone "\r";
// the terminator is not part of the line, so a character past the end of a
// line clamps to the line's end, never into its terminator.
type lineIndex struct {
	text   string
	starts []int // byte offset of the start of each line; starts[0] == 0
}

func newLineIndex(text string) *lineIndex {
	starts := make([]int, 1, len(text)/32+1)
	for i := 0; i < len(text); i++ {
		switch text[i] {
		case '\n':
			starts = append(starts, i+1)
		case '\r':
			if i+1 < len(text) && text[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		}
	}
	return &lineIndex{text: text, starts: starts}
}

// lines returns the number of lines (a text ending in "\n" has an empty last line).
func (x *lineIndex) lines() int { return len(x.starts) }

// lineEnd is the byte offset of the end of line l, before its terminator.
func (x *lineIndex) lineEnd(l int) int {
	end := len(x.text)
	if l+1 < len(x.starts) {
		end = x.starts[l+1]
		if end > 0 && x.text[end-1] == '\n' {
			end--
		}
		if end > x.starts[l] && x.text[end-1] == '\r' {
			end--
		}
	}
	return end
}

// offset converts a position to a byte offset. Positions past the end of a
// line clamp to the line's end; lines past the end clamp to the text's end.
// A character in the middle of a surrogate pair rounds down to the rune.
func (x *lineIndex) offset(p protocol.Position) int {
	l := int(p.Line)
	if l >= len(x.starts) {
		return len(x.text)
	}
	off, end := x.starts[l], x.lineEnd(l)
	want := int(p.Character)
	for units := 0; off < end; {
		r, size := utf8.DecodeRuneInString(x.text[off:end])
		n := utf16.RuneLen(r)
		if n < 0 { // invalid UTF-8 byte: one unit, as editors decoding it as U+FFFD do
			n = 1
		}
		if units+n > want {
			break
		}
		units += n
		off += size
	}
	return off
}

// position converts a byte offset to a position. Offsets inside a line
// terminator or a multi-byte rune round down.
func (x *lineIndex) position(off int) protocol.Position {
	if off < 0 {
		off = 0
	}
	if off > len(x.text) {
		off = len(x.text)
	}
	l := sort.SearchInts(x.starts, off+1) - 1
	start, end := x.starts[l], x.lineEnd(l)
	if off > end {
		off = end
	}
	units := 0
	for i := start; i < off; {
		r, size := utf8.DecodeRuneInString(x.text[i:end])
		if i+size > off {
			break
		}
		n := utf16.RuneLen(r)
		if n < 0 {
			n = 1
		}
		units += n
		i += size
	}
	return protocol.Position{Line: uint32(l), Character: uint32(units)}
}

// lineText returns line l without its terminator ("" when out of range).
func (x *lineIndex) lineText(l int) string {
	if l < 0 || l >= len(x.starts) {
		return ""
	}
	return x.text[x.starts[l]:x.lineEnd(l)]
}

// replace returns the index of the text with r replaced by ins. It
// rescans only the changed lines and shifts the line starts after them,
// so typing in a large file costs a copy, not a rescan.
func (x *lineIndex) replace(r protocol.Range, ins string) *lineIndex {
	start, end := x.offset(r.Start), x.offset(r.End)
	if end < start {
		start, end = end, start
	}
	text := x.text[:start] + ins + x.text[end:]
	delta := len(ins) - (end - start)
	newEnd := end + delta
	l1 := sort.SearchInts(x.starts, start+1) - 1
	l2 := sort.SearchInts(x.starts, end+1) - 1
	if l1 > 0 {
		l1-- // a "\r" ending the previous line may join an inserted "\n"
	}
	starts := make([]int, l1+1, len(x.starts)+strings.Count(ins, "\n")+1)
	copy(starts, x.starts[:l1+1])
	i := starts[l1]
	for ; i < len(text); i++ {
		c := text[i]
		if c != '\n' && c != '\r' {
			continue
		}
		if c == '\r' && i+1 < len(text) && text[i+1] == '\n' {
			i++
		}
		starts = append(starts, i+1)
		if i+1 > newEnd {
			break
		}
	}
	if i < len(text) && l2+2 <= len(x.starts) {
		for _, s := range x.starts[l2+2:] {
			starts = append(starts, s+delta)
		}
	}
	return &lineIndex{text: text, starts: starts}
}

package server

import (
	"sort"
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

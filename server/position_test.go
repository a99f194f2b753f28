package server

import (
	"testing"

	"go.lsp.dev/protocol"
)

func pos(l, c uint32) protocol.Position { return protocol.Position{Line: l, Character: c} }

func TestLineIndexRoundTrip(t *testing.T) {
	tests := []struct {
		name   string
		text   string
		offset int
		pos    protocol.Position
	}{
		{name: "start", text: "abc", offset: 0, pos: pos(0, 0)},
		{name: "ascii", text: "abc\ndef", offset: 5, pos: pos(1, 1)},
		{name: "end without newline", text: "abc\ndef", offset: 7, pos: pos(1, 3)},
		{name: "after final newline", text: "abc\n", offset: 4, pos: pos(1, 0)},
		{name: "emoji is two units", text: "a😀b", offset: 5, pos: pos(0, 3)},
		{name: "before emoji", text: "a😀b", offset: 1, pos: pos(0, 1)},
		{name: "cjk one unit each", text: "日本語x", offset: 6, pos: pos(0, 2)},
		{name: "cjk end", text: "日本語x", offset: 10, pos: pos(0, 4)},
		{name: "crlf second line", text: "ab\r\ncd", offset: 5, pos: pos(1, 1)},
		{name: "crlf end of first line", text: "ab\r\ncd", offset: 2, pos: pos(0, 2)},
		{name: "lone cr", text: "ab\rcd", offset: 4, pos: pos(1, 1)},
		{name: "emoji after crlf", text: "x\r\n👍🏽z", offset: 11, pos: pos(1, 4)},
		{name: "combining mark", text: "e\u0301x", offset: 3, pos: pos(0, 2)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			idx := newLineIndex(tt.text)
			if got := idx.position(tt.offset); got != tt.pos {
				t.Errorf("position(%d) in %q = %v, want %v", tt.offset, tt.text, got, tt.pos)
			}
			if got := idx.offset(tt.pos); got != tt.offset {
				t.Errorf("offset(%v) in %q = %d, want %d", tt.pos, tt.text, got, tt.offset)
			}
		})
	}
}

func TestLineIndexClamps(t *testing.T) {
	tests := []struct {
		name string
		text string
		pos  protocol.Position
		want int
	}{
		{name: "past line end stops before newline", text: "ab\ncd", pos: pos(0, 99), want: 2},
		{name: "past line end stops before crlf", text: "ab\r\ncd", pos: pos(0, 99), want: 2},
		{name: "past last line", text: "ab\ncd", pos: pos(9, 0), want: 5},
		{name: "inside surrogate pair rounds down", text: "a😀b", pos: pos(0, 2), want: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := newLineIndex(tt.text).offset(tt.pos); got != tt.want {
				t.Errorf("offset(%v) in %q = %d, want %d", tt.pos, tt.text, got, tt.want)
			}
		})
	}
}

func rng(l1, c1, l2, c2 uint32) protocol.Range {
	return protocol.Range{Start: pos(l1, c1), End: pos(l2, c2)}
}

func TestApplyChanges(t *testing.T) {
	tests := []struct {
		name    string
		text    string
		changes []change
		want    string
	}{
		{name: "full replace", text: "old", changes: []change{{Full: true, Text: "new"}}, want: "new"},
		{name: "insert at top is not a full replace", text: "abc", changes: []change{{Range: rng(0, 0, 0, 0), Text: "X"}}, want: "Xabc"},
		{name: "replace after emoji", text: "a😀b\n", changes: []change{{Range: rng(0, 3, 0, 4), Text: "c"}}, want: "a😀c\n"},
		{name: "delete emoji", text: "a😀b", changes: []change{{Range: rng(0, 1, 0, 3), Text: ""}}, want: "ab"},
		{name: "cjk", text: "日本語", changes: []change{{Range: rng(0, 1, 0, 2), Text: "x"}}, want: "日x語"},
		{name: "join crlf lines", text: "ab\r\ncd\r\n", changes: []change{{Range: rng(0, 2, 1, 0), Text: ""}}, want: "abcd\r\n"},
		{name: "sequential changes see earlier ones", text: "abc", changes: []change{
			{Range: rng(0, 0, 0, 0), Text: "1\n"},
			{Range: rng(1, 0, 1, 1), Text: "A"},
		}, want: "1\nAbc"},
		{name: "insert new line in the middle", text: "a\nb\n", changes: []change{{Range: rng(1, 0, 1, 0), Text: "x\n"}}, want: "a\nx\nb\n"},
		{name: "append at end", text: "a", changes: []change{{Range: rng(0, 1, 0, 1), Text: "\nb"}}, want: "a\nb"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := applyChanges(tt.text, tt.changes); got != tt.want {
				t.Errorf("applyChanges(%q) = %q, want %q", tt.text, got, tt.want)
			}
		})
	}
}

func TestChangeDecodesFullVersusRanged(t *testing.T) {
	tests := []struct {
		json string
		full bool
	}{
		{json: `{"text":"x"}`, full: true},
		{json: `{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}},"text":"x"}`, full: false},
		{json: `{"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}},"rangeLength":0,"text":"x"}`, full: false},
	}
	for _, tt := range tests {
		var c change
		if err := c.UnmarshalJSON([]byte(tt.json)); err != nil {
			t.Fatalf("UnmarshalJSON(%s): %v", tt.json, err)
		}
		if c.Full != tt.full {
			t.Errorf("UnmarshalJSON(%s).Full = %v, want %v", tt.json, c.Full, tt.full)
		}
	}
}

func TestURIPath(t *testing.T) {
	tests := []struct{ uri, want string }{
		{"file:///tmp/a%20b/c.go", "/tmp/a b/c.go"},
		{"file:///tmp/x/../y.go", "/tmp/y.go"},
		{"untitled:Untitled-1", ""},
		{"git:/tmp/x.go?ref", ""},
		{"::bad", ""},
	}
	for _, tt := range tests {
		if got := uriPath(tt.uri); got != tt.want {
			t.Errorf("uriPath(%q) = %q, want %q", tt.uri, got, tt.want)
		}
	}
	if got := uriPath(fileURI("/tmp/a b/ü.go")); got != "/tmp/a b/ü.go" {
		t.Errorf("uriPath(fileURI(x)) = %q", got)
	}
}

// FuzzApplyChanges checks that incremental sync never panics and that an
// offset→position→offset round trip is stable on arbitrary text.
func FuzzApplyChanges(f *testing.F) {
	f.Add("a😀b\r\n日本\n", uint32(0), uint32(2), uint32(1), uint32(1), "x")
	f.Add("", uint32(5), uint32(5), uint32(5), uint32(5), "\r\n")
	f.Fuzz(func(t *testing.T, text string, l1, c1, l2, c2 uint32, ins string) {
		idx := newLineIndex(text)
		for off := 0; off <= len(text); off++ {
			p := idx.position(off)
			back := idx.offset(p)
			if back > off {
				t.Fatalf("offset(position(%d)) = %d > %d in %q", off, back, off, text)
			}
		}
		_ = applyChanges(text, []change{{Range: rng(l1%8, c1%16, l2%8, c2%16), Text: ins}})
	})
}

// FuzzReplace: the incremental line index after a change equals a full
// rescan of the new text, and the text equals applyChanges'.
func FuzzReplace(f *testing.F) {
	f.Add("a\n\nb", uint32(1), uint32(0), uint32(1), uint32(0), "x\r")
	f.Add("a\rb", uint32(1), uint32(0), uint32(1), uint32(0), "\n")
	f.Add("ab\r\ncd\r\n", uint32(0), uint32(2), uint32(1), uint32(0), "")
	f.Add("日本\n😀x\ny", uint32(1), uint32(1), uint32(2), uint32(1), "q\nr")
	f.Fuzz(func(t *testing.T, text string, l1, c1, l2, c2 uint32, ins string) {
		r := rng(l1%6, c1%8, l2%6, c2%8)
		got := newLineIndex(text).replace(r, ins)
		want := newLineIndex(applyChanges(text, []change{{Range: r, Text: ins}}))
		if got.text != want.text {
			t.Fatalf("replace text = %q, want %q", got.text, want.text)
		}
		if len(got.starts) != len(want.starts) {
			t.Fatalf("replace(%q, %v, %q) starts = %v, want %v", text, r, ins, got.starts, want.starts)
		}
		for i := range got.starts {
			if got.starts[i] != want.starts[i] {
				t.Fatalf("replace(%q, %v, %q) starts = %v, want %v", text, r, ins, got.starts, want.starts)
			}
		}
	})
}

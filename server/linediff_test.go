package server

import (
	"go.lsp.dev/protocol"

	"strings"
	"testing"
)

// applyHunks applies hunks to before, to check them.
func applyHunks(before string, hs []hunk) string {
	lines := splitLines(before)
	var b strings.Builder
	at := 0
	for _, h := range hs {
		for ; at < h.start; at++ {
			b.WriteString(lines[at])
		}
		b.WriteString(strings.Join(h.lines, ""))
		at = h.end
	}
	for ; at < len(lines); at++ {
		b.WriteString(lines[at])
	}
	return b.String()
}

func TestLineHunks(t *testing.T) {
	tests := []struct {
		name          string
		before, after string
		hunks         int
	}{
		{name: "same", before: "a\nb\n", after: "a\nb\n", hunks: 0},
		{name: "one line changed", before: "a\nb\nc\n", after: "a\nB\nc\n", hunks: 1},
		{name: "two separate changes", before: "a\nb\nc\nd\ne\n", after: "A\nb\nc\nd\nE\n", hunks: 2},
		{name: "insert", before: "a\nc\n", after: "a\nb\nc\n", hunks: 1},
		{name: "delete", before: "a\nb\nc\n", after: "a\nc\n", hunks: 1},
		{name: "no final newline", before: "a\nb", after: "a\nb\nc", hunks: 1},
		{name: "crlf", before: "a\r\nb\r\n", after: "a\r\nx\r\nb\r\n", hunks: 1},
		{name: "from empty", before: "", after: "x\n", hunks: 1},
		{name: "to empty", before: "x\n", after: "", hunks: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hs := lineHunks(tt.before, tt.after)
			if len(hs) != tt.hunks {
				t.Errorf("lineHunks(%q, %q) = %d hunks %+v, want %d", tt.before, tt.after, len(hs), hs, tt.hunks)
			}
			if got := applyHunks(tt.before, hs); got != tt.after {
				t.Errorf("applying lineHunks(%q, %q) gave %q", tt.before, tt.after, got)
			}
			if got := applyChanges(tt.before, editsAsChanges(textEdits(tt.before, tt.after))); got != tt.after {
				t.Errorf("applying textEdits(%q, %q) gave %q", tt.before, tt.after, got)
			}
		})
	}
}

// editsAsChanges applies LSP edits as a client does: all ranges refer to
// the original text, so apply them from the last to the first.
func editsAsChanges(edits []protocol.TextEdit) []change {
	out := make([]change, 0, len(edits))
	for i := len(edits) - 1; i >= 0; i-- {
		out = append(out, change{Range: edits[i].Range, Text: edits[i].NewText})
	}
	return out
}

func TestRebase(t *testing.T) {
	base := "package p\n\nfunc A() int { return 1 }\n\nfunc B() int { return 2 }\n\nfunc C() int { return 3 }\n"
	tests := []struct {
		name         string
		theirs, ours string
		want         string
		ok           bool
	}{
		{
			name:   "user edited elsewhere",
			theirs: strings.Replace(base, "return 3", "return 33", 1),
			ours:   strings.Replace(base, "return 1", "return 11", 1),
			want:   strings.Replace(strings.Replace(base, "return 3", "return 33", 1), "return 1", "return 11", 1),
			ok:     true,
		},
		{
			name:   "user inserted lines above",
			theirs: "// header\n// more\n" + base,
			ours:   strings.Replace(base, "return 3", "return 4", 1),
			want:   "// header\n// more\n" + strings.Replace(base, "return 3", "return 4", 1),
			ok:     true,
		},
		{
			name:   "same line",
			theirs: strings.Replace(base, "return 2", "return 22", 1),
			ours:   strings.Replace(base, "return 2", "return 20", 1),
			ok:     false,
		},
		{
			name:   "adjacent lines conflict",
			theirs: strings.Replace(base, "\nfunc B", "// B doc\nfunc B", 1),
			ours:   strings.Replace(base, "func B() int { return 2 }", "func B() int { return 20 }", 1),
			ok:     false,
		},
		{name: "user changed nothing", theirs: base, ours: base + "x\n", want: base + "x\n", ok: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := rebase(base, tt.theirs, tt.ours)
			if ok != tt.ok || (ok && got != tt.want) {
				t.Errorf("rebase = %q, %v; want %q, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

func TestLineHunksLarge(t *testing.T) {
	var a, b strings.Builder
	for i := 0; i < 3000; i++ {
		a.WriteString("a\n")
		b.WriteString("b\n")
	}
	hs := lineHunks(a.String(), b.String())
	if got := applyHunks(a.String(), hs); got != b.String() {
		t.Fatalf("large diff did not reproduce the target")
	}
}

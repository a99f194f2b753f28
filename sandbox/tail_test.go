package sandbox

import (
	"fmt"
	"strings"
	"testing"
)

// TestTailBuffer: only the last Max bytes are kept, whatever the writes'
// sizes, and LastLines gives the end of them by lines.
func TestTailBuffer(t *testing.T) {
	tb := &TailBuffer{Max: 64}
	for i := range 40 {
		fmt.Fprintf(tb, "line %02d\n", i)
	}
	if got := len(tb.buf); got != 64 {
		t.Fatalf("kept %d bytes, want 64", got)
	}
	if got, want := tb.LastLines(2), "line 38\nline 39"; got != want {
		t.Errorf("LastLines(2) = %q, want %q", got, want)
	}
	if got := tb.String(); !strings.HasSuffix(got, "line 39") || strings.Contains(got, "line 31\n") {
		t.Errorf("String() = %q, want the last 64 bytes trimmed", got)
	}
	big := &TailBuffer{}
	big.Write([]byte(strings.Repeat("x", 20<<10)))
	if len(big.buf) != 8<<10 {
		t.Errorf("default Max kept %d bytes, want 8 KiB", len(big.buf))
	}
}

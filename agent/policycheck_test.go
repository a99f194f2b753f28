package agent

import (
	"fmt"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/agent/edit"
)

func TestReplyTooBig(t *testing.T) {
	files := func(n, size int) map[string][]byte {
		m := map[string][]byte{}
		for i := range n {
			m[fmt.Sprintf("f%d.go", i)] = make([]byte, size)
		}
		return m
	}
	tests := []struct {
		name    string
		changes map[string][]byte
		refused bool
	}{
		{"small", files(3, 100), false},
		{"at the file cap", files(maxReplyFiles, 10), false},
		{"past the file cap", files(maxReplyFiles+1, 10), true},
		{"past the byte cap", files(2, maxReplyBytes/2+1), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fb := replyTooBig(tt.changes)
			if (fb != "") != tt.refused {
				t.Errorf("replyTooBig(%d files) = %q, want refused %v", len(tt.changes), fb, tt.refused)
			}
			if tt.refused && !strings.Contains(fb, "at most 1000 files and 32 MiB") {
				t.Errorf("feedback %q does not state the bounds", fb)
			}
		})
	}
}

// TestHugeReplyRefused: a reply creating more files than a reply may is
// refused before any check runs, the model is told why, and the run goes
// on to verify the next reply.
func TestHugeReplyRefused(t *testing.T) {
	var b strings.Builder
	for i := range maxReplyFiles + 1 {
		b.WriteString(edit.Format(fmt.Sprintf("gen/g%d.go", i), "", "package gen\n"))
	}
	m := goBugModel(b.String(), demo.GoBugFix)
	res, _ := runGoBug(t, m, nil)
	if !res.Verified {
		dumpLog(t, res)
		t.Fatalf("run not verified: %s", res.StopReason)
	}
	if len(m.calls) < 2 || !strings.Contains(m.calls[1], "one reply may change at most 1000 files") {
		t.Errorf("the second prompt does not say why the huge reply was refused:\n%s", m.calls[len(m.calls)-1])
	}
	for _, c := range res.Changes {
		if strings.HasPrefix(c.Path, "gen/") {
			t.Fatalf("a file of the refused reply is in the result: %s", c.Path)
		}
	}
}

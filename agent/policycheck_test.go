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

// TestMemoryDiffBounded: a failing attempt of hundreds of kilobytes is
// remembered with at most maxMemoryDiff bytes of its diff.
func TestMemoryDiffBounded(t *testing.T) {
	skipShort(t)
	big := "\t// " + strings.Repeat("padding ", 40<<10) + "\n\treturn s[0], nil\n"
	wrong := "stats/stats.go\n<<<<<<< SEARCH\n\treturn s[mid], nil\n=======\n" + big + ">>>>>>> REPLACE\n"
	m := goBugModel(wrong, strings.Replace(demo.GoBugFix, "\treturn s[mid], nil\n=======", big+"=======", 1))
	mem := &fakeMemory{}
	e := New(testConfig(t), &Options{Model: m, Backend: testBackend(t), Memory: mem})
	res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: copyTree(t, goBugDir)}, nil)
	if err != nil || !res.Verified {
		dumpLog(t, res)
		t.Fatalf("Run = %v, verified %v", err, res != nil && res.Verified)
	}
	if len(mem.added) < 2 {
		t.Fatalf("memory got %d records, want the baseline's and the big attempt's", len(mem.added))
	}
	attempt := mem.added[1].AttemptDiff
	if !strings.Contains(attempt, "padding") || len(attempt) > maxMemoryDiff+64 {
		t.Errorf("the big attempt is remembered with %d bytes of diff, want at most %d", len(attempt), maxMemoryDiff)
	}
	if len(mem.diff) > maxMemoryDiff+64 {
		t.Errorf("the resolution diff is remembered with %d bytes, want at most %d", len(mem.diff), maxMemoryDiff)
	}
}

package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent/demo"
)

// TestBenchContext: the context benchmark runs the real loop, plants a bug
// where asked, and reports one request per verified one-iteration run with
// the file to edit in its prompt.
func TestBenchContext(t *testing.T) {
	skipShort(t)
	// A correct project to plant a bug in: py-bug with its own bug fixed.
	fixed := copyTree(t, "testdata/py-bug")
	p := filepath.Join(fixed, "textkit", "chunks.py")
	src := strings.Replace(mustRead(t, p), "len(seq) - size + 1", "len(seq)", 1)
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []ContextCase{
		{Name: "go-bug", Source: goBugDir, File: "stats/stats.go", Fix: demo.GoBugFix},
		{Name: "planted", Source: fixed, File: "textkit/chunks.py",
			Old: "seq[i:i + size]", New: "seq[i:i + size - 1]"},
	}
	res, err := BenchContext(t.Context(), testConfig(t), testBackend(t), cases)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !r.Verified || len(r.Requests) != 1 || !r.InContext || !r.Whole || r.Total != r.Requests[0] || r.Total > 8000 {
			t.Errorf("%s: %+v; want verified in one request of at most 8000 bytes with the file whole", r.Case, r)
		}
	}
	cases[1].Old = "no such text\n"
	if _, err := BenchContext(t.Context(), testConfig(t), testBackend(t), cases[1:]); err == nil || !strings.Contains(err.Error(), "occurs 0 times") {
		t.Errorf("a plant that does not apply: err = %v", err)
	}
}

package recall

import (
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/memory"
)

// Floors for the local embedder on memory/memorytest/testdata/errors. Measured values are in
// the package README and docs/BENCHMARKS.md; these leave a small margin.
const (
	minRecall1 = 0.9
	minRecall3 = 0.95
)

func TestRetrievalQuality(t *testing.T) {
	for _, byLang := range []bool{true, false} {
		q, err := MeasureQuality(t.Context(), t.TempDir(), memory.Local(), byLang)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("language filter %v: %d pairs, %d distractors: recall@1 %.3f recall@3 %.3f, similarity right %.2f, best wrong %.2f", byLang, q.Pairs, q.Distractors, q.Recall1, q.Recall3, q.PairSimilarity, q.OtherSimilarity)
		for _, m := range q.Misses {
			t.Logf("miss: %s", m)
		}
		if q.Pairs < 60 {
			t.Errorf("corpus has %d pairs, want at least 60", q.Pairs)
		}
		if q.Recall1 < minRecall1 || q.Recall3 < minRecall3 {
			t.Errorf("recall@1 = %.3f, recall@3 = %.3f; want at least %.2f and %.2f", q.Recall1, q.Recall3, minRecall1, minRecall3)
		}
	}
}

// Run measures both qualities and the latency at 1k and 10k records, and
// the report shows them all (the numbers themselves vary with the machine).
func TestRunReport(t *testing.T) {
	if testing.Short() {
		t.Skip("fills stores of 1k and 10k records")
	}
	r, err := Run(t.Context(), t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !r.Quality.LanguageFiltered || r.QualityAnyLang.LanguageFiltered || len(r.Latency) != 2 || r.Latency[1].Records != 10000 {
		t.Errorf("Report = %+v, want both qualities and latency at 1k and 10k", r)
	}
	md := r.Markdown()
	for _, want := range []string{"embedder `local-v1-512`", "same language (as the loop recalls)", "| 1000 | ", "| 10000 | "} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown() lacks %q:\n%s", want, md)
		}
	}
}

package memory

import (
	"testing"
)

// Floors for the local embedder on testdata/errors. Measured values are in
// the package README and docs/BENCHMARKS.md; these leave a small margin.
const (
	minRecall1 = 0.9
	minRecall3 = 0.95
)

func TestRetrievalQuality(t *testing.T) {
	for _, byLang := range []bool{true, false} {
		q, err := MeasureQuality(t.Context(), t.TempDir(), Local(), byLang)
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

package memory

import (
	"fmt"
	"testing"

	"github.com/fixpoint-dev/fixpoint/memory/memorytest"
)

// fillStore returns a store under b's temp dir holding n synthetic records.
func fillStore(b *testing.B, n int) (*Store, string, string, []Record) {
	b.Helper()
	recs, err := syntheticRecords(n+1000, 7)
	if err != nil {
		b.Fatal(err)
	}
	data, root := b.TempDir(), b.TempDir()
	s, err := Open(b.Context(), data, &Options{Root: root, Cap: 10 * n})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := s.AddBatch(b.Context(), recs[:n]); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { s.Close() })
	return s, data, root, recs[n:]
}

func BenchmarkRecall(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			s, _, _, queries := fillStore(b, n)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				if _, err := s.Recall(b.Context(), queries[i%len(queries)].Signature, RecallOptions{K: 3}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkAdd(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			s, _, _, more := fillStore(b, n)
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				r := more[i%len(more)]
				r.ID = fmt.Sprintf("bench%d", i)
				if _, err := s.Add(b.Context(), r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkOpen(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			_, data, root, _ := fillStore(b, n)
			b.ResetTimer()
			for b.Loop() {
				s, err := Open(b.Context(), data, &Options{Root: root, Cap: 10 * n})
				if err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
		})
	}
}

func BenchmarkEmbedLocal(b *testing.B) {
	pairs, _, _ := memorytest.Corpus()
	sig := Signature(pairs[0].Language, pairs[0].Stored)
	for b.Loop() {
		embedLocal(sig)
	}
}

package memory

import (
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/fixpoint-dev/fixpoint/memory/memorytest"
)

// syntheticRecords (a copy of internal/bench/recall's) returns n records built from the corpus with
// identifiers and values changed, for latency measurements.
func syntheticRecords(n int, seed uint64) ([]Record, error) {
	pairs, distractors, err := memorytest.Corpus()
	if err != nil {
		return nil, err
	}
	all := append(pairs, distractors...)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	words := []string{"user", "order", "cache", "parse", "load", "store", "config", "token", "session", "queue", "worker", "index", "render", "route", "client"}
	recs := make([]Record, n)
	for i := range recs {
		p := all[r.IntN(len(all))]
		sig := Signature(p.Language, p.Stored)
		w1, w2 := words[r.IntN(len(words))], words[r.IntN(len(words))]
		sig += fmt.Sprintf("\nframes: %s%s%d < handle%s", w1, strings.ToUpper(w2[:1])+w2[1:], r.IntN(1000), strings.ToUpper(w1[:1])+w1[1:])
		recs[i] = Record{
			ID:        fmt.Sprintf("syn%09d", i),
			Language:  p.Language,
			TestID:    fmt.Sprintf("Test%s%d", strings.ToUpper(w1[:1])+w1[1:], i),
			Signature: sig,
			Excerpt:   p.Stored,
			Goal:      "make the tests pass",
		}
	}
	return recs, nil
}

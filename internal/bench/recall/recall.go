// Package recall is the failure-memory benchmark (`fixpoint bench
// memory`): retrieval quality of an embedder on the labelled corpus of
// memory/memorytest ([MeasureQuality]: recall@1 and @3) and the latency of
// Open, Recall and Add at a store size ([MeasureLatency]), together a
// [Report].
package recall

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"strings"
	"syscall"
	"time"

	"github.com/fixpoint-dev/fixpoint/memory"
	"github.com/fixpoint-dev/fixpoint/memory/memorytest"
)

// Quality is retrieval quality over the labelled corpus.
type Quality struct {
	Embedder    string
	Pairs       int
	Distractors int
	// LanguageFiltered is true when recall was restricted to the query's
	// language, as the agent loop does.
	LanguageFiltered bool
	Recall1, Recall3 float64
	// PairSimilarity is the mean similarity of the right record;
	// OtherSimilarity the mean similarity of the best wrong one. A recall
	// threshold belongs between the two.
	PairSimilarity, OtherSimilarity float64
	Misses                          []string // cases whose pair was not ranked first
}

// MeasureQuality stores every distractor and the stored side of every pair
// in a fresh store under dir, then recalls with each query's signature.
func MeasureQuality(ctx context.Context, dir string, emb memory.Embedder, byLanguage bool) (*Quality, error) {
	pairs, distractors, err := memorytest.Corpus()
	if err != nil {
		return nil, err
	}
	root := dir + "/quality-project"
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	s, err := memory.Open(ctx, dir+"/quality-data", &memory.Options{Root: root, Embedder: emb})
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if err := s.ForgetAll(ctx); err != nil {
		return nil, err
	}
	var recs []memory.Record
	for _, p := range append(append([]memorytest.Pair(nil), pairs...), distractors...) {
		recs = append(recs, memory.Record{ID: p.Case, Language: p.Language, Excerpt: p.Stored})
	}
	if _, err := s.AddBatch(ctx, recs); err != nil {
		return nil, err
	}
	q := &Quality{Embedder: emb.Name(), Pairs: len(pairs), Distractors: len(distractors), LanguageFiltered: byLanguage}
	hit1, hit3 := 0, 0
	var pairSim, otherSim float64
	for _, p := range pairs {
		opts := memory.RecallOptions{K: 3}
		if byLanguage {
			opts.Language = p.Language
		}
		ms, err := s.Recall(ctx, memory.Signature(p.Language, p.Query), opts)
		if err != nil {
			return nil, err
		}
		other := false
		for i, m := range ms {
			if m.ID == p.Case {
				if i == 0 {
					hit1++
				}
				hit3++
				pairSim += float64(m.Similarity)
			} else if !other {
				other = true
				otherSim += float64(m.Similarity)
			}
		}
		if len(ms) == 0 || ms[0].ID != p.Case {
			got := "nothing"
			if len(ms) > 0 {
				got = fmt.Sprintf("%s (%.2f)", ms[0].ID, ms[0].Similarity)
			}
			q.Misses = append(q.Misses, p.Case+" -> "+got)
		}
	}
	q.Recall1 = float64(hit1) / float64(len(pairs))
	q.Recall3 = float64(hit3) / float64(len(pairs))
	q.PairSimilarity = pairSim / float64(max(hit3, 1))
	q.OtherSimilarity = otherSim / float64(len(pairs))
	return q, nil
}

// syntheticRecords returns n records built from the corpus with
// identifiers and values changed, for latency measurements.
func syntheticRecords(n int, seed uint64) ([]memory.Record, error) {
	pairs, distractors, err := memorytest.Corpus()
	if err != nil {
		return nil, err
	}
	all := append(pairs, distractors...)
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	words := []string{"user", "order", "cache", "parse", "load", "store", "config", "token", "session", "queue", "worker", "index", "render", "route", "client"}
	recs := make([]memory.Record, n)
	for i := range recs {
		p := all[r.IntN(len(all))]
		sig := memory.Signature(p.Language, p.Stored)
		w1, w2 := words[r.IntN(len(words))], words[r.IntN(len(words))]
		sig += fmt.Sprintf("\nframes: %s%s%d < handle%s", w1, strings.ToUpper(w2[:1])+w2[1:], r.IntN(1000), strings.ToUpper(w1[:1])+w1[1:])
		recs[i] = memory.Record{
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

// Latency is measured at one store size. Wall times depend on the load
// of the machine; CPU times (user+system of the whole process, all
// threads) much less so.
type Latency struct {
	Records         int
	Query, QueryCPU time.Duration // mean Recall (K=3), store warm
	// QueryLang is Recall restricted to the query's language, as the loop
	// calls it (the synthetic records are about a third per language).
	QueryLang, QueryLangCPU time.Duration
	Insert, InsertCPU       time.Duration // mean Add, fsync included
	Open, OpenCPU           time.Duration // Open at this size: journal replay, embedding, index
}

// cpuTime returns the process's user+system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// MeasureLatency fills a store under dir with n synthetic records and
// measures Open, Recall and Add.
func MeasureLatency(ctx context.Context, dir string, n int) (*Latency, error) {
	recs, err := syntheticRecords(n+200, uint64(n))
	if err != nil {
		return nil, err
	}
	root := fmt.Sprintf("%s/latency-%d", dir, n)
	if err := os.MkdirAll(root, 0o755); err != nil {
		return nil, err
	}
	data := root + "-data"
	s, err := memory.Open(ctx, data, &memory.Options{Root: root, Cap: n + 1000})
	if err != nil {
		return nil, err
	}
	if err := s.ForgetAll(ctx); err != nil {
		s.Close()
		return nil, err
	}
	if _, err := s.AddBatch(ctx, recs[:n]); err != nil {
		s.Close()
		return nil, err
	}
	s.Close()

	l := &Latency{Records: n}
	runtime.GC()
	start, cpu := time.Now(), cpuTime()
	s, err = memory.Open(ctx, data, &memory.Options{Root: root, Cap: n + 1000})
	l.Open, l.OpenCPU = time.Since(start), cpuTime()-cpu
	if err != nil {
		return nil, err
	}
	defer s.Close()
	queries := recs[n : n+100]
	runtime.GC()
	start, cpu = time.Now(), cpuTime()
	for _, q := range queries {
		if _, err := s.Recall(ctx, q.Signature, memory.RecallOptions{K: 3}); err != nil {
			return nil, err
		}
	}
	l.Query, l.QueryCPU = time.Since(start)/time.Duration(len(queries)), (cpuTime()-cpu)/time.Duration(len(queries))
	start, cpu = time.Now(), cpuTime()
	for _, q := range queries {
		if _, err := s.Recall(ctx, q.Signature, memory.RecallOptions{K: 3, Language: q.Language}); err != nil {
			return nil, err
		}
	}
	l.QueryLang, l.QueryLangCPU = time.Since(start)/time.Duration(len(queries)), (cpuTime()-cpu)/time.Duration(len(queries))
	inserts := recs[n+100 : n+150]
	start, cpu = time.Now(), cpuTime()
	for _, r := range inserts {
		if _, err := s.Add(ctx, r); err != nil {
			return nil, err
		}
	}
	l.Insert, l.InsertCPU = time.Since(start)/time.Duration(len(inserts)), (cpuTime()-cpu)/time.Duration(len(inserts))
	return l, nil
}

// Report is the memory benchmark: retrieval quality and latency.
type Report struct {
	Quality        *Quality // language-filtered, as the loop recalls
	QualityAnyLang *Quality // no language filter
	Latency        []*Latency
}

// Run measures retrieval quality of the local embedder on the shipped
// corpus and latency at 1k and 10k records, using scratch stores under dir.
func Run(ctx context.Context, dir string) (*Report, error) {
	var r Report
	var err error
	if r.Quality, err = MeasureQuality(ctx, dir, memory.Local(), true); err != nil {
		return nil, fmt.Errorf("retrieval quality: %w", err)
	}
	if r.QualityAnyLang, err = MeasureQuality(ctx, dir, memory.Local(), false); err != nil {
		return nil, fmt.Errorf("retrieval quality: %w", err)
	}
	for _, n := range []int{1000, 10000} {
		l, err := MeasureLatency(ctx, dir, n)
		if err != nil {
			return nil, fmt.Errorf("latency at %d: %w", n, err)
		}
		r.Latency = append(r.Latency, l)
	}
	return &r, nil
}

// Markdown renders the report for docs/BENCHMARKS.md.
func (r *Report) Markdown() string {
	var b strings.Builder
	b.WriteString("### Failure memory\n\n")
	for _, q := range []*Quality{r.Quality, r.QualityAnyLang} {
		if q == nil {
			continue
		}
		filter := "any language"
		if q.LanguageFiltered {
			filter = "same language (as the loop recalls)"
		}
		fmt.Fprintf(&b, "Retrieval, embedder `%s`, %d labelled pairs + %d distractors, %s: recall@1 **%.3f**, recall@3 **%.3f** (mean similarity of the right record %.2f, of the best wrong one %.2f)\n\n",
			q.Embedder, q.Pairs, q.Distractors, filter, q.Recall1, q.Recall3, q.PairSimilarity, q.OtherSimilarity)
	}
	if len(r.Latency) > 0 {
		b.WriteString("| records | open wall / CPU | query k=3 wall / CPU | query k=3, same language wall / CPU | insert (fsync) wall / CPU |\n|---:|---:|---:|---:|---:|\n")
		for _, l := range r.Latency {
			fmt.Fprintf(&b, "| %d | %s / %s | %s / %s | %s / %s | %s / %s |\n", l.Records, round(l.Open), round(l.OpenCPU),
				round(l.Query), round(l.QueryCPU), round(l.QueryLang), round(l.QueryLangCPU), round(l.Insert), round(l.InsertCPU))
		}
		fmt.Fprintf(&b, "\nCPU is user+system time of the process (all threads); wall time depends on the machine's load (load average %s when measured).\n", loadAvg())
	}
	return b.String()
}

func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) == 0 {
		return "unknown"
	}
	return f[0]
}

func round(d time.Duration) string {
	switch {
	case d >= time.Second:
		return d.Round(10 * time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	}
	return d.Round(time.Microsecond).String()
}

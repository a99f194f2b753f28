package memory

import (
	"context"
	"math"
	"strings"
	"unicode"
)

// Embedder turns texts into unit-length vectors of a fixed dimension.
//
// Name identifies the embedder and its parameters (e.g. "local-v1-512",
// "openai:nomic-embed-text"); the store records it and re-embeds when it
// changes. Embed must return one vector per text, in order, each of
// L2 norm 1, all of the same length. It must be safe for concurrent use.
type Embedder interface {
	Name() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// LocalDims is the dimension of the local embedder.
const LocalDims = 512

// Local returns the default embedder: deterministic, offline and
// model-free. It hashes features of the text into LocalDims dimensions
// (signed feature hashing) and L2-normalises the result. Features are
// lower-cased words, their camelCase/snake_case parts, word bigrams and
// character trigrams of words, each weighted by sublinear term frequency.
func Local() Embedder { return localEmbedder{} }

type localEmbedder struct{}

func (localEmbedder) Name() string { return "local-v1-512" }

func (localEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%64 == 0 && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		out[i] = embedLocal(t)
	}
	return out, nil
}

// Feature weights of the local embedder, tuned on testdata/pairs.
const (
	wWord    = 1.0
	wPart    = 0.6
	wBigram  = 0.7
	wTrigram = 0.25
)

func embedLocal(text string) []float32 {
	// Features are hashed as they are built (FNV-1a over a kind byte and
	// the feature's bytes): nothing is allocated per feature.
	counts := make(map[uint64]float32, 256)
	var prev string
	forEachWord(text, func(lower, orig string) {
		counts[fnvHash('w', lower, "")] += wWord
		forEachIdentPart(orig, func(p string, n int) {
			if n > 1 {
				counts[fnvHash('w', p, "")] += wPart
			}
		})
		if prev != "" {
			counts[fnvHash('b', prev, lower)] += wBigram
		}
		prev = lower
		if len(lower) >= 3 {
			counts[fnvHash('c', "<", lower[:2])] += wTrigram
			for j := 0; j+3 <= len(lower); j++ {
				counts[fnvHash('c', lower[j:j+3], "")] += wTrigram
			}
			counts[fnvHash('c', lower[len(lower)-2:], ">")] += wTrigram
		}
	})
	v := make([]float64, LocalDims)
	for x, c := range counts {
		w := float64(c)
		if c > 1 {
			// Sublinear term frequency: repeated noise does not dominate.
			w = 1 + math.Log(w)
		}
		if x>>63 == 1 {
			w = -w
		}
		v[x%LocalDims] += w
	}
	return normalize(v)
}

const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
)

// fnvHash is FNV-1a of kind, a, a space when b is not empty, and b.
func fnvHash(kind byte, a, b string) uint64 {
	h := uint64(fnvOffset)
	h = (h ^ uint64(kind)) * fnvPrime
	h = (h ^ ':') * fnvPrime
	for i := 0; i < len(a); i++ {
		h = (h ^ uint64(a[i])) * fnvPrime
	}
	if b != "" {
		if kind == 'b' {
			h = (h ^ ' ') * fnvPrime
		}
		for i := 0; i < len(b); i++ {
			h = (h ^ uint64(b[i])) * fnvPrime
		}
	}
	return h
}

func normalize(v []float64) []float32 {
	var sum float64
	for _, x := range v {
		sum += x * x
	}
	out := make([]float32, len(v))
	if sum == 0 {
		// An empty text still needs a unit vector: a fixed axis.
		out[0] = 1
		return out
	}
	n := math.Sqrt(sum)
	for i, x := range v {
		out[i] = float32(x / n)
	}
	return out
}

// forEachWord calls fn for each word of text (letters, digits and '_',
// at least two bytes), lower-cased and as written.
func forEachWord(text string, fn func(lower, orig string)) {
	start := -1
	flush := func(end int) {
		if start >= 0 && end-start >= 2 {
			w := text[start:end]
			fn(toLower(w), w)
		}
		start = -1
	}
	for i, r := range text {
		if r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) {
			if start < 0 {
				start = i
			}
			continue
		}
		flush(i)
	}
	flush(len(text))
}

// toLower avoids an allocation for words that are already lower-case ASCII.
func toLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c >= 'A' && c <= 'Z' || c >= 0x80 {
			return strings.ToLower(s)
		}
	}
	return s
}

// forEachIdentPart calls fn with each part (of two or more letters) of an
// identifier split on '_', lower-to-upper and acronym boundaries and digit
// edges, lower-cased, and the number of parts.
func forEachIdentPart(orig string, fn func(part string, n int)) {
	if !needsSplit(orig) {
		return
	}
	parts := splitIdent(orig)
	for _, p := range parts {
		fn(p, len(parts))
	}
}

// needsSplit is false for words that splitIdent would return whole.
func needsSplit(w string) bool {
	lowerSeen := false
	for i := 0; i < len(w); i++ {
		c := w[i]
		switch {
		case c == '_' || c >= '0' && c <= '9' || c >= 0x80:
			return true
		case c >= 'A' && c <= 'Z':
			if lowerSeen || i > 0 {
				return true
			}
		default:
			lowerSeen = true
		}
	}
	return false
}

// splitIdent splits "parseHTTPRequest_body" into parse, http, request, body.
func splitIdent(orig string) []string {
	var parts []string
	for _, seg := range strings.Split(orig, "_") {
		start := 0
		rs := []rune(seg)
		for i := 1; i < len(rs); i++ {
			lowerToUpper := unicode.IsLower(rs[i-1]) && unicode.IsUpper(rs[i])
			acronymEnd := i+1 < len(rs) && unicode.IsUpper(rs[i-1]) && unicode.IsUpper(rs[i]) && unicode.IsLower(rs[i+1])
			digitEdge := unicode.IsDigit(rs[i-1]) != unicode.IsDigit(rs[i])
			if lowerToUpper || acronymEnd || digitEdge {
				parts = append(parts, strings.ToLower(string(rs[start:i])))
				start = i
			}
		}
		if start < len(rs) {
			parts = append(parts, strings.ToLower(string(rs[start:])))
		}
	}
	out := parts[:0]
	for _, p := range parts {
		if len(p) >= 2 {
			out = append(out, p)
		}
	}
	return out
}

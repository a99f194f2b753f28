package memory

import (
	"context"
	"hash/fnv"
	"math"
	"strings"
	"unicode"
)

// Embedder turns texts into unit-length vectors of a fixed dimension.
//
// Name identifies the embedder and its parameters (e.g. "local-v1-1024",
// "openai:nomic-embed-text"); the store records it and re-embeds when it
// changes. Embed must return one vector per text, in order, each of
// L2 norm 1, all of the same length. It must be safe for concurrent use.
type Embedder interface {
	Name() string
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// LocalDims is the dimension of the local embedder.
const LocalDims = 1024

// Local returns the default embedder: deterministic, offline and
// model-free. It hashes features of the text into LocalDims dimensions
// (signed feature hashing) and L2-normalises the result. Features are
// lower-cased words, their camelCase/snake_case parts, word bigrams and
// character trigrams of words, each weighted by sublinear term frequency.
func Local() Embedder { return localEmbedder{} }

type localEmbedder struct{}

func (localEmbedder) Name() string { return "local-v1-1024" }

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
	counts := make(map[string]float64, 256)
	words := wordsOf(text)
	prev := ""
	for _, tok := range words {
		w := tok.lower
		counts["w:"+w] += wWord
		parts := splitIdent(tok.orig)
		if len(parts) > 1 {
			for _, p := range parts {
				counts["w:"+p] += wPart
			}
		}
		if prev != "" {
			counts["b:"+prev+" "+w] += wBigram
		}
		prev = w
		if len(w) >= 3 {
			padded := "<" + w + ">"
			for j := 0; j+3 <= len(padded); j++ {
				counts["c:"+padded[j:j+3]] += wTrigram
			}
		}
	}
	v := make([]float64, LocalDims)
	for f, c := range counts {
		h := fnv.New64a()
		h.Write([]byte(f))
		x := h.Sum64()
		idx := int(x % LocalDims)
		sign := 1.0
		if x>>63 == 1 {
			sign = -1
		}
		// Sublinear term frequency: repeated noise does not dominate.
		v[idx] += sign * (1 + math.Log(c))
	}
	return normalize(v)
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

// token is a word of the text: lower-cased, and as written.
type token struct{ lower, orig string }

// wordsOf splits text into words of letters, digits and '_' of at least
// two characters.
func wordsOf(text string) []token {
	f := strings.FieldsFunc(text, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	})
	out := make([]token, 0, len(f))
	for _, w := range f {
		if len(w) >= 2 {
			out = append(out, token{strings.ToLower(w), w})
		}
	}
	return out
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

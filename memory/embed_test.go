package memory

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

// scaledEmbedder is a non-local embedder for tests: the local vector, and a
// count of texts embedded.
type scaledEmbedder struct{ calls atomic.Int64 }

func (e *scaledEmbedder) Name() string { return "test-embedder" }

func (e *scaledEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.calls.Add(int64(len(texts)))
	return Local().Embed(ctx, texts)
}

func norm(v []float32) float64 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	return math.Sqrt(s)
}

func TestLocalEmbedder(t *testing.T) {
	ctx := t.Context()
	texts := []string{"", "KeyError: 'timeout'", "parseHTTPRequest_body failed", "KeyError: 'timeout'"}
	vs, err := Local().Embed(ctx, texts)
	if err != nil {
		t.Fatal(err)
	}
	for i, v := range vs {
		if len(v) != LocalDims || math.Abs(norm(v)-1) > 1e-5 {
			t.Errorf("Embed(%q): dims %d, norm %f; want %d and 1", texts[i], len(v), norm(v), LocalDims)
		}
	}
	for i := range vs[1] {
		if vs[1][i] != vs[3][i] {
			t.Fatal("Embed is not deterministic")
		}
	}
	got := splitIdent("parseHTTPRequest_body2")
	want := []string{"parse", "http", "request", "body"}
	if len(got) != len(want) {
		t.Fatalf("splitIdent = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("splitIdent = %v, want %v", got, want)
		}
	}
}

func TestOpenAIEmbedder(t *testing.T) {
	var gotModel string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/embeddings" {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Input []string `json:"input"`
			Model string   `json:"model"`
		}
		_ = json.NewDecoder(r.Body).Decode(&req)
		gotModel = req.Model
		// Reply out of order, unnormalised: the client must sort by index
		// and normalise.
		type item struct {
			Object    string    `json:"object"`
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var data []item
		for i := len(req.Input) - 1; i >= 0; i-- {
			data = append(data, item{"embedding", i, []float32{float32(i + 1), 0, 3}})
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data, "model": req.Model})
	}))
	defer srv.Close()
	emb, err := NewOpenAI(OpenAIOptions{BaseURL: srv.URL + "/v1", Model: "nomic-embed-text"})
	if err != nil {
		t.Fatal(err)
	}
	vs, err := emb.Embed(t.Context(), []string{"a", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if gotModel != "nomic-embed-text" || emb.Name() != "openai:nomic-embed-text" {
		t.Errorf("model %q, name %q", gotModel, emb.Name())
	}
	// Index 0 -> (1,0,3)/sqrt(10); index 1 -> (2,0,3)/sqrt(13).
	if math.Abs(float64(vs[0][0])-1/math.Sqrt(10)) > 1e-6 || math.Abs(float64(vs[1][0])-2/math.Sqrt(13)) > 1e-6 {
		t.Errorf("vectors %v not ordered by index and normalised", vs)
	}
	// A store on it journals vectors and recalls.
	s := openTest(t, t.TempDir(), t.TempDir(), &Options{Embedder: emb})
	if _, err := s.Add(t.Context(), Record{Excerpt: "Error: x"}); err != nil {
		t.Fatal(err)
	}
	// An unreachable endpoint is an error, never a silent fallback.
	srv.Close()
	if _, err := s.Add(t.Context(), Record{Excerpt: "Error: y"}); err == nil {
		t.Error("Add with an unreachable embedder: want an error")
	}
	if _, err := NewOpenAI(OpenAIOptions{Model: "m"}); err == nil {
		t.Error("NewOpenAI without BaseURL: want an error")
	}
}

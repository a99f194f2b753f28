package memory

import (
	"context"
	"fmt"
	"math"
	"net/http"
	"sort"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// OpenAIOptions configures an OpenAI-compatible embeddings endpoint.
type OpenAIOptions struct {
	// BaseURL of the API, ending in /v1 (e.g. http://localhost:11434/v1 for
	// Ollama). Required: there is no silent default.
	BaseURL string
	// APIKey may be empty for local servers.
	APIKey string
	// Model, e.g. "nomic-embed-text". Required.
	Model string
	// Timeout per request; 0 means 60s.
	Timeout time.Duration
	// HTTPClient overrides the client (Timeout is then ignored).
	HTTPClient *http.Client
}

// NewOpenAI returns an Embedder backed by an OpenAI-compatible
// /embeddings endpoint. Vectors are L2-normalised here, whatever the
// server returns. Errors are returned, never replaced by another embedder.
func NewOpenAI(opts OpenAIOptions) (Embedder, error) {
	if opts.BaseURL == "" || opts.Model == "" {
		return nil, fmt.Errorf("openai embedder: base URL and model are required (memory.embed_base_url, memory.embed_model)")
	}
	cfg := openai.DefaultConfig(opts.APIKey)
	cfg.BaseURL = opts.BaseURL
	hc := opts.HTTPClient
	if hc == nil {
		t := opts.Timeout
		if t == 0 {
			t = 60 * time.Second
		}
		hc = &http.Client{Timeout: t} // the default client has no timeout
	}
	cfg.HTTPClient = hc
	return &openaiEmbedder{client: openai.NewClientWithConfig(cfg), model: opts.Model}, nil
}

type openaiEmbedder struct {
	client *openai.Client
	model  string
}

func (e *openaiEmbedder) Name() string { return "openai:" + e.model }

// embedBatch is the most texts sent in one request.
const embedBatch = 64

func (e *openaiEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += embedBatch {
		batch := texts[start:min(start+embedBatch, len(texts))]
		resp, err := e.client.CreateEmbeddings(ctx, openai.EmbeddingRequestStrings{
			Input: batch,
			Model: openai.EmbeddingModel(e.model),
		})
		if err != nil {
			return nil, fmt.Errorf("embeddings from %s: %w", e.model, err)
		}
		if len(resp.Data) != len(batch) {
			return nil, fmt.Errorf("embeddings from %s: got %d vectors for %d texts", e.model, len(resp.Data), len(batch))
		}
		data := resp.Data
		sort.Slice(data, func(i, j int) bool { return data[i].Index < data[j].Index })
		for _, d := range data {
			v := make([]float64, len(d.Embedding))
			for i, x := range d.Embedding {
				v[i] = float64(x)
			}
			if len(out) > 0 && len(v) != len(out[0]) {
				return nil, fmt.Errorf("embeddings from %s: inconsistent dimensions %d and %d", e.model, len(v), len(out[0]))
			}
			if !finite(v) {
				return nil, fmt.Errorf("embeddings from %s: non-finite value", e.model)
			}
			out = append(out, normalize(v))
		}
	}
	return out, nil
}

func finite(v []float64) bool {
	for _, x := range v {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return false
		}
	}
	return true
}

package memory

import (
	"context"
	"errors"
	"testing"
)

// ctxEmbedder embeds locally, but fails as a network embedder would once
// its context is done.
type ctxEmbedder struct{}

func (ctxEmbedder) Name() string { return "ctx-embedder" }

func (ctxEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return Local().Embed(ctx, texts)
}

// TestOpenUsesCallersContext: switching embedders re-embeds every record
// at Open, under the caller's context, so a caller that gave up stops it.
func TestOpenUsesCallersContext(t *testing.T) {
	data, root := t.TempDir(), t.TempDir()
	s := openTest(t, data, root, &Options{Embedder: Local()})
	if _, err := s.Add(t.Context(), Record{ID: "k", Language: "python", Excerpt: "KeyError: 'a'"}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if s, err := Open(ctx, data, &Options{Root: root, Embedder: ctxEmbedder{}}); !errors.Is(err, context.Canceled) {
		if s != nil {
			s.Close()
		}
		t.Fatalf("Open with a cancelled context that must re-embed = %v, want context.Canceled", err)
	}
	s2, err := Open(t.Context(), data, &Options{Root: root, Embedder: ctxEmbedder{}})
	if err != nil {
		t.Fatalf("Open with a live context: %v", err)
	}
	defer s2.Close()
	if st, _ := s2.Stats(t.Context()); st.Reembedded != 1 {
		t.Errorf("Reembedded = %d, want 1", st.Reembedded)
	}
}

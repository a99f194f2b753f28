package llm_test

import (
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/config"
)

// BenchmarkChat measures one streamed call to the scripted server on
// loopback: a 2 KB reply in 16-byte chunks and an 8 KB prompt, the client's
// share of an agent iteration with an instant model.
func BenchmarkChat(b *testing.B) {
	srv := llmtest.NewServer(&llmtest.Script{Default: &llmtest.Reply{Content: strings.Repeat("edit text ", 200)}})
	defer srv.Close()
	c := llm.New(config.Model{BaseURL: srv.URL(), Name: "m"}, nil)
	req := llm.Request{Messages: []llm.Message{{Role: "system", Content: strings.Repeat("context ", 1000)}, {Role: "user", Content: "go"}}}
	for b.Loop() {
		if _, err := c.Chat(b.Context(), req, nil); err != nil {
			b.Fatal(err)
		}
	}
}

package llm_test

import (
	"context"
	"fmt"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/config"
)

// A client against the scripted server: the first request is rate limited,
// the retry honours Retry-After and succeeds.
func Example() {
	srv := llmtest.NewServer(&llmtest.Script{Replies: []llmtest.Reply{
		{Fault: llmtest.Fault429, RetryAfter: "2"},
		{Content: "Hello!", Usage: &llmtest.Usage{PromptTokens: 12, CompletionTokens: 3}},
	}})
	defer srv.Close()

	c := llm.New(config.Model{BaseURL: srv.URL(), Name: "demo", MaxRetries: 2}, &llm.Options{
		Sleep: func(ctx context.Context, d time.Duration) error { fmt.Println("waiting", d); return nil },
	})
	resp, err := c.Chat(context.Background(), llm.Request{
		Messages: []llm.Message{{Role: "user", Content: "Say hello"}},
	}, func(delta string) { fmt.Printf("delta %q\n", delta) })
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(resp.Content, resp.Usage.In, resp.Usage.Out, resp.Attempts)
	// Output:
	// waiting 2s
	// delta "Hello!"
	// Hello! 12 3 2
}

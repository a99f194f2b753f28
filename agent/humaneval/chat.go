package humaneval

import (
	"context"

	"github.com/fixpoint-dev/fixpoint/agent/llm"
)

// ChatModel adapts the OpenAI-compatible client to the harness.
type ChatModel struct {
	Client *llm.Client
	Model  string // "" = the client's configured model
}

// Complete implements Model.
func (m ChatModel) Complete(ctx context.Context, msgs []Message) (Reply, error) {
	req := llm.Request{Model: m.Model}
	for _, x := range msgs {
		req.Messages = append(req.Messages, llm.Message{Role: x.Role, Content: x.Content})
	}
	resp, err := m.Client.Chat(ctx, req, nil)
	if err != nil {
		return Reply{}, err
	}
	return Reply{Text: resp.Content, In: resp.Usage.In, Out: resp.Usage.Out}, nil
}

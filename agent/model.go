package agent

import (
	"context"
)

// STAND-IN until agent/llm lands: mirrors the agreed llm.Request/Response.
type chatMessage struct{ Role, Content string }

type chatRequest struct {
	Model    string
	Messages []chatMessage
}

type chatResponse struct {
	Content string
	In, Out int
}

// Model is the chat model the loop talks to; *llm.Client satisfies it.
type Model interface {
	Chat(ctx context.Context, req chatRequest, onDelta func(string)) (*chatResponse, error)
}

func (e *Engine) chat(ctx context.Context, role string, msgs []chatMessage, onDelta func(string)) (*chatResponse, error) {
	return e.opts.Model.Chat(ctx, chatRequest{Model: e.cfg.Model.RoleModel(role), Messages: msgs}, onDelta)
}

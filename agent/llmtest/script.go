package llmtest

import (
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/edit"
)

// Script says what a [Server] replies. The zero Script answers every chat
// request with a 400 "no scripted reply left" error.
//
// For each chat request the server picks, in order:
//  1. the first [Rule] that matches and has uses left;
//  2. the next unused entry of Replies;
//  3. Default, when set;
//  4. otherwise a 400 error naming the request number.
type Script struct {
	Replies []Reply `json:"replies,omitempty"`
	Rules   []Rule  `json:"rules,omitempty"`
	Default *Reply  `json:"default,omitempty"`

	// Models lists the ids /v1/models returns; empty means ["llmtest"].
	Models []string `json:"models,omitempty"`
	// EmbeddingDims is the length of /v1/embeddings vectors; 0 means 64.
	EmbeddingDims int `json:"embedding_dims,omitempty"`
	// NoTools makes the server reject any request that offers tools with a
	// 400 "this model does not support tools", like many local servers.
	NoTools bool `json:"no_tools,omitempty"`
	// NoStreamOptions makes the server reject requests carrying
	// stream_options with a 400, like some older servers.
	NoStreamOptions bool `json:"no_stream_options,omitempty"`
}

// Rule is a reply chosen by what the prompt says.
type Rule struct {
	// Contains matches when the searched text contains it.
	Contains string `json:"contains,omitempty"`
	// Regexp matches when the searched text matches it (RE2 syntax).
	Regexp string `json:"regexp,omitempty"`
	// Role restricts the search to messages of that role ("system",
	// "user", "assistant", "tool"); empty searches all messages.
	Role string `json:"role,omitempty"`
	// Last restricts the search to the last message (after Role filtering).
	Last bool `json:"last,omitempty"`
	// Model, when set, must equal the request's model.
	Model string `json:"model,omitempty"`
	// MaxUses bounds how many requests the rule answers; 0 = unlimited.
	MaxUses int `json:"max_uses,omitempty"`
	// Reply is the answer. When Replies is set instead, the rule answers
	// with them in turn and is used up after the last one.
	Reply   *Reply  `json:"reply,omitempty"`
	Replies []Reply `json:"replies,omitempty"`

	re *regexp.Regexp
}

// Fault names an injected failure.
type Fault string

// Faults a [Reply] can inject.
const (
	// FaultStatus answers with Reply.Status (default 500) and an
	// OpenAI-style error body carrying Reply.Error.
	FaultStatus Fault = "status"
	// Fault429 answers 429 with Retry-After: Reply.RetryAfter (default "1").
	Fault429 Fault = "429"
	// Fault500 answers 500.
	Fault500 Fault = "500"
	// FaultHang waits until the client gives up, the server closes, or
	// Reply.Hang elapses; in the last case the reply is then sent normally.
	FaultHang Fault = "hang"
	// FaultTruncate streams part of the content, then ends the body cleanly
	// without a finish_reason or [DONE]. Non-streaming requests get half a
	// JSON document.
	FaultTruncate Fault = "truncate"
	// FaultReset streams part of the content, then aborts the connection.
	FaultReset Fault = "reset"
	// FaultGarbage answers 200 with a body that is not JSON.
	FaultGarbage Fault = "garbage"
	// FaultEmptyChoices answers 200 with "choices": [].
	FaultEmptyChoices Fault = "empty_choices"
	// FaultOllama answers Reply.Status (default 400) with Ollama's error
	// shape {"error": "..."}.
	FaultOllama Fault = "ollama_error"
)

// Reply is one scripted answer.
type Reply struct {
	// Content is the assistant text.
	Content string `json:"content,omitempty"`
	// ToolCalls makes the reply a tool-call turn (finish_reason
	// "tool_calls"). They are left out when the request says tool_choice
	// "none", as a real server would.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// FinishReason overrides the finish reason ("stop" or "tool_calls").
	FinishReason string `json:"finish_reason,omitempty"`
	// Usage overrides the token counts; nil means estimated (~4 chars per
	// token). NoUsage leaves usage out entirely, like some servers.
	Usage   *Usage `json:"usage,omitempty"`
	NoUsage bool   `json:"no_usage,omitempty"`
	// ChunkSize is the number of bytes of content per streamed chunk;
	// 0 means 16.
	ChunkSize int `json:"chunk_size,omitempty"`
	// ChunkDelay is a pause after each streamed content chunk, e.g. "5ms".
	ChunkDelay Duration `json:"chunk_delay,omitempty"`

	Fault      Fault    `json:"fault,omitempty"`
	Status     int      `json:"status,omitempty"`      // for status and ollama_error
	Error      string   `json:"error,omitempty"`       // error message for faults
	RetryAfter string   `json:"retry_after,omitempty"` // for 429 (seconds or an HTTP date); default "1"
	Hang       Duration `json:"hang,omitempty"`        // for hang; 0 = until the client gives up
}

// ToolCall is a scripted tool call.
type ToolCall struct {
	ID        string `json:"id,omitempty"` // default call_<n>
	Name      string `json:"name"`
	Arguments string `json:"arguments"` // JSON text
}

// Usage is a token count.
type Usage struct {
	PromptTokens     int `json:"prompt_tokens"`
	CompletionTokens int `json:"completion_tokens"`
}

// Duration is a time.Duration written as "5s" in script files.
type Duration time.Duration

// UnmarshalJSON accepts "5s" or a number of nanoseconds.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n int64
		if err2 := json.Unmarshal(b, &n); err2 != nil {
			return fmt.Errorf("bad duration %s (want e.g. \"5s\")", b)
		}
		*d = Duration(n)
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("bad duration %q (want e.g. \"5s\")", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as "5s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// Text returns a reply with the given content.
func Text(content string) Reply { return Reply{Content: content} }

// Replies returns a script answering with the given texts in order.
func Replies(contents ...string) *Script {
	s := &Script{}
	for _, c := range contents {
		s.Replies = append(s.Replies, Text(c))
	}
	return s
}

// LoadScript reads a JSON script file (see the package documentation for
// the format). Unknown keys are errors.
func LoadScript(path string) (*Script, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load script: %w", err)
	}
	defer f.Close()
	dec := json.NewDecoder(f)
	dec.DisallowUnknownFields()
	var s Script
	if err := dec.Decode(&s); err != nil {
		return nil, fmt.Errorf("load script %s: %w", path, err)
	}
	if err := s.compile(); err != nil {
		return nil, fmt.Errorf("load script %s: %w", path, err)
	}
	return &s, nil
}

// compile validates the script and compiles its regexps.
func (s *Script) compile() error {
	for i := range s.Rules {
		r := &s.Rules[i]
		if r.Regexp != "" {
			re, err := regexp.Compile(r.Regexp)
			if err != nil {
				return fmt.Errorf("rule %d: %w", i, err)
			}
			r.re = re
		}
		if r.Reply == nil && len(r.Replies) == 0 {
			return fmt.Errorf("rule %d: no reply", i)
		}
	}
	check := func(where string, r *Reply) error {
		switch r.Fault {
		case "", FaultStatus, Fault429, Fault500, FaultHang, FaultTruncate, FaultReset, FaultGarbage, FaultEmptyChoices, FaultOllama:
			return nil
		}
		return fmt.Errorf("%s: unknown fault %q", where, r.Fault)
	}
	for i := range s.Replies {
		if err := check(fmt.Sprintf("reply %d", i), &s.Replies[i]); err != nil {
			return err
		}
	}
	for i := range s.Rules {
		r := &s.Rules[i]
		if r.Reply != nil {
			if err := check(fmt.Sprintf("rule %d", i), r.Reply); err != nil {
				return err
			}
		}
		for j := range r.Replies {
			if err := check(fmt.Sprintf("rule %d reply %d", i, j), &r.Replies[j]); err != nil {
				return err
			}
		}
	}
	if s.Default != nil {
		return check("default", s.Default)
	}
	return nil
}

// EditBlock returns a SEARCH/REPLACE block for path in the format
// agent/edit parses, for building scripted replies. search and replace are
// whole lines; a missing final newline is added.
func EditBlock(path, search, replace string) string { return edit.Format(path, search, replace) }

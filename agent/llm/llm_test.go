package llm_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/config"
)

// sleeps records retry waits instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

func newClient(t *testing.T, srv *llmtest.Server, mod func(*config.Model)) (*llm.Client, *sleeps) {
	t.Helper()
	m := config.Model{BaseURL: srv.URL(), Name: "test-model", MaxRetries: 3, Timeout: config.Duration(5 * time.Second)}
	if mod != nil {
		mod(&m)
	}
	sl := &sleeps{}
	return llm.New(m, &llm.Options{Sleep: sl.sleep, Rand: func() float64 { return 0.5 }}), sl
}

func user(s string) []llm.Message { return []llm.Message{{Role: "user", Content: s}} }

func TestChatStreams(t *testing.T) {
	srv := llmtest.NewServer(&llmtest.Script{Replies: []llmtest.Reply{{
		Content: "hello, streaming world", ChunkSize: 4, Usage: &llmtest.Usage{PromptTokens: 11, CompletionTokens: 7},
	}}})
	defer srv.Close()
	c, _ := newClient(t, srv, func(m *config.Model) { m.APIKey = "sk-test" })
	var deltas []string
	resp, err := c.Chat(t.Context(), llm.Request{Messages: user("hi")}, func(s string) { deltas = append(deltas, s) })
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "hello, streaming world" || strings.Join(deltas, "") != resp.Content || len(deltas) < 5 {
		t.Errorf("Content %q, deltas %q", resp.Content, deltas)
	}
	if resp.Usage != (llm.Usage{In: 11, Out: 7}) {
		t.Errorf("Usage = %+v, want {11 7 false}", resp.Usage)
	}
	if resp.FinishReason != "stop" || resp.Model != "test-model" || resp.Attempts != 1 {
		t.Errorf("resp = %+v", resp)
	}
	reqs := srv.Requests()
	if len(reqs) != 1 || !reqs[0].Stream || !reqs[0].StreamOptions || reqs[0].Model != "test-model" ||
		reqs[0].Authorization != "Bearer sk-test" || reqs[0].Temperature != nil {
		t.Errorf("request = %+v", reqs[0])
	}
}

func TestChatEstimatesUsageWhenMissing(t *testing.T) {
	srv := llmtest.NewServer(&llmtest.Script{Replies: []llmtest.Reply{{Content: strings.Repeat("x", 40), NoUsage: true}}})
	defer srv.Close()
	c, _ := newClient(t, srv, nil)
	resp, err := c.Chat(t.Context(), llm.Request{Messages: user("hi")}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Usage.Estimated || resp.Usage.Out != 10 || resp.Usage.In == 0 {
		t.Errorf("Usage = %+v, want estimated with Out 10", resp.Usage)
	}
	if got := srv.Requests()[0].Authorization; got != "" {
		t.Errorf("Authorization = %q with an empty key, want none", got)
	}
}

func TestChatRetries(t *testing.T) {
	date := time.Date(2030, 1, 1, 0, 0, 0, 0, time.UTC)
	tests := []struct {
		name      string
		faults    []llmtest.Reply
		wantWaits []time.Duration
	}{
		{"429 retry-after seconds", []llmtest.Reply{{Fault: llmtest.Fault429, RetryAfter: "3"}}, []time.Duration{3 * time.Second}},
		{"429 retry-after date", []llmtest.Reply{{Fault: llmtest.Fault429, RetryAfter: date.Add(7 * time.Second).Format(http.TimeFormat)}}, []time.Duration{7 * time.Second}},
		// Backoff with Rand 0.5: d/2 + d/4 for d = 500ms, 1s.
		{"500 twice", []llmtest.Reply{{Fault: llmtest.Fault500}, {Fault: llmtest.FaultStatus, Status: 503}}, []time.Duration{375 * time.Millisecond, 750 * time.Millisecond}},
		{"truncated stream", []llmtest.Reply{{Fault: llmtest.FaultTruncate, Content: "partial partial partial partial"}}, []time.Duration{375 * time.Millisecond}},
		{"reset stream", []llmtest.Reply{{Fault: llmtest.FaultReset, Content: "partial partial partial partial"}}, []time.Duration{375 * time.Millisecond}},
		{"garbage", []llmtest.Reply{{Fault: llmtest.FaultGarbage}}, []time.Duration{375 * time.Millisecond}},
		{"empty choices", []llmtest.Reply{{Fault: llmtest.FaultEmptyChoices}}, []time.Duration{375 * time.Millisecond}},
		{"hang past the timeout", []llmtest.Reply{{Fault: llmtest.FaultHang}}, []time.Duration{375 * time.Millisecond}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(&llmtest.Script{Replies: append(tt.faults, llmtest.Text("recovered"))})
			defer srv.Close()
			m := config.Model{BaseURL: srv.URL(), Name: "m", MaxRetries: 3, Timeout: config.Duration(300 * time.Millisecond)}
			sl := &sleeps{}
			c := llm.New(m, &llm.Options{Sleep: sl.sleep, Rand: func() float64 { return 0.5 }, Now: func() time.Time { return date }})
			resp, err := c.Chat(t.Context(), llm.Request{Messages: user("hi")}, nil)
			if err != nil {
				t.Fatalf("Chat: %v", err)
			}
			if resp.Content != "recovered" || resp.Attempts != len(tt.faults)+1 {
				t.Errorf("Content %q after %d attempts, want %q after %d", resp.Content, resp.Attempts, "recovered", len(tt.faults)+1)
			}
			if got := sl.got(); !equalDurations(got, tt.wantWaits) {
				t.Errorf("waits = %v, want %v", got, tt.wantWaits)
			}
		})
	}
}

func equalDurations(a, b []time.Duration) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestChatErrors(t *testing.T) {
	tests := []struct {
		name         string
		reply        llmtest.Reply
		wantKind     error
		wantRequests int
		wantMsg      []string
	}{
		{"401", llmtest.Reply{Fault: llmtest.FaultStatus, Status: 401, Error: "Incorrect API key provided: sk-proj-CANARYabcdef0123456789XYZ"}, llm.ErrAuth, 1,
			[]string{"refused the API key (401)", "set FIXPOINT_API_KEY", "Incorrect API key provided: [REDACTED]"}},
		{"404", llmtest.Reply{Fault: llmtest.FaultStatus, Status: 404, Error: "model not found"}, llm.ErrNotFound, 1,
			[]string{"404", `"m"`, "set FIXPOINT_MODEL"}},
		{"ollama", llmtest.Reply{Fault: llmtest.FaultOllama, Error: `model "m" not found, try pulling it first`}, llm.ErrBadRequest, 1,
			[]string{"rejected the request (400)", "try pulling it first"}},
		{"ollama 500", llmtest.Reply{Fault: llmtest.FaultOllama, Status: 500, Error: "llama runner process has terminated"}, llm.ErrServer, 3,
			[]string{"failed (500) after 3 attempts", "llama runner process has terminated"}},
		{"500 forever", llmtest.Reply{Fault: llmtest.Fault500}, llm.ErrServer, 3, []string{"failed (500) after 3 attempts"}},
		{"429 forever", llmtest.Reply{Fault: llmtest.Fault429}, llm.ErrRateLimited, 3, []string{"rate limiting (429) after 3 attempts"}},
		{"429 too long", llmtest.Reply{Fault: llmtest.Fault429, RetryAfter: "3600"}, llm.ErrRateLimited, 1, []string{"asked to wait 1h0m0s"}},
		{"garbage forever", llmtest.Reply{Fault: llmtest.FaultGarbage}, llm.ErrBadResponse, 3, []string{"not OpenAI-compatible", "invalid character"}},
		{"error body with 200", llmtest.Reply{Fault: llmtest.FaultStatus, Status: 200}, llm.ErrServer, 3, []string{"scripted status 200"}},
		{"empty choices", llmtest.Reply{Fault: llmtest.FaultEmptyChoices}, llm.ErrBadResponse, 3, []string{"no choices"}},
		{"truncated forever", llmtest.Reply{Fault: llmtest.FaultTruncate, Content: "abcdefghijklmnopqrstuvwxyz0123456789"}, llm.ErrTruncated, 3, []string{"cut the reply stream short"}},
		{"hang forever", llmtest.Reply{Fault: llmtest.FaultHang}, llm.ErrTimeout, 3, []string{"did not answer within 200ms", "raise model.timeout"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(&llmtest.Script{Default: &tt.reply})
			defer srv.Close()
			c, _ := newClient(t, srv, func(m *config.Model) {
				m.Name = "m"
				m.MaxRetries = 2
				m.Timeout = config.Duration(200 * time.Millisecond)
			})
			_, err := c.Chat(t.Context(), llm.Request{Messages: user("hi")}, nil)
			if err == nil {
				t.Fatal("Chat succeeded, want an error")
			}
			var e *llm.Error
			if !errors.As(err, &e) || !errors.Is(err, tt.wantKind) {
				t.Fatalf("Chat error = %v (%T), want kind %v", err, err, tt.wantKind)
			}
			if !strings.Contains(err.Error(), srv.URL()) {
				t.Errorf("error %q does not name the endpoint", err)
			}
			for _, w := range tt.wantMsg {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if got := len(srv.Requests()); got != tt.wantRequests {
				t.Errorf("%d requests, want %d", got, tt.wantRequests)
			}
		})
	}
}

func TestChatUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	c := llm.New(config.Model{BaseURL: "http://" + addr + "/v1", Name: "m"}, nil)
	_, err = c.Chat(t.Context(), llm.Request{Messages: user("hi")}, nil)
	if !errors.Is(err, llm.ErrUnreachable) || !strings.Contains(err.Error(), "check FIXPOINT_BASE_URL") {
		t.Errorf("Chat error = %v, want ErrUnreachable naming FIXPOINT_BASE_URL", err)
	}
}

func TestChatStreamOptionsFallback(t *testing.T) {
	srv := llmtest.NewServer(&llmtest.Script{NoStreamOptions: true, Default: &llmtest.Reply{Content: "ok"}})
	defer srv.Close()
	c, sl := newClient(t, srv, nil)
	for range 2 {
		resp, err := c.Chat(t.Context(), llm.Request{Messages: user("hi")}, nil)
		if err != nil || resp.Content != "ok" {
			t.Fatalf("Chat = %v, %v", resp, err)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || !reqs[0].StreamOptions || reqs[1].StreamOptions || reqs[2].StreamOptions {
		t.Errorf("requests: %d, stream_options %v/%v/%v; want 3, true/false/false", len(reqs), reqs[0].StreamOptions, reqs[1].StreamOptions, reqs[2].StreamOptions)
	}
	if len(sl.got()) != 0 {
		t.Errorf("fallback slept %v, want no backoff", sl.got())
	}
}

func TestChatTemperature(t *testing.T) {
	zero, half, seed := 0.0, 0.5, 42
	tests := []struct {
		name string
		temp *float64
		want string // in the body; "" = absent
	}{
		{"nil", nil, ""},
		{"zero", &zero, `"temperature":0`},
		{"half", &half, `"temperature":0.5`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := llmtest.NewServer(&llmtest.Script{Default: &llmtest.Reply{Content: "ok"}})
			defer srv.Close()
			c, _ := newClient(t, srv, nil)
			if _, err := c.Chat(t.Context(), llm.Request{Messages: user("hi"), Temperature: tt.temp, Seed: &seed, MaxTokens: 99}, nil); err != nil {
				t.Fatal(err)
			}
			r := srv.Requests()[0]
			body := string(r.Body)
			if tt.want == "" && strings.Contains(body, "temperature") || tt.want != "" && !strings.Contains(body, tt.want) {
				t.Errorf("body %s, want temperature %q", body, tt.want)
			}
			if r.Seed == nil || *r.Seed != 42 || r.MaxTokens != 99 {
				t.Errorf("seed %v, max tokens %d", r.Seed, r.MaxTokens)
			}
		})
	}
}

// TestChatMaxTokensField: reasoning models get max_completion_tokens (the
// API rejects max_tokens for them); every other model gets max_tokens,
// the only length limit Ollama's OpenAI API reads (go-openai marks it
// deprecated, and llm.go keeps it on purpose).
func TestChatMaxTokensField(t *testing.T) {
	tests := []struct {
		model, want, notWant string
	}{
		{"llama3.1:8b", `"max_tokens":99`, "max_completion_tokens"},
		{"gpt-4o", `"max_tokens":99`, "max_completion_tokens"},
		{"o3-mini", `"max_completion_tokens":99`, "max_tokens"},
		{"gpt-5", `"max_completion_tokens":99`, "max_tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.model, func(t *testing.T) {
			srv := llmtest.NewServer(&llmtest.Script{Default: &llmtest.Reply{Content: "ok"}})
			defer srv.Close()
			c, _ := newClient(t, srv, func(m *config.Model) { m.Name = tt.model })
			if _, err := c.Chat(t.Context(), llm.Request{Messages: user("hi"), MaxTokens: 99}, nil); err != nil {
				t.Fatal(err)
			}
			body := string(srv.Requests()[0].Body)
			if !strings.Contains(body, tt.want) || strings.Contains(body, `"`+tt.notWant+`"`) {
				t.Errorf("model %s: body %s, want %s and no %s", tt.model, body, tt.want, tt.notWant)
			}
		})
	}
}

var readFile = llm.Tool{Name: "read_file", Description: "read a file", Parameters: map[string]any{
	"type": "object", "properties": map[string]any{"path": map[string]any{"type": "string"}}, "required": []string{"path"},
}}

func TestChatToolLoop(t *testing.T) {
	srv := llmtest.NewServer(&llmtest.Script{Replies: []llmtest.Reply{
		{ToolCalls: []llmtest.ToolCall{
			{Name: "read_file", Arguments: `{"path": "a/very/long/path/to/main.go"}`},
			{Name: "read_file", Arguments: `{"path": "missing.go"}`},
		}, ChunkSize: 5},
		{Content: "done reading"},
	}})
	defer srv.Close()
	c, _ := newClient(t, srv, nil)
	var calls []string
	handler := func(ctx context.Context, name, args string) (string, error) {
		calls = append(calls, name+" "+args)
		if strings.Contains(args, "missing") {
			return "", errors.New("no such file")
		}
		return "package main", nil
	}
	resp, err := c.Chat(t.Context(), llm.Request{Messages: user("fix it"), Tools: []llm.Tool{readFile}, ToolHandler: handler}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Content != "done reading" || resp.ToolRounds != 1 {
		t.Errorf("resp = %+v", resp)
	}
	want := []string{`read_file {"path": "a/very/long/path/to/main.go"}`, `read_file {"path": "missing.go"}`}
	if strings.Join(calls, "|") != strings.Join(want, "|") {
		t.Errorf("tool calls = %q, want %q", calls, want)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || len(reqs[0].Tools) != 1 || reqs[0].Tools[0] != "read_file" {
		t.Fatalf("requests = %+v", reqs)
	}
	msgs := reqs[1].Messages
	if len(msgs) != 4 || msgs[1].Role != "assistant" || len(msgs[1].ToolCalls) != 2 ||
		msgs[2].Role != "tool" || msgs[2].Content != "package main" || msgs[2].ToolCallID != msgs[1].ToolCalls[0].ID ||
		msgs[3].Content != "error: no such file" {
		t.Errorf("second request messages = %+v", msgs)
	}
}

func TestChatToolRoundsBounded(t *testing.T) {
	srv := llmtest.NewServer(&llmtest.Script{
		Rules:   []llmtest.Rule{{Contains: "final", Reply: &llmtest.Reply{Content: "unused"}, MaxUses: 0}},
		Default: &llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "read_file", Arguments: `{"path":"x"}`}}, Content: "thinking"},
	})
	defer srv.Close()
	c, _ := newClient(t, srv, nil)
	n := 0
	handler := func(ctx context.Context, name, args string) (string, error) { n++; return "x", nil }
	resp, err := c.Chat(t.Context(), llm.Request{Messages: user("go"), Tools: []llm.Tool{readFile}, ToolHandler: handler, MaxToolRounds: 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.Requests()
	if n != 2 || resp.ToolRounds != 2 || len(reqs) != 3 || resp.Content != "thinking" {
		t.Fatalf("handler ran %d times, rounds %d, %d requests, content %q", n, resp.ToolRounds, len(reqs), resp.Content)
	}
	if reqs[1].ToolChoice != "" || reqs[2].ToolChoice != "none" || len(reqs[2].Tools) != 1 {
		t.Errorf("tool_choice %q then %q (tools %v); want unset, then \"none\" with the tools still described",
			reqs[1].ToolChoice, reqs[2].ToolChoice, reqs[2].Tools)
	}
}

func TestChatToolsRejected(t *testing.T) {
	srv := llmtest.NewServer(&llmtest.Script{NoTools: true, Default: &llmtest.Reply{Content: "plain"}})
	defer srv.Close()
	c, _ := newClient(t, srv, nil)
	handler := func(ctx context.Context, name, args string) (string, error) { return "", nil }
	for range 2 {
		resp, err := c.Chat(t.Context(), llm.Request{Messages: user("go"), Tools: []llm.Tool{readFile}, ToolHandler: handler}, nil)
		if err != nil || resp.Content != "plain" {
			t.Fatalf("Chat = %+v, %v", resp, err)
		}
	}
	reqs := srv.Requests()
	if len(reqs) != 3 || len(reqs[0].Tools) != 1 || len(reqs[1].Tools) != 0 || len(reqs[2].Tools) != 0 {
		t.Errorf("%d requests; want tools offered once, then remembered as unsupported", len(reqs))
	}
}

func TestChatToolsRejectedWith500(t *testing.T) {
	srv := llmtest.NewServer(&llmtest.Script{Replies: []llmtest.Reply{
		{Fault: llmtest.FaultStatus, Status: 500, Error: "tools param requires --jinja flag"},
		{Content: "plain"},
	}})
	defer srv.Close()
	c, sl := newClient(t, srv, nil)
	handler := func(ctx context.Context, name, args string) (string, error) { return "", nil }
	resp, err := c.Chat(t.Context(), llm.Request{Messages: user("go"), Tools: []llm.Tool{readFile}, ToolHandler: handler}, nil)
	if err != nil || resp.Content != "plain" {
		t.Fatalf("Chat = %+v, %v", resp, err)
	}
	if reqs := srv.Requests(); len(reqs) != 2 || len(reqs[1].Tools) != 0 || len(sl.got()) != 0 {
		t.Errorf("%d requests, second offered %v, waits %v; want a retry without tools and no backoff", len(reqs), reqs[1].Tools, sl.got())
	}
}

func TestChatCancelAbortsStream(t *testing.T) {
	srv := llmtest.NewServer(&llmtest.Script{Default: &llmtest.Reply{
		Content: strings.Repeat("slow ", 100), ChunkSize: 5, ChunkDelay: llmtest.Duration(time.Hour),
	}})
	defer srv.Close()
	c, _ := newClient(t, srv, func(m *config.Model) { m.Timeout = config.Duration(time.Hour) })
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() {
		_, err := c.Chat(ctx, llm.Request{Messages: user("hi")}, func(string) { cancel() })
		done <- err
	}()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Chat error = %v, want context.Canceled", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Chat did not return after cancel")
	}
	if n := len(srv.Requests()); n != 1 {
		t.Errorf("%d requests after cancel, want 1 (no retry)", n)
	}
}

func TestCost(t *testing.T) {
	m := config.Model{PriceIn: 0.15, PriceOut: 0.60}
	if got := llm.Cost(m, llm.Usage{In: 1_000_000, Out: 500_000}); got < 0.449 || got > 0.451 {
		t.Errorf("Cost = %v, want 0.45", got)
	}
	if got := llm.Cost(config.Model{}, llm.Usage{In: 5, Out: 5}); got != 0 {
		t.Errorf("Cost without prices = %v, want 0", got)
	}
}

func TestModels(t *testing.T) {
	srv := llmtest.NewServer(&llmtest.Script{Models: []string{"a", "b"}})
	defer srv.Close()
	c, _ := newClient(t, srv, nil)
	ids, err := c.Models(t.Context())
	if err != nil || strings.Join(ids, ",") != "a,b" {
		t.Errorf("Models = %v, %v; want [a b]", ids, err)
	}
	c = llm.New(config.Model{BaseURL: srv.URL() + "/nope", Name: "m"}, nil)
	if _, err := c.Models(t.Context()); !errors.Is(err, llm.ErrNotFound) || !strings.Contains(err.Error(), "FIXPOINT_BASE_URL") {
		t.Errorf("Models on a wrong base URL = %v, want ErrNotFound naming FIXPOINT_BASE_URL", err)
	}
}

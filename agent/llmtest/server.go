package llmtest

import (
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Server is a scripted OpenAI-compatible HTTP server on a real loopback
// listener. It is safe for concurrent use; requests are answered in the
// order they arrive.
type Server struct {
	ln   net.Listener
	srv  *http.Server
	done chan struct{} // closed by Close; unblocks hanging handlers

	mu       sync.Mutex // guards the fields below
	script   *Script
	next     int   // index of the next unused entry of script.Replies
	uses     []int // per rule, how many requests it answered
	requests []Recorded
	closed   bool
}

// Recorded is one request the server received, for tests to assert on.
type Recorded struct {
	N             int // 1-based request number (all endpoints)
	Path          string
	Model         string
	Messages      []Message
	Tools         []string // names of the offered tools
	ToolChoice    string   // tool_choice when it is a string ("auto", "none", "required")
	Stream        bool
	StreamOptions bool // stream_options.include_usage was set
	Temperature   *float64
	Seed          *int
	MaxTokens     int
	Authorization string // the Authorization header, if any
	Body          []byte
	// Reply says which scripted entry answered: "rule 2", "reply 0",
	// "default", "none", or "" for non-chat endpoints.
	Reply string
}

// Message is a chat message as received.
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	Name       string     `json:"name,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
	ToolCalls  []ToolCall `json:"-"`
}

// NewServer starts a server for script on 127.0.0.1 with a free port. It
// panics if it cannot listen, like httptest.NewServer. A nil script is an
// empty one. Call Close when done.
func NewServer(script *Script) *Server {
	s, err := Listen("127.0.0.1:0", script)
	if err != nil {
		panic(fmt.Sprintf("llmtest: %v", err))
	}
	return s
}

// Listen starts a server for script on addr.
func Listen(addr string, script *Script) (*Server, error) {
	if script == nil {
		script = &Script{}
	}
	if err := script.compile(); err != nil {
		return nil, fmt.Errorf("llmtest: %w", err)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen %s: %w", addr, err)
	}
	s := &Server{ln: ln, done: make(chan struct{}), script: script, uses: make([]int, len(script.Rules))}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("POST /v1/embeddings", s.embeddings)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go s.srv.Serve(ln) // exits when Close closes the listener
	return s, nil
}

// URL returns the base URL, ending in /v1.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() + "/v1" }

// Close stops the server and unblocks hanging replies.
func (s *Server) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	close(s.done)
	s.mu.Unlock()
	s.srv.Close()
}

// Requests returns a copy of the request log.
func (s *Server) Requests() []Recorded {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Recorded(nil), s.requests...)
}

// Push appends replies to the ordered list.
func (s *Server) Push(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script.Replies = append(s.script.Replies, replies...)
}

// Remaining returns how many ordered replies have not been used.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script.Replies) - s.next
}

type chatRequest struct {
	Model    string `json:"model"`
	Messages []struct {
		Role       string          `json:"role"`
		Content    json.RawMessage `json:"content"`
		Name       string          `json:"name"`
		ToolCallID string          `json:"tool_call_id"`
		ToolCalls  []struct {
			ID       string `json:"id"`
			Function struct {
				Name      string `json:"name"`
				Arguments string `json:"arguments"`
			} `json:"function"`
		} `json:"tool_calls"`
	} `json:"messages"`
	Tools []struct {
		Function struct {
			Name string `json:"name"`
		} `json:"function"`
	} `json:"tools"`
	ToolChoice    json.RawMessage `json:"tool_choice"`
	Stream        bool            `json:"stream"`
	StreamOptions *struct {
		IncludeUsage bool `json:"include_usage"`
	} `json:"stream_options"`
	Temperature         *float64 `json:"temperature"`
	Seed                *int     `json:"seed"`
	MaxTokens           int      `json:"max_tokens"`
	MaxCompletionTokens int      `json:"max_completion_tokens"`
}

// contentText flattens a message content that is a string or an array of
// parts.
func contentText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var parts []struct {
		Text string `json:"text"`
	}
	if json.Unmarshal(raw, &parts) == nil {
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

func (s *Server) record(r *http.Request, model string, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, Recorded{
		N: len(s.requests) + 1, Path: r.URL.Path, Model: model, Body: body,
		Authorization: r.Header.Get("Authorization"),
	})
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return
	}
	var req chatRequest
	if err := json.Unmarshal(body, &req); err != nil {
		s.record(r, "", body)
		writeError(w, http.StatusBadRequest, "llmtest: bad request body: "+err.Error())
		return
	}
	rec := Recorded{
		Path: r.URL.Path, Model: req.Model, Stream: req.Stream, Body: body,
		StreamOptions: req.StreamOptions != nil && req.StreamOptions.IncludeUsage,
		Temperature:   req.Temperature, Seed: req.Seed, MaxTokens: max(req.MaxTokens, req.MaxCompletionTokens),
		Authorization: r.Header.Get("Authorization"),
	}
	for _, m := range req.Messages {
		msg := Message{Role: m.Role, Content: contentText(m.Content), Name: m.Name, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			msg.ToolCalls = append(msg.ToolCalls, ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: tc.Function.Arguments})
		}
		rec.Messages = append(rec.Messages, msg)
	}
	for _, t := range req.Tools {
		rec.Tools = append(rec.Tools, t.Function.Name)
	}
	json.Unmarshal(req.ToolChoice, &rec.ToolChoice) // stays "" for an object

	s.mu.Lock()
	script := s.script
	var reply *Reply
	switch {
	case script.NoTools && len(req.Tools) > 0:
		rec.Reply = "no_tools"
	case script.NoStreamOptions && req.StreamOptions != nil:
		rec.Reply = "no_stream_options"
	default:
		reply, rec.Reply = s.pick(&rec)
	}
	rec.N = len(s.requests) + 1
	s.requests = append(s.requests, rec)
	n := rec.N
	s.mu.Unlock()

	switch {
	case rec.Reply == "no_tools":
		writeError(w, http.StatusBadRequest, "this model does not support tools")
		return
	case rec.Reply == "no_stream_options":
		writeError(w, http.StatusBadRequest, "Unrecognized request argument supplied: stream_options")
		return
	case reply == nil:
		writeError(w, http.StatusBadRequest, fmt.Sprintf("llmtest: no scripted reply left for request %d", n))
		return
	}
	s.answer(w, r, &req, reply, n)
}

// pick chooses the reply for rec. s.mu must be held.
func (s *Server) pick(rec *Recorded) (*Reply, string) {
	for i := range s.script.Rules {
		rule := &s.script.Rules[i]
		if !rule.matches(rec) {
			continue
		}
		if rule.MaxUses > 0 && s.uses[i] >= rule.MaxUses {
			continue
		}
		if len(rule.Replies) > 0 {
			if s.uses[i] >= len(rule.Replies) {
				continue
			}
			s.uses[i]++
			return &rule.Replies[s.uses[i]-1], fmt.Sprintf("rule %d", i)
		}
		s.uses[i]++
		return rule.Reply, fmt.Sprintf("rule %d", i)
	}
	if s.next < len(s.script.Replies) {
		s.next++
		return &s.script.Replies[s.next-1], fmt.Sprintf("reply %d", s.next-1)
	}
	if s.script.Default != nil {
		return s.script.Default, "default"
	}
	return nil, "none"
}

func (r *Rule) matches(rec *Recorded) bool {
	if r.Model != "" && r.Model != rec.Model {
		return false
	}
	var texts []string
	for _, m := range rec.Messages {
		if r.Role == "" || m.Role == r.Role {
			texts = append(texts, m.Content)
		}
	}
	if r.Last && len(texts) > 0 {
		texts = texts[len(texts)-1:]
	}
	text := strings.Join(texts, "\n")
	if r.Contains != "" && !strings.Contains(text, r.Contains) {
		return false
	}
	if r.re != nil && !r.re.MatchString(text) {
		return false
	}
	return true
}

func writeError(w http.ResponseWriter, status int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{"message": msg, "type": "llmtest_error", "code": nil}})
}

// answer writes reply, applying its fault.
func (s *Server) answer(w http.ResponseWriter, r *http.Request, req *chatRequest, reply *Reply, n int) {
	switch reply.Fault {
	case Fault429:
		ra := reply.RetryAfter
		if ra == "" {
			ra = "1"
		}
		w.Header().Set("Retry-After", ra)
		writeError(w, http.StatusTooManyRequests, or(reply.Error, "llmtest: rate limited"))
		return
	case Fault500:
		writeError(w, http.StatusInternalServerError, or(reply.Error, "llmtest: internal error"))
		return
	case FaultStatus:
		status := reply.Status
		if status == 0 {
			status = http.StatusInternalServerError
		}
		writeError(w, status, or(reply.Error, "llmtest: scripted status "+strconv.Itoa(status)))
		return
	case FaultOllama:
		status := reply.Status
		if status == 0 {
			status = http.StatusBadRequest
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"error": or(reply.Error, "llmtest: ollama error")})
		return
	case FaultGarbage:
		w.Header().Set("Content-Type", "application/json")
		if req.Stream {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"id\": \"x\", \"choices\": [garbage\n\n")
			return
		}
		io.WriteString(w, "<html><body>502 Bad Gateway (llmtest garbage)</body></html>")
		return
	case FaultHang:
		var timer <-chan time.Time
		if reply.Hang > 0 {
			t := time.NewTimer(time.Duration(reply.Hang))
			defer t.Stop()
			timer = t.C
		}
		select {
		case <-r.Context().Done():
			return
		case <-s.done:
			return
		case <-timer:
		}
	}
	content, calls := reply.Content, reply.ToolCalls
	if reply.Fault == FaultEmptyChoices {
		content, calls = "", nil
	}
	var choice string
	if json.Unmarshal(req.ToolChoice, &choice) == nil && choice == "none" {
		calls = nil // like a real server: tool_choice "none" forbids tool calls
	}
	usage := reply.Usage
	if usage == nil {
		u := Usage{PromptTokens: estimate(req), CompletionTokens: (len(content) + 3) / 4}
		for _, c := range calls {
			u.CompletionTokens += (len(c.Name) + len(c.Arguments) + 3) / 4
		}
		usage = &u
	}
	if reply.NoUsage {
		usage = nil
	}
	finish := reply.FinishReason
	if finish == "" {
		finish = "stop"
		if len(calls) > 0 {
			finish = "tool_calls"
		}
	}
	id := fmt.Sprintf("chatcmpl-llmtest-%d", n)
	if req.Stream {
		s.stream(w, r, req, reply, id, content, calls, finish, usage)
		return
	}
	msg := map[string]any{"role": "assistant", "content": content}
	if len(calls) > 0 {
		msg["tool_calls"] = wireCalls(calls, true)
	}
	resp := map[string]any{
		"id": id, "object": "chat.completion", "created": time.Now().Unix(), "model": modelOf(req),
		"choices": []any{map[string]any{"index": 0, "message": msg, "finish_reason": finish}},
	}
	if reply.Fault == FaultEmptyChoices {
		resp["choices"] = []any{}
	}
	if usage != nil {
		resp["usage"] = wireUsage(usage)
	}
	b, _ := json.Marshal(resp)
	w.Header().Set("Content-Type", "application/json")
	if reply.Fault == FaultTruncate || reply.Fault == FaultReset {
		b = b[:len(b)/2]
	}
	w.Write(b)
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, req *chatRequest, reply *Reply, id, content string, calls []ToolCall, finish string, usage *Usage) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	flusher, _ := w.(http.Flusher)
	base := map[string]any{"id": id, "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": modelOf(req)}
	send := func(choices []any, extra map[string]any) bool {
		m := map[string]any{"choices": choices}
		for k, v := range base {
			m[k] = v
		}
		for k, v := range extra {
			m[k] = v
		}
		b, _ := json.Marshal(m)
		if _, err := fmt.Fprintf(w, "data: %s\n\n", b); err != nil {
			return false
		}
		if flusher != nil {
			flusher.Flush()
		}
		return true
	}
	// pause waits ChunkDelay after a content chunk.
	pause := func() bool {
		if reply.ChunkDelay <= 0 {
			return true
		}
		select {
		case <-time.After(time.Duration(reply.ChunkDelay)):
			return true
		case <-r.Context().Done():
			return false
		case <-s.done:
			return false
		}
	}
	delta := func(d map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": d, "finish_reason": finish}}
	}
	if reply.Fault == FaultEmptyChoices {
		send([]any{}, nil)
		fmt.Fprint(w, "data: [DONE]\n\n")
		return
	}
	if !send(delta(map[string]any{"role": "assistant", "content": ""}, nil), nil) {
		return
	}
	size := reply.ChunkSize
	if size <= 0 {
		size = 16
	}
	chunks := splitChunks(content, size)
	truncating := reply.Fault == FaultTruncate || reply.Fault == FaultReset
	if truncating {
		chunks = chunks[:len(chunks)/2]
	}
	for _, c := range chunks {
		if !send(delta(map[string]any{"content": c}, nil), nil) || !pause() {
			return
		}
	}
	if truncating {
		if reply.Fault == FaultReset {
			panic(http.ErrAbortHandler)
		}
		return
	}
	for i, c := range wireCalls(calls, false) {
		// The first delta carries id, type and name; the arguments follow in
		// pieces, as real servers send them.
		args := calls[i].Arguments
		first := map[string]any{"index": i, "id": c["id"], "type": "function", "function": map[string]any{"name": calls[i].Name, "arguments": ""}}
		if !send(delta(map[string]any{"tool_calls": []any{first}}, nil), nil) {
			return
		}
		for _, piece := range splitChunks(args, size) {
			d := map[string]any{"index": i, "function": map[string]any{"arguments": piece}}
			if !send(delta(map[string]any{"tool_calls": []any{d}}, nil), nil) {
				return
			}
		}
	}
	if !send(delta(map[string]any{}, finish), nil) {
		return
	}
	if usage != nil && req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
		if !send([]any{}, map[string]any{"usage": wireUsage(usage)}) {
			return
		}
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if flusher != nil {
		flusher.Flush()
	}
}

func wireCalls(calls []ToolCall, full bool) []map[string]any {
	var out []map[string]any
	for i, c := range calls {
		id := c.ID
		if id == "" {
			id = fmt.Sprintf("call_%d", i+1)
		}
		m := map[string]any{"id": id, "type": "function", "function": map[string]any{"name": c.Name, "arguments": c.Arguments}}
		if full {
			m["index"] = i
		}
		out = append(out, m)
	}
	return out
}

func wireUsage(u *Usage) map[string]int {
	return map[string]int{"prompt_tokens": u.PromptTokens, "completion_tokens": u.CompletionTokens, "total_tokens": u.PromptTokens + u.CompletionTokens}
}

func splitChunks(s string, size int) []string {
	var out []string
	for len(s) > 0 {
		n := min(size, len(s))
		// Do not split a UTF-8 sequence.
		for n < len(s) && n > 0 && s[n]&0xC0 == 0x80 {
			n--
		}
		if n == 0 {
			n = min(size, len(s))
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func estimate(req *chatRequest) int {
	n := 0
	for _, m := range req.Messages {
		n += len(contentText(m.Content)) + 16
	}
	return (n + 3) / 4
}

func modelOf(req *chatRequest) string {
	if req.Model == "" {
		return "llmtest"
	}
	return req.Model
}

func or(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	s.record(r, "", nil)
	s.mu.Lock()
	ids := s.script.Models
	s.mu.Unlock()
	if len(ids) == 0 {
		ids = []string{"llmtest"}
	}
	var data []any
	for _, id := range ids {
		data = append(data, map[string]any{"id": id, "object": "model", "created": 0, "owned_by": "llmtest"})
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"object": "list", "data": data})
}

func (s *Server) embeddings(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model string          `json:"model"`
		Input json.RawMessage `json:"input"`
	}
	err := json.Unmarshal(body, &req)
	s.record(r, req.Model, body)
	if err != nil {
		writeError(w, http.StatusBadRequest, "llmtest: bad request body: "+err.Error())
		return
	}
	s.mu.Lock()
	dims := s.script.EmbeddingDims
	s.mu.Unlock()
	var inputs []string
	var one string
	if json.Unmarshal(req.Input, &one) == nil {
		inputs = []string{one}
	} else if err := json.Unmarshal(req.Input, &inputs); err != nil {
		writeError(w, http.StatusBadRequest, "llmtest: input must be a string or an array of strings")
		return
	}
	var data []any
	tokens := 0
	for i, in := range inputs {
		data = append(data, map[string]any{"object": "embedding", "index": i, "embedding": Embed(in, dims)})
		tokens += (len(in) + 3) / 4
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{
		"object": "list", "data": data, "model": or(req.Model, "llmtest"),
		"usage": map[string]int{"prompt_tokens": tokens, "total_tokens": tokens},
	})
}

// Embed returns the deterministic unit-length vector the server gives text:
// a hashed bag of lower-cased words, so texts sharing words are similar.
// dims 0 means 64.
func Embed(text string, dims int) []float32 {
	if dims <= 0 {
		dims = 64
	}
	v := make([]float64, dims)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_')
	})
	for _, w := range words {
		h := sha256.Sum256([]byte(w))
		i := binary.LittleEndian.Uint32(h[:4]) % uint32(dims)
		sign := 1.0
		if h[4]&1 == 1 {
			sign = -1
		}
		v[i] += sign
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, dims)
	if norm == 0 {
		out[0] = 1
		return out
	}
	norm = math.Sqrt(norm)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}

// errClosed is reported by Wait when the server is closed.
var errClosed = errors.New("llmtest: server closed")

// Wait blocks until the server has received n requests, ctx ends, or the
// server closes.
func (s *Server) Wait(ctx context.Context, n int) error {
	for {
		s.mu.Lock()
		got := len(s.requests)
		s.mu.Unlock()
		if got >= n {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-s.done:
			return errClosed
		case <-time.After(5 * time.Millisecond):
		}
	}
}

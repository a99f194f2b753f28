// Package llm is fixpoint's client for any OpenAI-compatible chat endpoint
// (OpenAI, OpenRouter, Ollama, vLLM, llama.cpp server, LM Studio).
//
// [Client.Chat] sends a [Request] and always streams: onDelta receives the
// text as it arrives and the [Response] carries the whole text, the token
// [Usage] and the number of tool rounds. Around go-openai it adds:
//
//   - a request timeout (config model.timeout; go-openai's default client
//     has none);
//   - retries with exponential backoff and jitter on 429, 5xx, timeouts,
//     malformed replies and truncated streams, honouring Retry-After
//     (seconds or an HTTP date), bounded by model.max_retries;
//   - a tool loop: with Request.Tools and a ToolHandler, tool calls are run
//     and answered until the model replies with text or MaxToolRounds is
//     reached. An endpoint that rejects tools (a 400 mentioning tools) is
//     asked again without them, and the Client remembers it;
//   - servers that reject stream_options are asked again without it, and
//     the Client remembers it;
//   - temperature 0 really sent (go-openai drops it through omitempty,
//     upstream #413): the HTTP transport adds "temperature": 0 to the body;
//   - errors ([*Error]) whose messages say what to do, with sentinel kinds
//     (ErrAuth, ErrRateLimited, ...) for errors.Is;
//   - usage estimated at ~4 characters per token when the server sends none
//     (Usage.Estimated), and [Cost] from the configured prices.
//
// Cancelling the context aborts a stream at once.
package llm

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/fixpoint-dev/fixpoint/agent/redact"
	"github.com/fixpoint-dev/fixpoint/config"
)

// Message is one chat message.
type Message struct {
	Role       string     // "system", "user", "assistant" or "tool"
	Content    string     //
	Name       string     // optional
	ToolCallID string     // for role "tool": the call answered
	ToolCalls  []ToolCall // for role "assistant": the calls it made
}

// ToolCall is a model's request to run a tool.
type ToolCall struct {
	ID        string
	Name      string
	Arguments string // JSON text
}

// Tool describes a function the model may call.
type Tool struct {
	Name        string
	Description string
	// Parameters is the JSON Schema of the arguments: a json.RawMessage, a
	// map, or any value that marshals to a schema. nil means no arguments.
	Parameters any
}

// Request is one chat call. Zero values fall back to the Client's
// config.Model (Model → Name, Temperature, Seed, MaxTokens).
type Request struct {
	Model    string
	Messages []Message
	// Tools are offered when ToolHandler is set too.
	Tools []Tool
	// ToolHandler runs a tool call and returns its result text. An error is
	// sent to the model as "error: ..." and the loop goes on; only a
	// cancelled context stops it.
	ToolHandler func(ctx context.Context, name, args string) (string, error)
	// MaxToolRounds bounds the tool rounds; 0 means 8. After the last round
	// the model is asked once more with tool_choice "none"; tool calls it
	// makes anyway are ignored.
	MaxToolRounds int
	Temperature   *float64
	Seed          *int
	MaxTokens     int
}

// Response is the result of Chat.
type Response struct {
	Content      string // the final text (of the last attempt, after retries)
	Usage        Usage  // totals over all tool rounds
	Model        string // the model that answered, as the server names it
	FinishReason string
	ToolRounds   int
	Attempts     int // HTTP attempts over all rounds, retries included
}

// Usage counts tokens.
type Usage struct {
	In, Out int
	// Estimated is true when the server sent no usage for at least one
	// call and ~4 characters per token was assumed.
	Estimated bool
}

// Add returns u + v.
func (u Usage) Add(v Usage) Usage {
	return Usage{In: u.In + v.In, Out: u.Out + v.Out, Estimated: u.Estimated || v.Estimated}
}

// Cost returns the USD cost of u at m's prices (per million tokens); 0
// when the prices are unknown.
func Cost(m config.Model, u Usage) float64 {
	return float64(u.In)*m.PriceIn/1e6 + float64(u.Out)*m.PriceOut/1e6
}

// Options configure a Client. nil and zero values mean the defaults.
type Options struct {
	// Logger receives retries and fallbacks; nil discards.
	Logger *slog.Logger
	// HTTPClient is used as given, except that its Transport is wrapped;
	// nil means a new client whose Timeout is config model.timeout
	// (default 120s).
	HTTPClient *http.Client
	// Sleep waits between retries; nil waits on a timer, returning early
	// with ctx.Err() when ctx ends. Tests pass a recorder that returns at
	// once.
	Sleep func(ctx context.Context, d time.Duration) error
	// Rand returns jitter in [0,1); nil means math/rand/v2.
	Rand func() float64
	// Now is the clock for Retry-After dates; nil means time.Now.
	Now func() time.Time
	// BaseDelay is the first backoff; 0 means 500ms. It doubles per retry.
	BaseDelay time.Duration
	// MaxDelay caps the backoff; 0 means 30s.
	MaxDelay time.Duration
	// MaxRetryAfter is the longest Retry-After honoured; a longer one fails
	// at once. 0 means 2 minutes.
	MaxRetryAfter time.Duration
	// OnRetry, when set, is called before each retry wait (for progress).
	// Text streamed by the failed attempt is streamed again by the retry.
	OnRetry func(attempt int, wait time.Duration, err error)
}

// Client talks to one OpenAI-compatible endpoint. It is safe for
// concurrent use.
type Client struct {
	cfg      config.Model
	oa       *openai.Client
	opts     Options
	log      *slog.Logger
	endpoint string
	timeout  time.Duration

	noTools         atomic.Bool // the endpoint rejected tools once
	noStreamOptions atomic.Bool // the endpoint rejected stream_options once
}

// New returns a client for cfg. It does not contact the endpoint.
func New(cfg config.Model, opts *Options) *Client {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Sleep == nil {
		o.Sleep = sleep
	}
	if o.Rand == nil {
		o.Rand = rand.Float64
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.BaseDelay <= 0 {
		o.BaseDelay = 500 * time.Millisecond
	}
	if o.MaxDelay <= 0 {
		o.MaxDelay = 30 * time.Second
	}
	if o.MaxRetryAfter <= 0 {
		o.MaxRetryAfter = 2 * time.Minute
	}
	timeout := cfg.Timeout.D()
	if timeout <= 0 {
		timeout = 120 * time.Second
	}
	var hc http.Client
	if o.HTTPClient != nil {
		hc = *o.HTTPClient
		if hc.Timeout > 0 {
			timeout = hc.Timeout
		}
	} else {
		hc.Timeout = timeout
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	hc.Transport = &transport{base: base}
	if cfg.BaseURL == "" {
		cfg.BaseURL = "https://api.openai.com/v1"
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	oc.HTTPClient = &hc
	return &Client{
		cfg: cfg, oa: openai.NewClientWithConfig(oc), opts: o, log: o.Logger,
		endpoint: cleanEndpoint(oc.BaseURL), timeout: timeout,
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (c *Client) now() time.Time { return c.opts.Now() }

// Cost returns the USD cost of u at the client's configured prices.
func (c *Client) Cost(u Usage) float64 { return Cost(c.cfg, u) }

// Chat sends req and streams the reply text to onDelta (which may be nil),
// running tool calls through req.ToolHandler. Errors are *Error, or the
// context's error when ctx ended; with an error the returned Response, when
// not nil, holds the usage and attempts of the rounds that succeeded.
func (c *Client) Chat(ctx context.Context, req Request, onDelta func(string)) (*Response, error) {
	if onDelta == nil {
		onDelta = func(string) {}
	}
	model := req.Model
	if model == "" {
		model = c.cfg.Name
	}
	maxRounds := req.MaxToolRounds
	if maxRounds <= 0 {
		maxRounds = 8
	}
	msgs := toWire(req.Messages)
	resp := &Response{}
	for {
		useTools := len(req.Tools) > 0 && req.ToolHandler != nil && !c.noTools.Load()
		final := resp.ToolRounds >= maxRounds
		out, err := c.complete(ctx, req, model, msgs, useTools, final, onDelta)
		if out != nil {
			resp.Attempts += out.attempts
		}
		if err != nil {
			return resp, err
		}
		resp.Usage = resp.Usage.Add(out.usage)
		resp.Model, resp.FinishReason, resp.Content = out.model, out.finish, out.content
		if len(out.calls) == 0 || !out.toolsSent {
			return resp, nil
		}
		resp.ToolRounds++
		msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleAssistant, Content: out.content, ToolCalls: out.calls})
		for _, call := range out.calls {
			result, err := req.ToolHandler(ctx, call.Function.Name, call.Function.Arguments)
			if ctx.Err() != nil {
				return resp, ctx.Err()
			}
			if err != nil {
				result = "error: " + err.Error()
			}
			msgs = append(msgs, openai.ChatCompletionMessage{Role: openai.ChatMessageRoleTool, Content: result, ToolCallID: call.ID, Name: call.Function.Name})
		}
	}
}

// completion is one successful model turn.
type completion struct {
	content   string
	calls     []openai.ToolCall
	finish    string
	model     string
	usage     Usage
	attempts  int
	toolsSent bool // tools were offered in the attempt that succeeded
}

// complete runs one turn with retries and fallbacks.
// With final, tools are still described (the history holds tool calls) but
// tool_choice "none" asks for text.
func (c *Client) complete(ctx context.Context, req Request, model string, msgs []openai.ChatCompletionMessage, useTools, final bool, onDelta func(string)) (*completion, error) {
	retries := c.cfg.MaxRetries
	if retries < 0 {
		retries = 0
	}
	attempts := 0
	for retry := 0; ; {
		wire, zeroTemp := c.wireRequest(req, model, msgs, useTools, final)
		st := &callState{zeroTemperature: zeroTemp}
		attempts++
		out, err := c.stream(withState(ctx, st), wire, onDelta)
		if err == nil {
			out.attempts = attempts
			out.toolsSent = useTools && !final
			return out, nil
		}
		if ctx.Err() != nil {
			return &completion{attempts: attempts}, ctx.Err()
		}
		f := classify(err, st)
		switch {
		case f.toolsRejected && useTools:
			c.log.Warn("model endpoint rejected tools; continuing without them", "endpoint", c.endpoint, "detail", redact.String(f.detail))
			c.noTools.Store(true)
			useTools = false
			continue
		case f.streamRejected && !c.noStreamOptions.Load():
			c.log.Warn("model endpoint rejected stream_options; continuing without usage in streams", "endpoint", c.endpoint)
			c.noStreamOptions.Store(true)
			continue
		}
		if !f.retryable || retry >= retries {
			return &completion{attempts: attempts}, c.userError(f, attempts, model)
		}
		ra, _, _ := st.get()
		wait := c.retryDelay(retry, ra)
		if wait > c.opts.MaxRetryAfter {
			e := c.userError(f, attempts, model)
			e.Message += fmt.Sprintf(" (the server asked to wait %s)", wait.Round(time.Second))
			return &completion{attempts: attempts}, e
		}
		retry++
		c.log.Warn("model call failed; retrying", "endpoint", c.endpoint, "attempt", attempts, "wait", wait, "err", redact.String(err.Error()))
		if c.opts.OnRetry != nil {
			c.opts.OnRetry(retry, wait, err)
		}
		if err := c.opts.Sleep(ctx, wait); err != nil {
			return &completion{attempts: attempts}, err
		}
	}
}

// isReasoningModel reports models whose API rejects temperature and
// max_tokens (go-openai validates these client-side).
func isReasoningModel(model string) bool {
	for _, p := range []string{"o1", "o3", "o4", "gpt-5"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

func (c *Client) wireRequest(req Request, model string, msgs []openai.ChatCompletionMessage, useTools, final bool) (openai.ChatCompletionRequest, bool) {
	w := openai.ChatCompletionRequest{Model: model, Messages: msgs}
	if !c.noStreamOptions.Load() {
		w.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	temp, seed, maxTok := req.Temperature, req.Seed, req.MaxTokens
	if temp == nil {
		temp = c.cfg.Temperature
	}
	if seed == nil {
		seed = c.cfg.Seed
	}
	if maxTok == 0 {
		maxTok = c.cfg.MaxTokens
	}
	zeroTemp := false
	reasoning := isReasoningModel(model)
	if temp != nil && !reasoning {
		w.Temperature = float32(*temp)
		zeroTemp = *temp == 0
	}
	w.Seed = seed
	if maxTok > 0 {
		if reasoning {
			w.MaxCompletionTokens = maxTok
		} else {
			//lint:ignore SA1019 max_tokens is the only length limit Ollama's OpenAI API reads (ollama/ollama#14464 is open); TestChatMaxTokensField
			w.MaxTokens = maxTok
		}
	}
	if useTools {
		if final {
			w.ToolChoice = "none"
		}
		for _, t := range req.Tools {
			params := t.Parameters
			if params == nil {
				params = map[string]any{"type": "object", "properties": map[string]any{}}
			}
			w.Tools = append(w.Tools, openai.Tool{Type: openai.ToolTypeFunction, Function: &openai.FunctionDefinition{
				Name: t.Name, Description: t.Description, Parameters: params,
			}})
		}
	}
	return w, zeroTemp
}

// stream runs one HTTP attempt.
func (c *Client) stream(ctx context.Context, w openai.ChatCompletionRequest, onDelta func(string)) (*completion, error) {
	st, _ := ctx.Value(stateKey{}).(*callState)
	s, err := c.oa.CreateChatCompletionStream(ctx, w)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	// Close the body as soon as ctx ends, so a Recv blocked on a silent
	// server returns at once.
	stop := context.AfterFunc(ctx, func() { s.Close() })
	defer stop()

	var (
		out     completion
		text    strings.Builder
		calls   []openai.ToolCall
		choices bool
		usage   *openai.Usage
	)
	for {
		chunk, err := s.Recv()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
		if chunk.Model != "" {
			out.model = chunk.Model
		}
		if chunk.Usage != nil {
			usage = chunk.Usage
		}
		for _, ch := range chunk.Choices {
			choices = true
			if ch.Delta.Content != "" {
				text.WriteString(ch.Delta.Content)
				onDelta(ch.Delta.Content)
			}
			for _, tc := range ch.Delta.ToolCalls {
				calls = mergeToolCall(calls, tc)
			}
			if ch.FinishReason != "" {
				out.finish = string(ch.FinishReason)
			}
		}
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	_, sawDone, head := st.get()
	switch {
	case !choices && !sawDone && len(head) > 0 && !strings.HasPrefix(strings.TrimSpace(string(head)), "data:"):
		return nil, fmt.Errorf("%w: not an event stream; the reply began %q", ErrBadResponse, trim(string(head), 120))
	case !sawDone && out.finish == "":
		return nil, fmt.Errorf("%w (no finish_reason, no [DONE])", ErrTruncated)
	case !choices:
		return nil, errEmptyChoices
	}
	out.content = text.String()
	out.calls = calls
	if usage != nil && (usage.PromptTokens > 0 || usage.CompletionTokens > 0) {
		out.usage = Usage{In: usage.PromptTokens, Out: usage.CompletionTokens}
	} else {
		out.usage = estimateUsage(w, out.content, calls)
	}
	return &out, nil
}

// mergeToolCall accumulates a streamed tool-call delta by its Index.
func mergeToolCall(calls []openai.ToolCall, d openai.ToolCall) []openai.ToolCall {
	i := len(calls)
	if d.Index != nil {
		i = *d.Index
	} else if d.ID == "" && len(calls) > 0 {
		i = len(calls) - 1 // continuation without an index
	}
	for len(calls) <= i {
		calls = append(calls, openai.ToolCall{Type: openai.ToolTypeFunction})
	}
	c := &calls[i]
	if d.ID != "" {
		c.ID = d.ID
	}
	if d.Function.Name != "" {
		c.Function.Name += d.Function.Name
	}
	c.Function.Arguments += d.Function.Arguments
	return calls
}

// estimateUsage assumes ~4 characters per token.
func estimateUsage(w openai.ChatCompletionRequest, content string, calls []openai.ToolCall) Usage {
	in := 0
	for _, m := range w.Messages {
		in += len(m.Content) + 16
		for _, tc := range m.ToolCalls {
			in += len(tc.Function.Name) + len(tc.Function.Arguments)
		}
	}
	for _, t := range w.Tools {
		in += len(t.Function.Name) + len(t.Function.Description) + 64
	}
	out := len(content)
	for _, tc := range calls {
		out += len(tc.Function.Name) + len(tc.Function.Arguments)
	}
	return Usage{In: (in + 3) / 4, Out: (out + 3) / 4, Estimated: true}
}

func toWire(msgs []Message) []openai.ChatCompletionMessage {
	out := make([]openai.ChatCompletionMessage, 0, len(msgs))
	for _, m := range msgs {
		w := openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, Name: m.Name, ToolCallID: m.ToolCallID}
		for _, tc := range m.ToolCalls {
			w.ToolCalls = append(w.ToolCalls, openai.ToolCall{ID: tc.ID, Type: openai.ToolTypeFunction, Function: openai.FunctionCall{Name: tc.Name, Arguments: tc.Arguments}})
		}
		out = append(out, w)
	}
	return out
}

// Models lists the model ids the endpoint serves (GET /models), with the
// same retries and user-facing errors as Chat. It is the cheap check behind
// `fixpoint doctor`.
func (c *Client) Models(ctx context.Context) ([]string, error) {
	retries := max(c.cfg.MaxRetries, 0)
	for attempt := 1; ; attempt++ {
		st := &callState{}
		list, err := c.oa.ListModels(withState(ctx, st))
		if err == nil {
			ids := make([]string, 0, len(list.Models))
			for _, m := range list.Models {
				ids = append(ids, m.ID)
			}
			return ids, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		f := classify(err, st)
		if !f.retryable || attempt > retries {
			return nil, c.userError(f, attempt, c.cfg.Name)
		}
		ra, _, _ := st.get()
		wait := c.retryDelay(attempt-1, ra)
		if wait > c.opts.MaxRetryAfter {
			return nil, c.userError(f, attempt, c.cfg.Name)
		}
		if err := c.opts.Sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

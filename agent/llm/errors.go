package llm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"strings"
	"syscall"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/fixpoint-dev/fixpoint/agent/redact"
)

// Sentinel kinds of [Error], checked with errors.Is.
var (
	ErrAuth        = errors.New("model endpoint refused the credentials")
	ErrNotFound    = errors.New("model or endpoint not found")
	ErrRateLimited = errors.New("model endpoint is rate limiting")
	ErrServer      = errors.New("model endpoint failed")
	ErrTimeout     = errors.New("model endpoint timed out")
	ErrUnreachable = errors.New("model endpoint unreachable")
	ErrBadResponse = errors.New("model endpoint sent a malformed reply")
	ErrBadRequest  = errors.New("model endpoint rejected the request")
	// ErrTruncated: the reply stream ended early (a kind of ErrBadResponse
	// that is always retried).
	ErrTruncated = errors.New("model reply stream ended early")
)

// Error is a failed model call. Its message is written for users and says
// what to do next. Unwrap yields the kind sentinel and the cause.
type Error struct {
	Kind     error  // one of the Err* sentinels
	Endpoint string // base URL, without credentials
	Status   int    // HTTP status, 0 when none
	Attempts int    // attempts made, including the first
	Message  string // the full user-facing message
	Err      error  // the underlying error
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the kind and the cause.
func (e *Error) Unwrap() []error { return []error{e.Kind, e.Err} }

// failure is an attempt's error, classified.
type failure struct {
	kind           error
	status         int
	detail         string // server message, trimmed
	retryable      bool
	toolsRejected  bool
	streamRejected bool // stream_options rejected
	err            error
}

// classify sorts an attempt's error. st may be nil.
func classify(err error, st *callState) failure {
	f := failure{err: err}
	var head []byte
	if st != nil {
		_, _, head = st.get()
	}
	// *RequestError first: Ollama's {"error": "..."} gives a RequestError
	// wrapping an empty *APIError with status 0 (DEPS.md).
	var reqErr *openai.RequestError
	var apiErr *openai.APIError
	switch {
	case errors.As(err, &reqErr):
		f.status = reqErr.HTTPStatusCode
		f.detail = bodyMessage(reqErr.Body)
		if f.detail == "" && reqErr.Err != nil {
			f.detail = reqErr.Err.Error()
		}
	case errors.As(err, &apiErr):
		f.status = apiErr.HTTPStatusCode
		f.detail = apiErr.Message
		if f.status == 0 {
			// An error event inside a 200 stream.
			f.kind, f.retryable = ErrServer, true
			return f
		}
	}
	if f.status != 0 {
		return classifyStatus(f)
	}
	switch {
	case errors.Is(err, ErrTruncated):
		f.kind, f.retryable = ErrTruncated, true
	case errors.Is(err, errEmptyChoices):
		f.kind, f.retryable = ErrBadResponse, true
		f.detail = "the reply had no choices"
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		f.kind, f.retryable = ErrTimeout, true
	case errors.Is(err, syscall.ECONNREFUSED) || isDNS(err):
		f.kind = ErrUnreachable
	case isJSONError(err):
		f.kind, f.retryable = ErrBadResponse, true
		f.detail = fmt.Sprintf("%v; the reply began %q", err, trim(string(head), 120))
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) || isNetErr(err):
		f.kind, f.retryable = ErrTruncated, true
	default:
		f.kind = ErrBadResponse
	}
	return f
}

func classifyStatus(f failure) failure {
	low := strings.ToLower(f.detail)
	switch {
	case f.status == 401 || f.status == 403:
		f.kind = ErrAuth
	case f.status == 404:
		f.kind = ErrNotFound
	case f.status == 429:
		f.kind, f.retryable = ErrRateLimited, true
	case f.status == 408 || f.status >= 500:
		f.kind, f.retryable = ErrServer, true
	default:
		f.kind = ErrBadRequest
	}
	// Servers reject tools with 400 (Ollama: "does not support tools"),
	// 422, or 500 (llama.cpp: "tools param requires --jinja flag").
	switch f.status {
	case 400, 422, 500, 501:
		f.toolsRejected = strings.Contains(low, "tool") || strings.Contains(low, "function call")
		f.streamRejected = strings.Contains(low, "stream_options")
	}
	return f
}

var errEmptyChoices = errors.New("empty choices")

// bodyMessage extracts the message from an error body: OpenAI's
// {"error": {"message": ...}}, Ollama's {"error": "..."}, or the raw text.
func bodyMessage(body []byte) string {
	var m struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
	}
	if json.Unmarshal(body, &m) == nil {
		var s string
		if json.Unmarshal(m.Error, &s) == nil && s != "" {
			return trim(s, 300)
		}
		var o struct {
			Message string `json:"message"`
		}
		if json.Unmarshal(m.Error, &o) == nil && o.Message != "" {
			return trim(o.Message, 300)
		}
		if m.Message != "" {
			return trim(m.Message, 300)
		}
	}
	return trim(strings.TrimSpace(string(body)), 300)
}

func trim(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func isNetErr(err error) bool {
	var ne net.Error
	var oe *net.OpError
	return errors.As(err, &ne) || errors.As(err, &oe)
}

func isDNS(err error) bool {
	var de *net.DNSError
	return errors.As(err, &de)
}

func isJSONError(err error) bool {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	return errors.As(err, &se) || errors.As(err, &te) || strings.Contains(err.Error(), "invalid character")
}

// userError turns a final failure into an *Error whose message says what to
// do.
func (c *Client) userError(f failure, attempts int, model string) *Error {
	ep := c.endpoint
	detail := ""
	if f.detail != "" {
		detail = ": " + f.detail
	}
	var msg string
	switch f.kind {
	case ErrAuth:
		msg = fmt.Sprintf("model endpoint %s refused the API key (%d)%s: set FIXPOINT_API_KEY (or model.api_key)", ep, f.status, detail)
	case ErrNotFound:
		msg = fmt.Sprintf("model endpoint %s answered 404 for model %q%s: set FIXPOINT_MODEL to a model it serves, and check FIXPOINT_BASE_URL (it usually ends in /v1)", ep, model, detail)
	case ErrRateLimited:
		msg = fmt.Sprintf("model endpoint %s is rate limiting (429) after %d attempts%s: wait a minute and retry, or raise model.max_retries", ep, attempts, detail)
	case ErrServer:
		st := ""
		if f.status != 0 {
			st = fmt.Sprintf(" (%d)", f.status)
		}
		msg = fmt.Sprintf("model endpoint %s failed%s after %d attempts%s: retry later or check the server's logs", ep, st, attempts, detail)
	case ErrTimeout:
		msg = fmt.Sprintf("model endpoint %s did not answer within %s after %d attempts: raise model.timeout in ~/.config/fixpoint/config.toml or check that the server is up", ep, c.timeout, attempts)
	case ErrUnreachable:
		msg = fmt.Sprintf("cannot reach model endpoint %s (%v): check FIXPOINT_BASE_URL and that the server is running", ep, f.err)
	case ErrTruncated:
		msg = fmt.Sprintf("model endpoint %s cut the reply stream short after %d attempts: retry, or check a proxy between you and the server", ep, attempts)
	case ErrBadRequest:
		msg = fmt.Sprintf("model endpoint %s rejected the request (%d)%s: check FIXPOINT_MODEL and the model settings", ep, f.status, detail)
	default:
		if detail == "" {
			detail = ": " + trim(f.err.Error(), 300)
		}
		msg = fmt.Sprintf("model endpoint %s sent a reply that is not OpenAI-compatible after %d attempts%s: check FIXPOINT_BASE_URL points at an OpenAI-compatible API (usually ending in /v1)", ep, attempts, detail)
	}
	// Servers sometimes echo the key they refused.
	return &Error{Kind: f.kind, Endpoint: ep, Status: f.status, Attempts: attempts, Message: redact.String(msg), Err: f.err}
}

// cleanEndpoint strips credentials and queries from a base URL.
func cleanEndpoint(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	u.User = nil
	u.RawQuery = ""
	return u.String()
}

// retryDelay is the wait before retry number attempt (0-based): Retry-After
// when the server sent one, else exponential backoff with equal jitter.
func (c *Client) retryDelay(attempt int, retryAfter string) time.Duration {
	if d, ok := parseRetryAfter(retryAfter, c.now()); ok {
		return d
	}
	d := c.opts.BaseDelay << min(attempt, 20)
	if d > c.opts.MaxDelay || d <= 0 {
		d = c.opts.MaxDelay
	}
	return d/2 + time.Duration(c.opts.Rand()*float64(d/2))
}

package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// callState carries one HTTP attempt's facts between the transport and the
// client: go-openai hides the response headers and whether a stream ended
// with [DONE], and cannot send temperature 0.
type callState struct {
	zeroTemperature bool // rewrite the body to send "temperature": 0

	mu         sync.Mutex // guards the fields below
	retryAfter string
	sawDone    bool   // the body contained "data: [DONE]"
	head       []byte // the first bytes of the body, for messages about garbage
}

type stateKey struct{}

func withState(ctx context.Context, st *callState) context.Context {
	return context.WithValue(ctx, stateKey{}, st)
}

func (st *callState) get() (retryAfter string, sawDone bool, head []byte) {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.retryAfter, st.sawDone, st.head
}

// transport wraps a RoundTripper to capture Retry-After, the status, the
// body's head and the [DONE] marker, and to rewrite the temperature.
type transport struct {
	base http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	st, _ := req.Context().Value(stateKey{}).(*callState)
	if st == nil {
		return t.base.RoundTrip(req)
	}
	if st.zeroTemperature && req.Body != nil {
		if err := setTemperatureZero(req); err != nil {
			return nil, err
		}
	}
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	st.mu.Lock()
	st.retryAfter = resp.Header.Get("Retry-After")
	st.mu.Unlock()
	resp.Body = &watchBody{rc: resp.Body, st: st}
	return resp, nil
}

// setTemperatureZero adds "temperature": 0 to a JSON request body.
// go-openai's Temperature is a float32 with omitempty (upstream #413), so 0
// would otherwise mean "server default" (usually 0.7-1.0).
func setTemperatureZero(req *http.Request) error {
	b, err := io.ReadAll(req.Body)
	req.Body.Close()
	if err != nil {
		return err
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(b, &m) == nil {
		m["temperature"] = json.RawMessage("0")
		if nb, err := json.Marshal(m); err == nil {
			b = nb
		}
	}
	req.Body = io.NopCloser(bytes.NewReader(b))
	req.ContentLength = int64(len(b))
	req.Header.Set("Content-Length", strconv.Itoa(len(b)))
	req.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(b)), nil }
	return nil
}

const headSize = 256

var doneMarker = []byte("data: [DONE]")

// watchBody records the body's head and whether it contained [DONE].
type watchBody struct {
	rc   io.ReadCloser
	st   *callState
	tail []byte // last bytes, so a marker split across reads is found
}

func (w *watchBody) Read(p []byte) (int, error) {
	n, err := w.rc.Read(p)
	if n > 0 {
		w.st.mu.Lock()
		if len(w.st.head) < headSize {
			w.st.head = append(w.st.head, p[:min(n, headSize-len(w.st.head))]...)
		}
		buf := append(w.tail, p[:n]...)
		if !w.st.sawDone && bytes.Contains(buf, doneMarker) {
			w.st.sawDone = true
		}
		w.tail = append(w.tail[:0], buf[max(0, len(buf)-len(doneMarker)):]...)
		w.st.mu.Unlock()
	}
	return n, err
}

func (w *watchBody) Close() error { return w.rc.Close() }

// parseRetryAfter reads a Retry-After value: delay seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) (time.Duration, bool) {
	if v == "" {
		return 0, false
	}
	if s, err := strconv.Atoi(v); err == nil {
		if s < 0 {
			return 0, false
		}
		return time.Duration(s) * time.Second, true
	}
	if f, err := strconv.ParseFloat(v, 64); err == nil && f >= 0 {
		return time.Duration(f * float64(time.Second)), true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, t.Sub(now)), true
	}
	return 0, false
}

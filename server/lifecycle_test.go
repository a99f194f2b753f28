package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"
)

// rawClient writes raw bytes to a server and reads framed replies.
type rawClient struct {
	t    *testing.T
	conn net.Conn
	in   *bufio.Reader
	done chan error
}

func newRawClient(t *testing.T, opts *Options) *rawClient {
	t.Helper()
	cs, ss := net.Pipe()
	c := &rawClient{t: t, conn: cs, in: bufio.NewReader(cs), done: make(chan error, 1)}
	srv := New(opts)
	go func() { c.done <- srv.Serve(t.Context(), ss) }()
	t.Cleanup(func() { cs.Close() })
	return c
}

func (c *rawClient) write(s string) {
	c.t.Helper()
	c.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(c.conn, s); err != nil {
		c.t.Fatalf("write: %v", err)
	}
}

func frame(body string) string { return fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(body), body) }

func (c *rawClient) send(body string) { c.write(frame(body)) }

// read returns the next message body.
func (c *rawClient) read() map[string]any {
	c.t.Helper()
	c.conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	length := -1
	for {
		line, err := c.in.ReadString('\n')
		if err != nil {
			c.t.Fatalf("read header: %v", err)
		}
		line = strings.TrimSpace(line)
		if line == "" {
			break
		}
		if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
			length, _ = strconv.Atoi(v)
		}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(c.in, body); err != nil {
		c.t.Fatalf("read body: %v", err)
	}
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		c.t.Fatalf("reply is not JSON: %s", body)
	}
	return m
}

func errCode(m map[string]any) int {
	e, _ := m["error"].(map[string]any)
	if e == nil {
		return 0
	}
	return int(e["code"].(float64))
}

const initBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`

func TestMalformedInputGetsErrorsAndTheConnectionSurvives(t *testing.T) {
	c := newRawClient(t, nil)
	c.send(initBody)
	if m := c.read(); m["result"] == nil {
		t.Fatalf("initialize = %v", m)
	}
	tests := []struct {
		name  string
		raw   string
		code  int
		idNil bool
		next  int     // the code of a second reply, 0 = none
		id    float64 // the reply's id, when not 0
	}{
		{name: "invalid JSON", raw: frame(`{"jsonrpc":"2.0","id":7,"method":`), code: -32700, id: 7}, // read from the cut body
		{name: "not an object", raw: frame(`[1,2,3]`), code: -32600, idNil: true},
		{name: "missing jsonrpc", raw: frame(`{"id":8,"method":"shutdown"}`), code: -32600},
		{name: "bad content length", raw: "Content-Length: abc\r\n\r\n", code: -32700, idNil: true},
		{name: "no content length", raw: "Content-Type: x\r\n\r\n", code: -32700, idNil: true},
		{name: "garbage header line", raw: "hello\r\n" + frame(`{}`), code: -32700, idNil: true, next: -32600}, // then {} is its own frame
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c.write(tt.raw)
			m := c.read()
			if got := errCode(m); got != tt.code {
				t.Errorf("reply to %q = %v, want error code %d", tt.raw, m, tt.code)
			}
			if tt.idNil && m["id"] != nil {
				t.Errorf("reply id = %v, want null", m["id"])
			}
			if id, _ := m["id"].(float64); tt.id != 0 && id != tt.id {
				t.Errorf("reply id = %v, want %v", m["id"], tt.id)
			}
			if tt.next != 0 {
				if m := c.read(); errCode(m) != tt.next {
					t.Errorf("second reply to %q = %v, want error code %d", tt.raw, m, tt.next)
				}
			}
		})
	}
	// Still alive: a valid request after all that gets its answer.
	c.send(`{"jsonrpc":"2.0","id":99,"method":"fixpoint/noSuchMethod","params":{}}`)
	m := c.read()
	if errCode(m) != -32601 || m["id"].(float64) != 99 {
		t.Fatalf("unknown method after malformed input = %v, want MethodNotFound for id 99", m)
	}
}

func TestLifecycle(t *testing.T) {
	t.Run("requests before initialize get -32002", func(t *testing.T) {
		c := newRawClient(t, nil)
		c.send(`{"jsonrpc":"2.0","id":1,"method":"textDocument/codeAction","params":{}}`)
		if m := c.read(); errCode(m) != -32002 {
			t.Fatalf("codeAction before initialize = %v, want -32002", m)
		}
		c.send(`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{}}`) // dropped, no reply
		c.send(initBody)
		if m := c.read(); m["id"].(float64) != 1 || m["result"] == nil {
			t.Fatalf("initialize = %v", m)
		}
		c.send(initBody)
		if m := c.read(); errCode(m) != -32600 {
			t.Fatalf("second initialize = %v, want -32600", m)
		}
	})
	t.Run("shutdown then exit returns nil", func(t *testing.T) {
		c := newRawClient(t, nil)
		c.send(initBody)
		c.read()
		c.send(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`)
		c.read()
		c.send(`{"jsonrpc":"2.0","method":"exit"}`)
		if err := <-c.done; err != nil {
			t.Fatalf("Serve = %v, want nil", err)
		}
	})
	t.Run("exit without shutdown", func(t *testing.T) {
		c := newRawClient(t, nil)
		c.send(initBody)
		c.read()
		c.send(`{"jsonrpc":"2.0","method":"exit"}`)
		if err := <-c.done; !errors.Is(err, ErrExitWithoutShutdown) {
			t.Fatalf("Serve = %v, want ErrExitWithoutShutdown", err)
		}
	})
	t.Run("exit before initialize", func(t *testing.T) {
		c := newRawClient(t, nil)
		c.send(`{"jsonrpc":"2.0","method":"exit"}`)
		if err := <-c.done; !errors.Is(err, ErrExitWithoutShutdown) {
			t.Fatalf("Serve = %v, want ErrExitWithoutShutdown", err)
		}
	})
}

// TestDisconnectCancelsRunsAndClosesEngines: the editor crashes (its end
// of the connection closes) during a run: the run's context is
// cancelled, the engine is closed (containers removed) and Serve returns
// ErrDisconnected.
func TestDisconnectCancelsRunsAndClosesEngines(t *testing.T) {
	eng := &fakeEngine{Block: true, release: make(chan struct{})}
	e := newFakeEditor(t, editorOptions{engine: eng, files: map[string]string{"go.mod": "module w\n"}})
	e.initialize(`{"window":{"workDoneProgress":true}}`)
	e.mustCall("workspace/executeCommand", map[string]any{"command": cmdFixTests})
	e.wait("$/progress", `"begin"`)
	start := time.Now()
	e.conn.Close()
	var err error
	select {
	case err = <-e.serveCh:
		e.serveCh <- err
	case <-time.After(10 * time.Second):
		t.Fatal("Serve did not return after the client disconnected")
	}
	t.Logf("stopped %v after disconnect", time.Since(start))
	if !errors.Is(err, ErrDisconnected) {
		t.Errorf("Serve = %v, want ErrDisconnected", err)
	}
	eng.mu.Lock()
	defer eng.mu.Unlock()
	if eng.cancels != 1 || eng.closed != 1 {
		t.Errorf("engine cancels = %d, closed = %d; want 1, 1", eng.cancels, eng.closed)
	}
}

func TestServeStopsWithContext(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	cs, ss := net.Pipe()
	defer cs.Close()
	done := make(chan error, 1)
	go func() { done <- New(nil).Serve(ctx, ss) }()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Serve = %v, want context.Canceled", err)
	}
}

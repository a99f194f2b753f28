package firstaction

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"
)

// client is the editor side of one `fixpoint serve` connection. It
// answers the server's requests as a plain editor would (progress tokens
// accepted, edits declined so the project stays as it was, questions
// dismissed) and records every notification with its arrival time.
type client struct {
	conn jsonrpc2.Conn

	mu   sync.Mutex
	cond *sync.Cond // broadcast on every message and on close
	msgs []message  // guarded by mu
	done bool       // guarded by mu; the connection ended
}

type message struct {
	method string
	raw    json.RawMessage
	at     time.Time
}

func newClient(ctx context.Context, rwc io.ReadWriteCloser) *client {
	c := &client{}
	c.cond = sync.NewCond(&c.mu)
	c.conn = jsonrpc2.NewConn(jsonrpc2.NewStream(rwc))
	c.conn.Go(ctx, c.handle)
	go func() {
		<-c.conn.Done()
		c.mu.Lock()
		c.done = true
		c.cond.Broadcast()
		c.mu.Unlock()
	}()
	return c
}

func (c *client) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	c.mu.Lock()
	c.msgs = append(c.msgs, message{method: req.Method(), raw: req.Params(), at: time.Now()})
	c.cond.Broadcast()
	c.mu.Unlock()
	if _, ok := req.(*jsonrpc2.Call); !ok {
		return nil
	}
	var result any
	switch req.Method() {
	case "workspace/applyEdit":
		result = map[string]any{"applied": false, "failureReason": "benchmark: edits are not applied"}
	case "workspace/configuration":
		result = []any{nil}
	}
	_ = reply(ctx, result, nil)
	return nil
}

// call sends a request and decodes its result into out (nil: ignore it).
func (c *client) call(ctx context.Context, method string, params, out any) error {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	if _, err := c.conn.Call(ctx, method, params, out); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

func (c *client) notify(ctx context.Context, method string, params any) error {
	if err := c.conn.Notify(ctx, method, params); err != nil {
		return fmt.Errorf("%s: %w", method, err)
	}
	return nil
}

// mark is a position in the message log: wait looks at messages after it.
func (c *client) mark() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.msgs)
}

// wait returns the first message after from whose method is method and
// for which match (nil: any) is true, with its index. It fails when
// timeout passes or the connection ends first.
func (c *client) wait(from int, method string, match func(json.RawMessage) bool, timeout time.Duration) (message, int, error) {
	expired := false
	t := time.AfterFunc(timeout, func() {
		c.mu.Lock()
		expired = true
		c.cond.Broadcast()
		c.mu.Unlock()
	})
	defer t.Stop()
	c.mu.Lock()
	defer c.mu.Unlock()
	for i := from; ; i++ {
		for i >= len(c.msgs) {
			switch {
			case expired:
				return message{}, i, fmt.Errorf("no %s from the server within %v", method, timeout)
			case c.done:
				return message{}, i, fmt.Errorf("the server closed the connection while the benchmark waited for %s", method)
			}
			c.cond.Wait()
		}
		if m := c.msgs[i]; m.method == method && (match == nil || match(m.raw)) {
			return m, i + 1, nil
		}
	}
}

// messagesText is the log of notifications for error messages.
func (c *client) messagesText() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var b bytes.Buffer
	for _, m := range c.msgs {
		fmt.Fprintf(&b, "%s %s\n", m.method, m.raw)
	}
	return b.String()
}

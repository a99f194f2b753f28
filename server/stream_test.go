package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"testing/iotest"
	"time"
)

// bufConn is an in-memory ReadWriteCloser: reads from in, writes to out.
type bufConn struct {
	in  io.Reader
	out bytes.Buffer
}

func (b *bufConn) Read(p []byte) (int, error)  { return b.in.Read(p) }
func (b *bufConn) Write(p []byte) (int, error) { return b.out.Write(p) }
func (b *bufConn) Close() error                { return nil }

// FuzzStream: no input makes the framing layer panic or loop forever,
// and a valid frame after arbitrary garbage that ends in a blank line is
// still read.
func FuzzStream(f *testing.F) {
	f.Add([]byte("Content-Length: 5\r\n\r\n{}{}}"))
	f.Add([]byte("Content-Length: -1\r\n\r\n"))
	f.Add([]byte("content-length: 2\r\n\r\n{}"))
	f.Add([]byte(`Content-Length: 30` + "\r\n\r\n" + `{"jsonrpc":"2.0","id":[],"x":1}`))
	f.Add([]byte("\r\n\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		conn := &bufConn{in: io.MultiReader(bytes.NewReader(data), bytes.NewReader([]byte("\r\n\r\n"+frame(`{"jsonrpc":"2.0","method":"sentinel"}`))))}
		s := newStream(conn, slog.New(slog.DiscardHandler))
		for i := 0; i < 1000; i++ {
			msg, _, err := s.Read(context.Background())
			if err != nil {
				return // EOF: the garbage swallowed the sentinel (e.g. a long Content-Length)
			}
			if r, ok := msg.(interface{ Method() string }); ok && r.Method() == "sentinel" {
				return
			}
		}
		t.Fatalf("no sentinel after 1000 messages")
	})
}

// TestMalformedFrameRecovers sends one malformed frame of each kind, then
// ten valid requests and shutdown/exit, over a pipe to a real server: the
// bad frame is answered with a parse error (carrying its id when it can be
// read), every valid request after it is answered, and the server shuts
// down cleanly.
func TestMalformedFrameRecovers(t *testing.T) {
	const bad = `{"jsonrpc":"2.0","id":5,"method":"textDocument/hover","params":{}}`
	cases := []struct {
		name   string
		raw    string
		wantID bool // the error reply carries id 5
	}{
		{name: "content-length too long", raw: fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(bad)+500, bad), wantID: true},
		{name: "content-length too long by one", raw: fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(bad)+1, bad), wantID: true},
		{name: "content-length over the limit", raw: "Content-Length: 99999999999\r\n\r\n" + bad, wantID: true},
		{name: "content-length too short", raw: fmt.Sprintf("Content-Length: %d\r\n\r\n%s", len(bad)-20, bad), wantID: true},
		{name: "content-length not a number", raw: "Content-Length: 12x\r\n\r\n" + bad, wantID: true},
		{name: "content-length negative", raw: "Content-Length: -4\r\n\r\n" + bad, wantID: true},
		{name: "missing content-length", raw: "Content-Type: application/vscode-jsonrpc\r\n\r\n" + bad, wantID: true},
		{name: "body with no header", raw: bad, wantID: true},
		{name: "body with no header and a newline", raw: bad + "\r\n", wantID: true},
		{name: "garbage line", raw: "hello there\r\n"},
		{name: "binary garbage", raw: "\x00\xff\xfe{[\r\n\r\n"},
	}
	for _, tc := range cases {
		for _, bytewise := range []bool{false, true} {
			name := tc.name
			if bytewise {
				name += " byte by byte"
			}
			t.Run(name, func(t *testing.T) { recoverAfter(t, tc.raw, tc.wantID, bytewise) })
		}
	}
}

// recoverAfter runs one case of TestMalformedFrameRecovers: raw, then ten
// hover requests and shutdown are written in one write, or byte by byte
// (so that every partial frame is seen).
func recoverAfter(t *testing.T, raw string, wantID, bytewise bool) {
	c := newRawClient(t, nil)
	c.send(initBody)
	if m := c.read(); m["result"] == nil {
		t.Fatalf("initialize = %v", m)
	}
	var input strings.Builder
	input.WriteString(raw)
	for i := range 10 {
		input.WriteString(frame(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"textDocument/hover","params":{}}`, 100+i)))
	}
	input.WriteString(frame(`{"jsonrpc":"2.0","id":200,"method":"shutdown"}`))
	wrote := make(chan error, 1)
	go func() { // net.Pipe is synchronous: write while the replies are read
		c.conn.SetWriteDeadline(time.Now().Add(10 * time.Second))
		if !bytewise {
			_, err := io.WriteString(c.conn, input.String())
			wrote <- err
			return
		}
		for _, b := range []byte(input.String()) {
			if _, err := c.conn.Write([]byte{b}); err != nil {
				wrote <- err
				return
			}
		}
		wrote <- nil
	}()
	answered := map[int]bool{}
	var sawBadID, shutdown bool
	for !shutdown || len(answered) < 10 {
		m := c.read()
		id, hasID := m["id"].(float64)
		switch {
		case hasID && id == 200:
			if m["error"] != nil {
				t.Fatalf("shutdown = %v", m)
			}
			shutdown = true
		case hasID && id >= 100 && id < 110:
			if answered[int(id)] {
				t.Errorf("request %v answered twice", id)
			}
			answered[int(id)] = true
		case errCode(m) == -32700:
			if hasID && id == 5 {
				sawBadID = true
			} else if hasID {
				t.Errorf("parse error for id %v, want 5 or null: %v", id, m)
			}
		default:
			t.Fatalf("unexpected reply %v", m)
		}
	}
	if err := <-wrote; err != nil {
		t.Fatalf("write: %v", err)
	}
	if wantID && !sawBadID {
		t.Errorf("no parse error reply with the bad frame's id 5")
	}
	c.send(`{"jsonrpc":"2.0","method":"exit"}`)
	select {
	case err := <-c.done:
		if err != nil {
			t.Fatalf("Serve = %v, want nil after shutdown and exit", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Serve did not return after exit")
	}
}

// TestStreamKeepsValidFrames: frames whose bodies look like headers (a
// document about LSP framing, pretty-printed JSON, a CRLF-heavy text) are
// read whole, also one byte at a time, with no error reply.
func TestStreamKeepsValidFrames(t *testing.T) {
	text, _ := json.Marshal("Content-Length: 12\r\n\r\n{}\nContent-Length: 99\n")
	bodies := []string{
		`{"jsonrpc":"2.0","method":"textDocument/didOpen","params":{"textDocument":{"text":` + string(text) + `}}}`,
		"{\r\n  \"jsonrpc\": \"2.0\",\r\n  \"id\": 3,\r\n  \"method\": \"shutdown\"\r\n}",
		`{"jsonrpc":"2.0","id":"content-length:","method":"x"}`,
	}
	for _, bytewise := range []bool{false, true} {
		var in strings.Builder
		for _, b := range bodies {
			in.WriteString(frame(b))
		}
		var r io.Reader = strings.NewReader(in.String())
		if bytewise {
			r = iotest.OneByteReader(r)
		}
		conn := &bufConn{in: r}
		s := newStream(conn, slog.New(slog.DiscardHandler))
		for i, want := range bodies {
			msg, _, err := s.Read(t.Context())
			if err != nil {
				t.Fatalf("bytewise=%v: Read %d: %v", bytewise, i, err)
			}
			got, _ := json.Marshal(msg)
			type probe struct {
				ID     any             `json:"id"`
				Method string          `json:"method"`
				Params json.RawMessage `json:"params"`
			}
			var a, b probe
			json.Unmarshal(got, &a)
			json.Unmarshal([]byte(want), &b)
			if fmt.Sprint(a.ID) != fmt.Sprint(b.ID) || a.Method != b.Method || (b.Params != nil && !bytes.Equal(a.Params, b.Params)) {
				t.Errorf("bytewise=%v: Read %d = %s, want %s", bytewise, i, got, want)
			}
		}
		if conn.out.Len() != 0 {
			t.Errorf("bytewise=%v: the stream replied to valid frames: %q", bytewise, conn.out.String())
		}
	}
}

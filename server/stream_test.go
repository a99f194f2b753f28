package server

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"testing"
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

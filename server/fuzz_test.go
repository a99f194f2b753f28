package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"slices"
	"testing"
	"unicode/utf8"

	"go.lsp.dev/protocol"
)

// rw is an in-memory ReadWriteCloser: reads from in, writes are kept.
type rw struct {
	in  *bytes.Reader
	out bytes.Buffer
}

func (r *rw) Read(p []byte) (int, error)  { return r.in.Read(p) }
func (r *rw) Write(p []byte) (int, error) { return r.out.Write(p) }
func (r *rw) Close() error                { return nil }

// FuzzStreamRead: no input makes the framing layer panic or loop; every
// input is consumed until EOF, and every reply it writes is itself a
// well-formed frame.
func FuzzStreamRead(f *testing.F) {
	for _, s := range []string{
		"Content-Length: 2\r\n\r\n{}",
		"Content-Length: 52\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{}}",
		"content-length: 10\r\n\r\nnot json!!",
		"Content-Length: -1\r\n\r\n",
		"Content-Length: 99999999999\r\n\r\n",
		"{\"jsonrpc\":\"2.0\"}\r\n",
		"\r\n\r\nContent-Length: 40\r\nContent-Type: x\r\n\r\n{\"jsonrpc\":\"2.0\",\"method\":\"exit\"}      ",
		"Content-Length: 3\r\n\r\n[1]",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		conn := &rw{in: bytes.NewReader(data)}
		s := newStream(conn, slog.New(slog.DiscardHandler))
		for i := 0; ; i++ {
			if i > len(data)+1 {
				t.Fatalf("Read returned %d messages from %d bytes: not making progress", i, len(data))
			}
			if _, _, err := s.Read(context.Background()); err != nil {
				break
			}
		}
		out := newStream(&rw{in: bytes.NewReader(conn.out.Bytes())}, slog.New(slog.DiscardHandler))
		for {
			body, _, err := out.readFrame()
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				break
			}
			if err != nil {
				t.Fatalf("the stream wrote a malformed reply frame: %v\n%q", err, conn.out.Bytes())
			}
			var reply struct {
				Version string `json:"jsonrpc"`
				Error   *struct {
					Code    int    `json:"code"`
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(body, &reply); err != nil || reply.Version != "2.0" || reply.Error == nil || reply.Error.Code == 0 {
				t.Fatalf("the stream wrote a reply that is not a JSON-RPC error: %q (%v)", body, err)
			}
		}
	})
}

// FuzzLineIndex: positions are UTF-16 code units and must round-trip, and
// the incremental rescan after a replace equals a full rescan.
func FuzzLineIndex(f *testing.F) {
	for _, s := range []string{
		"", "a", "line1\nline2\n", "crlf\r\nline\r\n", "lone\rcr", "emoji 😀 here\n", "CJK 漢字テキスト\r\n次",
		"\xff\xfe invalid", "a\r\n\r\n\n\r", "😀😀\n😀",
	} {
		f.Add(s, uint32(0), uint32(1), uint32(1), uint32(2), "x\n😀")
	}
	f.Fuzz(func(t *testing.T, text string, l1, c1, l2, c2 uint32, ins string) {
		x := newLineIndex(text)
		for off := 0; off <= len(text); off++ {
			p := x.position(off)
			back := x.offset(p)
			if back > off {
				t.Fatalf("offset(position(%d)) = %d, past the original offset in %q", off, back, text)
			}
			atRune := off == len(text) || utf8.RuneStart(text[off])
			if utf8.ValidString(text) && atRune && back != off && !insideTerminator(text, off) {
				t.Fatalf("offset(position(%d)=%v) = %d in %q, want a round trip", off, p, back, text)
			}
			if x.position(back) != p {
				t.Fatalf("position(offset(%v)) = %v in %q", p, x.position(back), text)
			}
		}
		r := protocol.Range{Start: protocol.Position{Line: l1 % 8, Character: c1 % 16}, End: protocol.Position{Line: l2 % 8, Character: c2 % 16}}
		inc := x.replace(r, ins)
		full := newLineIndex(inc.text)
		if !slices.Equal(inc.starts, full.starts) {
			t.Fatalf("replace(%v, %q) on %q: incremental line starts %v, full rescan %v", r, ins, text, inc.starts, full.starts)
		}
		if got := applyChanges(text, []change{{Range: r, Text: ins}}); got != inc.text {
			t.Fatalf("applyChanges and replace disagree: %q vs %q", got, inc.text)
		}
	})
}

// insideTerminator reports whether off points between the end of a line's
// text and the start of the next line (the "\n" of "\r\n", or the
// terminator itself), where positions legitimately round down.
func insideTerminator(text string, off int) bool {
	if off >= len(text) {
		return false
	}
	return text[off] == '\n' || text[off] == '\r'
}

package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// maxFrame bounds one message body; a larger Content-Length is skipped
// with a parse error instead of being allocated.
const maxFrame = 64 << 20

// maxHeaderLine bounds a header line; a longer one is garbage.
const maxHeaderLine = 8 << 10

// headerStart finds where a frame's Content-Length header begins, for
// resynchronising after garbage.
var headerStart = regexp.MustCompile(`(?i)content-length[ \t]*:`)

// headerInBody finds a complete Content-Length header inside the bytes
// read as a body. A valid JSON body never matches: "content-length:" can
// only be inside a JSON string, where a raw line break cannot follow the
// digits.
var headerInBody = regexp.MustCompile(`(?i)content-length[ \t]*:[ \t]*[0-9]+[ \t]*\r?\n`)

// idField finds a request id in a body that is not valid JSON (cut short),
// when it comes before "params".
var idField = regexp.MustCompile(`"id"\s*:\s*(-?[0-9]+|"(?:[^"\\]|\\.)*")`)

// stream is a jsonrpc2.Stream with Content-Length framing that survives
// bad input. jsonrpc2 v0.10 closes the connection on any read error; this
// stream instead answers a malformed frame or invalid JSON with a -32700
// parse error, a JSON value that is not a request with -32600, and reads
// on. The reply carries the bad frame's id when one can be read from it,
// else null. Only I/O errors (EOF) end the stream.
//
// After a malformed frame the stream resynchronises at the next
// Content-Length header: a Content-Length too long would otherwise wait
// for bytes that never come, so the bytes read as a body are scanned for
// the next frame's header, and what follows it is read again as a frame.
// A Content-Length too short leaves the rest of the body before the next
// header: that rest is garbage, skipped up to the next header. A body
// with no header, or one whose Content-Length is missing or not a number,
// extends to the next header (or is a complete JSON value on its own).
type stream struct {
	rwc    io.ReadWriteCloser
	logger *slog.Logger

	// Read is called by one goroutine at a time (the jsonrpc2 reader).
	buf  []byte // read from rwc, not yet consumed
	rerr error  // the read error after buf, sticky
	tmp  []byte // read buffer

	wmu sync.Mutex // serialises writes to rwc
}

func newStream(rwc io.ReadWriteCloser, logger *slog.Logger) *stream {
	return &stream{rwc: rwc, tmp: make([]byte, 64<<10), logger: logger}
}

// errFrame is a recoverable framing error; id is the bad frame's request
// id when known.
type errFrame struct {
	msg string
	id  json.RawMessage
}

func (e *errFrame) Error() string { return e.msg }

func (s *stream) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	for {
		if err := ctx.Err(); err != nil {
			return nil, 0, err
		}
		body, n, err := s.readFrame()
		var fe *errFrame
		if errors.As(err, &fe) {
			s.logger.Warn("malformed frame", "err", fe.msg)
			s.writeError(jsonrpc2.ParseError, fe.msg, fe.id)
			continue
		}
		if err != nil {
			return nil, n, err
		}
		msg, err := decodeMessage(body)
		if err != nil {
			code := jsonrpc2.ParseError
			if json.Valid(body) {
				code = jsonrpc2.InvalidRequest
			}
			s.logger.Warn("bad message", "err", err)
			s.writeError(code, err.Error(), idGuess(body))
			continue
		}
		return msg, n, nil
	}
}

// fill reads more input into buf; an error means nothing more will come.
func (s *stream) fill() error {
	if s.rerr != nil {
		return s.rerr
	}
	n, err := s.rwc.Read(s.tmp)
	s.buf = append(s.buf, s.tmp[:n]...)
	if err != nil {
		s.rerr = err
		if n == 0 {
			return err
		}
	}
	return nil
}

// consume drops the first n buffered bytes and returns them (a copy).
func (s *stream) consume(n int) []byte {
	out := bytes.Clone(s.buf[:n])
	s.buf = s.buf[n:]
	if len(s.buf) == 0 {
		s.buf = nil // let a large frame's backing array go
	}
	return out
}

// readFrame reads one frame and returns its body, or an *errFrame for a
// malformed one (whose bytes are consumed), or the read error at the end
// of the input.
func (s *stream) readFrame() ([]byte, int64, error) {
	length, hlen, bad, err := s.readHeaders()
	if err != nil {
		return nil, hlen, err
	}
	if bad != "" {
		// No usable length: the body, if any, runs to the next header or
		// is a complete JSON value; take what is there without waiting.
		body := s.bufferedBody()
		return nil, hlen + int64(len(body)), &errFrame{msg: bad, id: idGuess(body)}
	}
	body, err := s.readBody(length)
	return body, hlen + int64(len(body)), err
}

// readHeaders reads one header block. Garbage before it (a body with no
// header, the tail of a body whose Content-Length was too short) is
// skipped up to the next Content-Length header and reported as an
// *errFrame. bad is set when the block has no valid Content-Length.
func (s *stream) readHeaders() (length, n int64, bad string, err error) {
	length = -1
	p, lines := 0, 0
	for {
		j := bytes.IndexByte(s.buf[p:], '\n')
		if j < 0 {
			if len(s.buf)-p > maxHeaderLine {
				return 0, 0, "", s.skipGarbage()
			}
			if err := s.fill(); err != nil {
				return 0, int64(p), "", err
			}
			continue
		}
		line := strings.TrimSpace(string(s.buf[p : p+j]))
		if line == "" {
			if lines == 0 { // stray blank line between frames
				s.consume(p + j + 1)
				p = 0
				continue
			}
			p += j + 1
			break
		}
		name, value, ok := strings.Cut(line, ":")
		if !ok || !isToken(strings.TrimSpace(name)) {
			if lines > 0 {
				// A header block cut short by garbage: report the block,
				// the garbage is skipped on the next read.
				s.consume(p)
				return 0, int64(p), fmt.Sprintf("invalid header line %q", trunc(line, 80)), nil
			}
			return 0, 0, "", s.skipGarbage()
		}
		lines++
		p += j + 1
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			v, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			if err != nil || v <= 0 {
				bad = fmt.Sprintf("invalid Content-Length %q", trunc(strings.TrimSpace(value), 40))
				continue
			}
			length = v
		}
	}
	s.consume(p)
	if bad == "" && length < 0 {
		bad = "missing Content-Length header"
	}
	return length, int64(p), bad, nil
}

// isToken reports whether name is an HTTP-style header name.
func isToken(name string) bool {
	if name == "" {
		return false
	}
	for _, r := range name {
		if !(r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return false
		}
	}
	return true
}

// skipGarbage consumes input up to the next Content-Length header, or a
// complete JSON value sent without a header, and returns it as an
// *errFrame (with the id of that value when it has one).
func (s *stream) skipGarbage() error {
	dropped := 0
	for {
		if m := headerStart.FindIndex(s.buf[min(1, len(s.buf)):]); m != nil {
			return s.garbageFrame(s.consume(m[0]+1), dropped)
		}
		if t := bytes.TrimSpace(s.buf); len(t) > 0 && (t[len(t)-1] == '}' || t[len(t)-1] == ']') && json.Valid(t) {
			return s.garbageFrame(s.consume(len(s.buf)), dropped)
		}
		if len(s.buf) > maxFrame { // keep what may be the start of a header
			dropped += len(s.buf) - 64
			s.consume(len(s.buf) - 64)
		}
		if err := s.fill(); err != nil {
			return err
		}
	}
}

func (s *stream) garbageFrame(garbage []byte, dropped int) error {
	msg := fmt.Sprintf("%d bytes without a Content-Length header: %q", len(garbage)+dropped, trunc(string(bytes.TrimSpace(garbage)), 80))
	return &errFrame{msg: msg, id: idGuess(garbage)}
}

// bufferedBody consumes the body of a frame without a usable length from
// what is already buffered: up to the next Content-Length header, or all
// of it when it is a complete JSON value; else nothing (what arrives
// later is skipped as garbage).
func (s *stream) bufferedBody() []byte {
	if m := headerStart.FindIndex(s.buf); m != nil {
		return s.consume(m[0])
	}
	if t := bytes.TrimSpace(s.buf); len(t) > 0 && json.Valid(t) {
		return s.consume(len(s.buf))
	}
	return nil
}

// readBody reads a body of length bytes. When the bytes read contain the
// next frame's header, the length was too long: the bytes before it are
// reported as a malformed frame and the header is read again.
func (s *stream) readBody(length int64) ([]byte, error) {
	from := 0         // buf before this was scanned for a header
	var dropped int64 // an over-limit body is not kept
	for {
		if int64(len(s.buf))+dropped >= length {
			n := int(length - dropped)
			if dropped == 0 && json.Valid(s.buf[:n]) {
				return s.consume(n), nil
			}
			if at := s.headerWithin(from, n); at >= 0 {
				return nil, s.tooLong(length, at, dropped)
			}
			if dropped > 0 {
				s.consume(n)
				return nil, &errFrame{msg: fmt.Sprintf("frame of %d bytes exceeds the %d byte limit", length, maxFrame)}
			}
			// Not JSON: a bad body, or a length too short whose rest is
			// skipped as garbage by the next read.
			return s.consume(n), nil
		}
		if m := headerInBody.FindIndex(s.buf[from:]); m != nil {
			return nil, s.tooLong(length, from+m[0], dropped)
		}
		from = max(len(s.buf)-64, 0)
		if length > maxFrame && len(s.buf) > 1<<20 {
			k := len(s.buf) - 64
			dropped += int64(k)
			s.consume(k)
			from = 0
		}
		if err := s.fill(); err != nil {
			return nil, err
		}
	}
}

// headerWithin returns where a header starts inside buf[:n], a body that
// is not valid JSON, or -1: a complete Content-Length header, one cut by
// the end of the body, or a body ending in the first letters of
// "Content-Length:". Splitting a bad body there is harmless: if it was no
// header, the rest is skipped as garbage.
func (s *stream) headerWithin(from, n int) int {
	if m := headerInBody.FindIndex(s.buf[from:]); m != nil && from+m[0] < n {
		return from + m[0]
	}
	tail := max(n-64, 0)
	if m := headerStart.FindIndex(s.buf[tail:n]); m != nil {
		return tail + m[0]
	}
	const name = "content-length:"
	for k := min(len(name)-1, n); k > 0; k-- {
		if bytes.EqualFold(s.buf[n-k:n], []byte(name[:k])) {
			return n - k
		}
	}
	return -1
}

// tooLong reports a frame whose Content-Length ran past the next frame's
// header at buf[at]; the bytes before it are consumed.
func (s *stream) tooLong(length int64, at int, dropped int64) error {
	body := s.consume(at)
	return &errFrame{
		msg: fmt.Sprintf("Content-Length %d is longer than the %d byte body before the next header", length, int64(len(body))+dropped),
		id:  idGuess(body),
	}
}

// idGuess is idOf for a bad frame's bytes: the id of a complete JSON
// request, or of one cut short when "id" comes before "params".
func idGuess(body []byte) json.RawMessage {
	body = bytes.TrimSpace(body)
	if json.Valid(body) {
		return idOf(body)
	}
	m := idField.FindSubmatchIndex(body)
	if m == nil {
		return nil
	}
	if p := bytes.Index(body, []byte(`"params"`)); p >= 0 && p < m[0] {
		return nil
	}
	id := json.RawMessage(bytes.Clone(body[m[2]:m[3]]))
	if !json.Valid(id) {
		return nil
	}
	return id
}

// decodeMessage is jsonrpc2.DecodeMessage behind a std-library validity
// check (the library's decoder accepts some invalid inputs) and a recover,
// so no input can take the connection down.
func decodeMessage(body []byte) (msg jsonrpc2.Message, err error) {
	if !json.Valid(body) {
		return nil, errors.New("invalid JSON")
	}
	defer func() {
		if r := recover(); r != nil {
			msg, err = nil, fmt.Errorf("undecodable message: %v", r)
		}
	}()
	var probe struct {
		Version string          `json:"jsonrpc"`
		Method  json.RawMessage `json:"method"`
	}
	if err := json.Unmarshal(body, &probe); err != nil {
		return nil, fmt.Errorf("not a JSON-RPC object: %v", err)
	}
	if probe.Version != "2.0" {
		return nil, errors.New(`missing "jsonrpc": "2.0"`)
	}
	return jsonrpc2.DecodeMessage(body)
}

// idOf extracts the "id" of an undecodable request, so its error reply can
// reach the caller; nil when there is none.
func idOf(body []byte) json.RawMessage {
	var probe struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &probe) != nil || len(probe.ID) == 0 {
		return nil
	}
	switch probe.ID[0] {
	case '"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9':
		return probe.ID
	}
	return nil
}

func (s *stream) writeError(code jsonrpc2.Code, msg string, id json.RawMessage) {
	if id == nil {
		id = json.RawMessage("null")
	}
	body, _ := json.Marshal(struct {
		Version string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   *jsonrpc2.Error `json:"error"`
	}{"2.0", id, jsonrpc2.NewError(code, msg)})
	if err := s.writeBody(body); err != nil {
		s.logger.Debug("write parse error reply", "err", err)
	}
}

// Write frames msg. It writes even when ctx is done: a reply to a
// cancelled request must still be sent.
func (s *stream) Write(_ context.Context, msg jsonrpc2.Message) (int64, error) {
	body, err := json.Marshal(msg)
	if err != nil {
		return 0, fmt.Errorf("marshal message: %w", err)
	}
	return int64(len(body)), s.writeBody(body)
}

func (s *stream) writeBody(body []byte) error {
	var buf bytes.Buffer
	buf.Grow(len(body) + 32)
	fmt.Fprintf(&buf, "Content-Length: %d\r\n\r\n", len(body))
	buf.Write(body)
	s.wmu.Lock()
	defer s.wmu.Unlock()
	_, err := s.rwc.Write(buf.Bytes())
	return err
}

func (s *stream) Close() error { return s.rwc.Close() }

func trunc(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

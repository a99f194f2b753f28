package server

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"go.lsp.dev/jsonrpc2"
)

// maxFrame bounds one message body; a larger Content-Length is skipped
// with a parse error instead of being allocated.
const maxFrame = 64 << 20

// stream is a jsonrpc2.Stream with Content-Length framing that survives
// bad input. jsonrpc2 v0.10 closes the connection on any read error; this
// stream instead answers a malformed frame or invalid JSON with a -32700
// parse error (id null), a JSON value that is not a request with -32600,
// and reads on. Only I/O errors (EOF) end the stream.
type stream struct {
	rwc    io.ReadWriteCloser
	in     *bufio.Reader
	logger *slog.Logger

	wmu sync.Mutex // serialises writes to rwc
}

func newStream(rwc io.ReadWriteCloser, logger *slog.Logger) *stream {
	return &stream{rwc: rwc, in: bufio.NewReaderSize(rwc, 64<<10), logger: logger}
}

// errFrame is a recoverable framing error.
type errFrame struct{ msg string }

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
			s.writeError(jsonrpc2.ParseError, fe.msg, nil)
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
			s.writeError(code, err.Error(), idOf(body))
			continue
		}
		return msg, n, nil
	}
}

// readFrame reads headers and one body. Header names are matched
// case-insensitively, as HTTP does; Content-Type is ignored.
func (s *stream) readFrame() ([]byte, int64, error) {
	var total int64
	length := int64(-1)
	var bad string
	sawHeader := false
	for {
		line, err := s.in.ReadString('\n')
		total += int64(len(line))
		if err != nil {
			return nil, total, err
		}
		line = strings.TrimSpace(line)
		if line == "" {
			if !sawHeader && bad == "" {
				continue // stray blank line between frames
			}
			break
		}
		sawHeader = true
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			bad = fmt.Sprintf("invalid header line %q", trunc(line, 80))
			if strings.HasPrefix(line, "{") {
				// A body without headers: nothing to resync on but the next header.
				return nil, total, &errFrame{bad}
			}
			continue
		}
		if strings.EqualFold(strings.TrimSpace(name), "Content-Length") {
			n, err := strconv.ParseInt(strings.TrimSpace(value), 10, 64)
			if err != nil || n <= 0 {
				bad = fmt.Sprintf("invalid Content-Length %q", trunc(value, 40))
				continue
			}
			length = n
		}
	}
	if length > maxFrame {
		if _, err := io.CopyN(io.Discard, s.in, length); err != nil {
			return nil, total, err
		}
		return nil, total + length, &errFrame{fmt.Sprintf("frame of %d bytes exceeds the %d byte limit", length, maxFrame)}
	}
	if length < 0 {
		if bad == "" {
			bad = "missing Content-Length header"
		}
		return nil, total, &errFrame{bad}
	}
	body := make([]byte, length)
	if _, err := io.ReadFull(s.in, body); err != nil {
		return nil, total, err
	}
	total += length
	if bad != "" {
		return nil, total, &errFrame{bad}
	}
	return body, total, nil
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

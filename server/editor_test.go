package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// wire is one message on the connection, as the fake editor saw it.
type wire struct {
	out    bool // sent by the editor
	raw    json.RawMessage
	method string
}

// recorder is a jsonrpc2.Stream that logs every message in wire order.
type recorder struct {
	jsonrpc2.Stream
	mu   sync.Mutex
	cond *sync.Cond
	msgs []wire
}

func newRecorder(s jsonrpc2.Stream) *recorder {
	r := &recorder{Stream: s}
	r.cond = sync.NewCond(&r.mu)
	return r
}

func (r *recorder) add(out bool, msg jsonrpc2.Message) {
	raw, _ := json.Marshal(msg)
	var probe struct {
		Method string `json:"method"`
	}
	_ = json.Unmarshal(raw, &probe)
	r.mu.Lock()
	r.msgs = append(r.msgs, wire{out: out, raw: raw, method: probe.Method})
	r.cond.Broadcast()
	r.mu.Unlock()
}

func (r *recorder) Read(ctx context.Context) (jsonrpc2.Message, int64, error) {
	m, n, err := r.Stream.Read(ctx)
	if err == nil {
		r.add(false, m)
	} else {
		r.mu.Lock()
		r.cond.Broadcast()
		r.mu.Unlock()
	}
	return m, n, err
}

func (r *recorder) Write(ctx context.Context, m jsonrpc2.Message) (int64, error) {
	r.add(true, m)
	return r.Stream.Write(ctx, m)
}

// fakeEditor is an in-process LSP client over net.Pipe driving a Server.
type fakeEditor struct {
	t       testing.TB
	root    string // workspace folder on disk
	conn    jsonrpc2.Conn
	rec     *recorder
	serveCh chan error
	engine  *fakeEngine
	srv     *Server // the in-process server; nil with editorOptions.connect

	timeout  time.Duration
	mu       sync.Mutex
	answer   json.RawMessage   // next showMessageRequest answer; null = dismissed; "hold" = never answered
	settings json.RawMessage   // workspace/configuration answer
	applied  []json.RawMessage // applyEdit params received
	applyOK  bool
	// answerApply, when set, is the answer to applyEdit when !applyOK
	// (default: applied false, failureReason "document changed").
	answerApply map[string]any
	// applyAnswers, when not empty, answer the next applyEdits in order.
	applyAnswers []map[string]any
	cursor       int // wait() scans from here
}

type editorOptions struct {
	engine *fakeEngine
	files  map[string]string
	server *Options
	// root, when set, is the workspace (files are still written into it).
	root string
	// connect, when set, replaces the in-process server: it returns the
	// connection to a server (a fixpoint process) and a function that
	// waits for it to end.
	connect func(root string) (io.ReadWriteCloser, func() error)
	timeout time.Duration // for wait; default 20s
	// untrusted leaves the in-process server's trust store empty; by
	// default the workspace folder is trusted (a record in a private
	// store), as `fixpoint trust` would make it.
	untrusted bool
}

func newFakeEditor(t testing.TB, o editorOptions) *fakeEditor {
	t.Helper()
	root := o.root
	if root == "" {
		root = t.TempDir()
	}
	if r, err := filepath.EvalSymlinks(root); err == nil {
		root = r
	}
	for name, data := range o.files {
		p := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	opts := Options{}
	if o.server != nil {
		opts = *o.server
	}
	if opts.Getenv == nil {
		opts.Getenv = func(string) string { return "" }
	}
	if opts.UserConfig == "" {
		opts.UserConfig = "-"
	}
	if opts.TrustDir == "" {
		opts.TrustDir = t.TempDir()
		if !o.untrusted {
			if _, err := (config.TrustStore{Dir: opts.TrustDir}).TrustFolder(root); err != nil {
				t.Fatal(err)
			}
		}
	}
	if o.engine != nil {
		opts.NewEngine = func(ctx context.Context, cfg *config.Config, root string, h Hooks) (Engine, error) {
			return o.engine, nil
		}
	}
	e := &fakeEditor{t: t, root: root, serveCh: make(chan error, 1), engine: o.engine, answer: json.RawMessage("null"), applyOK: true, timeout: o.timeout}
	if e.timeout == 0 {
		e.timeout = 20 * time.Second
	}
	ctx, cancel := context.WithCancel(context.Background())
	var cs io.ReadWriteCloser
	if o.connect != nil {
		conn, wait := o.connect(root)
		cs = conn
		go func() { e.serveCh <- wait() }()
	} else {
		srv := New(&opts)
		e.srv = srv
		c, ss := net.Pipe()
		cs = c
		go func() { e.serveCh <- srv.Serve(ctx, ss) }()
	}
	e.rec = newRecorder(jsonrpc2.NewStream(cs))
	e.conn = jsonrpc2.NewConn(e.rec)
	e.conn.Go(ctx, e.handle)
	t.Cleanup(func() {
		cancel()
		cs.Close()
		select {
		case <-e.serveCh:
		case <-time.After(30 * time.Second):
			t.Errorf("server did not stop")
		}
	})
	return e
}

// handle answers the server's requests as an editor would. It never
// returns an error: jsonrpc2 v0.10 panics when a handler error is followed
// by a read error of another type.
//
// Replies are written from their own goroutine: the connection is a
// synchronous net.Pipe, and a reply written from the read loop while the
// server writes to us (a codeAction's reply as we answer its
// workspace/configuration) deadlocks both loops; a real editor reads and
// writes independently. What the editor records stays in arrival order.
func (e *fakeEditor) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	async := func(ctx context.Context, result any, err error) error {
		go func() { _ = reply(ctx, result, err) }() // ends when the write does, or the pipe closes
		return nil
	}
	_ = e.answerRequest(ctx, async, req)
	return nil
}

func (e *fakeEditor) answerRequest(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch req.Method() {
	case "workspace/applyEdit":
		e.applied = append(e.applied, append(json.RawMessage(nil), req.Params()...))
		if len(e.applyAnswers) > 0 {
			a := e.applyAnswers[0]
			e.applyAnswers = e.applyAnswers[1:]
			return reply(ctx, a, nil)
		}
		if !e.applyOK && e.answerApply != nil {
			return reply(ctx, e.answerApply, nil)
		}
		if !e.applyOK {
			return reply(ctx, map[string]any{"applied": false, "failureReason": "document changed"}, nil)
		}
		return reply(ctx, map[string]any{"applied": true}, nil)
	case "window/showMessageRequest":
		if string(e.answer) == "hold" {
			return nil // the user has not answered yet (and never will)
		}
		return reply(ctx, e.answer, nil)
	case "workspace/configuration":
		var p struct{ Items []json.RawMessage }
		_ = json.Unmarshal(req.Params(), &p)
		out := make([]json.RawMessage, len(p.Items))
		for i := range out {
			out[i] = e.settings
			if out[i] == nil {
				out[i] = json.RawMessage("null")
			}
		}
		return reply(ctx, out, nil)
	case "window/workDoneProgress/create", "client/registerCapability":
		return reply(ctx, nil, nil)
	case "window/showDocument":
		return reply(ctx, map[string]any{"success": true}, nil)
	}
	if _, ok := req.(*jsonrpc2.Call); ok {
		return reply(ctx, nil, jsonrpc2.NewError(jsonrpc2.MethodNotFound, req.Method()))
	}
	return nil
}

func (e *fakeEditor) uri(rel string) string { return fileURI(filepath.Join(e.root, rel)) }

// expand replaces $ROOT with the workspace folder's URI.
func (e *fakeEditor) expand(s string) string { return strings.ReplaceAll(s, "$ROOT", fileURI(e.root)) }

// call sends a request and returns the raw result or the error.
func (e *fakeEditor) call(method string, params any) (json.RawMessage, error) {
	e.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var res json.RawMessage
	_, err := e.conn.Call(ctx, method, params, &res)
	return res, err
}

func (e *fakeEditor) mustCall(method string, params any) json.RawMessage {
	e.t.Helper()
	res, err := e.call(method, params)
	if err != nil {
		e.t.Fatalf("%s: %v", method, err)
	}
	return res
}

func (e *fakeEditor) notify(method string, params any) {
	e.t.Helper()
	if err := e.conn.Notify(context.Background(), method, params); err != nil {
		e.t.Fatalf("notify %s: %v", method, err)
	}
}

func (e *fakeEditor) initialize(caps string) {
	e.t.Helper()
	params := json.RawMessage(e.expand(`{"processId":1,"rootUri":"$ROOT","capabilities":` + caps + `,"workspaceFolders":[{"uri":"$ROOT","name":"ws"}]}`))
	e.mustCall("initialize", params)
	e.notify("initialized", map[string]any{})
}

func (e *fakeEditor) open(rel string, version int) {
	e.t.Helper()
	data, err := os.ReadFile(filepath.Join(e.root, rel))
	if err != nil {
		e.t.Fatal(err)
	}
	e.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": e.uri(rel), "languageId": "go", "version": version, "text": string(data)}})
}

// wait blocks until the server sends a message with method whose raw
// JSON contains substr, after the last one wait returned.
func (e *fakeEditor) wait(method, substr string) json.RawMessage {
	e.t.Helper()
	deadline := time.Now().Add(e.timeout)
	timer := time.AfterFunc(e.timeout, func() { e.rec.mu.Lock(); e.rec.cond.Broadcast(); e.rec.mu.Unlock() })
	defer timer.Stop()
	e.mu.Lock()
	held := method == "window/showMessageRequest" && string(e.answer) == "hold"
	e.mu.Unlock()
	e.rec.mu.Lock()
	defer e.rec.mu.Unlock()
	for {
		for i := e.cursor; i < len(e.rec.msgs); i++ {
			m := e.rec.msgs[i]
			if !m.out && m.method == method && bytes.Contains(m.raw, []byte(substr)) {
				if id := requestID(m.raw); id != "" && !held && !e.repliedLocked(i, id) {
					break // a request: wait until the editor's reply is on the wire too
				}
				e.cursor = i + 1
				return m.raw
			}
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("timed out waiting for %s containing %q; transcript:\n%s", method, substr, e.transcriptLocked())
		}
		e.rec.cond.Wait()
	}
}

func requestID(raw json.RawMessage) string {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	_ = json.Unmarshal(raw, &p)
	return string(p.ID)
}

// repliedLocked reports whether the editor replied to request id after
// message i; e.rec.mu is held.
func (e *fakeEditor) repliedLocked(i int, id string) bool {
	for _, m := range e.rec.msgs[i+1:] {
		if m.out && m.method == "" && requestID(m.raw) == id {
			return true
		}
	}
	return false
}

// transcript renders the wire log: "->" editor to server, "<-" server to
// editor, one canonical JSON message per line, the workspace as $ROOT.
func (e *fakeEditor) transcript() string {
	e.rec.mu.Lock()
	defer e.rec.mu.Unlock()
	return e.transcriptLocked()
}

func (e *fakeEditor) transcriptLocked() string {
	var b strings.Builder
	for _, m := range e.rec.msgs {
		var v any
		_ = json.Unmarshal(m.raw, &v)
		canon, _ := json.Marshal(v)
		line := strings.ReplaceAll(string(canon), fileURI(e.root), "$ROOT")
		line = strings.ReplaceAll(line, e.root, "$ROOT")
		dir := "<-"
		if m.out {
			dir = "->"
		}
		fmt.Fprintf(&b, "%s %s\n", dir, line)
	}
	return b.String()
}

// fakeEngine is a scripted Engine: Run emits Events, optionally blocks
// until released or cancelled, and returns Result with Changes computed
// against the request's snapshot.
type fakeEngine struct {
	Events []agent.Event
	Block  bool // wait for Release or ctx before returning
	// PartialOnCancel: a cancelled blocked Run returns Result and no error,
	// as the real engine does when cancelled during planning.
	PartialOnCancel bool
	Result          agent.Result
	Changes         []fakeChange
	Report          *testrun.Report // Test's result
	release         chan struct{}

	mu       sync.Mutex
	requests []agent.Request
	closed   int
	cancels  int
}

type fakeChange struct {
	Path    string `json:"path"`
	After   string `json:"after"`
	Created bool   `json:"created,omitempty"`
}

func (f *fakeEngine) Release() { close(f.release) }

func (f *fakeEngine) Run(ctx context.Context, req agent.Request, onEvent func(agent.Event)) (*agent.Result, error) {
	f.mu.Lock()
	f.requests = append(f.requests, req)
	f.mu.Unlock()
	for _, ev := range f.Events {
		onEvent(ev)
	}
	if f.Block {
		select {
		case <-ctx.Done():
			f.mu.Lock()
			f.cancels++
			f.mu.Unlock()
			if f.PartialOnCancel {
				res := f.Result
				return &res, nil
			}
			return nil, fmt.Errorf("run: %w", ctx.Err())
		case <-f.release:
		}
	}
	res := f.Result
	for _, c := range f.Changes {
		fc := agent.FileChange{Path: c.Path, After: []byte(c.After), Created: c.Created}
		if !c.Created {
			if b, ok := req.Overlays[c.Path]; ok {
				fc.Before = b
			} else {
				b, err := os.ReadFile(filepath.Join(req.Root, c.Path))
				if err != nil {
					return nil, err
				}
				fc.Before = b
			}
		}
		res.Changes = append(res.Changes, fc)
	}
	return &res, nil
}

func (f *fakeEngine) Test(ctx context.Context, root string, overlays map[string][]byte) (*testrun.Report, error) {
	if f.Report == nil {
		return nil, errors.New("no report scripted")
	}
	return f.Report, nil
}

func (f *fakeEngine) Close() error {
	f.mu.Lock()
	f.closed++
	f.mu.Unlock()
	return nil
}

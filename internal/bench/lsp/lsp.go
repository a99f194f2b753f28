// Package lsp is the language server's load benchmark (`fixpoint bench
// lsp`): [Run] drives an in-process server over a pipe while a run is in
// flight and reports client-observed latencies (a [Report]); [IdleRSS]
// measures a `fixpoint serve` process after initialize.
package lsp

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
	"github.com/fixpoint-dev/fixpoint/server"
)

// Options configure Run. Zero values are the defaults of the
// issue's load test.
type Options struct {
	DidChanges  int // textDocument/didChange events; default 1000
	CodeActions int // textDocument/codeAction requests during the run; default 1000
	RunTests    int // fixpoint.runTests requests during the run (all refused); default 100
	FileLines   int // lines of the edited file; default 5000
	// Binary, when set, is a fixpoint executable whose idle RSS after
	// initialize is measured (`Binary serve`).
	Binary string
	Logger *slog.Logger // nil discards
}

// Report is what Run measured. Latencies are client-observed
// round trips over an in-memory pipe, with a run in flight.
type Report struct {
	CodeActionP50, CodeActionP99, CodeActionMax time.Duration
	RunTestsP50, RunTestsP99                    time.Duration
	RunTestsRefused                             int
	DidChanges, FileLines                       int
	DidChangeTotal                              time.Duration // all didChange events until the server had applied them
	DidChangePerSecond                          float64
	CancelLatency                               time.Duration // fixpoint.cancel until the run's progress ended
	IdleRSS                                     int64         // bytes; 0 when Binary was not set
}

// Markdown renders the report as a table for docs/BENCHMARKS.md.
func (r *Report) Markdown() string {
	var b strings.Builder
	b.WriteString("| measure | value |\n| --- | --- |\n")
	fmt.Fprintf(&b, "| codeAction during a run, p50 / p99 / max | %v / %v / %v |\n", r.CodeActionP50, r.CodeActionP99, r.CodeActionMax)
	fmt.Fprintf(&b, "| runTests while a run is active (refused %d), p50 / p99 | %v / %v |\n", r.RunTestsRefused, r.RunTestsP50, r.RunTestsP99)
	fmt.Fprintf(&b, "| %d didChange on a %d-line file | %v total, %.0f/s |\n", r.DidChanges, r.FileLines, r.DidChangeTotal.Round(time.Microsecond), r.DidChangePerSecond)
	fmt.Fprintf(&b, "| cancel → progress end | %v |\n", r.CancelLatency)
	if r.IdleRSS > 0 {
		fmt.Fprintf(&b, "| idle RSS of `fixpoint serve` | %.1f MB |\n", float64(r.IdleRSS)/(1<<20))
	}
	return b.String()
}

// blockingEngine runs until cancelled; Test reports one passing test.
type blockingEngine struct{}

func (blockingEngine) Run(ctx context.Context, req agent.Request, onEvent func(agent.Event)) (*agent.Result, error) {
	onEvent(agent.Event{Phase: agent.PhaseCode, Iteration: 1, MaxIterations: 6, Message: "Iteration 1/6 · editing"})
	<-ctx.Done()
	return nil, ctx.Err()
}

func (blockingEngine) Test(ctx context.Context, root string, overlays map[string][]byte) (*testrun.Report, error) {
	return &testrun.Report{Runner: "go", Passed: 1}, nil
}

func (blockingEngine) Close() error { return nil }

// Run drives an in-process server over a pipe under load: a run in
// flight, then DidChanges incremental edits on a FileLines-line file,
// CodeActions code action requests and RunTests refused runTests
// commands, then cancels the run and shuts down cleanly. Any protocol
// error fails the benchmark.
func Run(ctx context.Context, opts *Options) (*Report, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.DidChanges, 1000)
	def(&o.CodeActions, 1000)
	def(&o.RunTests, 100)
	def(&o.FileLines, 5000)
	rep := &Report{DidChanges: o.DidChanges, FileLines: o.FileLines}

	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	c, err := start(ctx, &o)
	if err != nil {
		return nil, err
	}
	defer c.close()
	for _, phase := range []func(context.Context, *Options, *Report) error{c.startRun, c.didChanges, c.codeActions, c.runTests, c.cancelRun, c.shutdown} {
		if err := phase(ctx, &o, rep); err != nil {
			return nil, err
		}
	}
	if o.Binary != "" {
		if rep.IdleRSS, err = IdleRSS(ctx, o.Binary); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// Command names, as an editor sends them (README: Commands).
const (
	cmdFixTests = "fixpoint.fixTests"
	cmdRunTests = "fixpoint.runTests"
	cmdCancel   = "fixpoint.cancel"
)

// commandResult is the reply to a fixpoint command.
type commandResult struct {
	Started bool `json:"started"`
}

// client is the benchmark's LSP client, connected to an in-process server
// over a pipe, with one open file of opts.FileLines lines.
type client struct {
	srv         *server.Server
	conn        jsonrpc2.Conn
	pipe        net.Conn
	served      chan error    // Serve's result
	progressEnd chan struct{} // a $/progress end arrived
	root, uri   string
	text        string
}

// start writes the workspace, starts the server on a pipe with an engine
// that blocks until cancelled, and initializes it with the file open.
func start(ctx context.Context, o *Options) (*client, error) {
	root, err := os.MkdirTemp("", "fixpoint-bench-")
	if err != nil {
		return nil, err
	}
	var file strings.Builder
	for i := 0; i < o.FileLines; i++ {
		fmt.Fprintf(&file, "\tx%d := compute(%d) // 日本 😀 line %d\n", i, i, i)
	}
	c := &client{root: root, uri: fileURI(filepath.Join(root, "main.go")), text: file.String(),
		served: make(chan error, 1), progressEnd: make(chan struct{}, 4)}
	if err := os.WriteFile(filepath.Join(root, "main.go"), []byte(c.text), 0o644); err != nil {
		os.RemoveAll(root)
		return nil, err
	}
	c.srv = server.New(&server.Options{
		Logger:     o.Logger,
		Getenv:     func(string) string { return "" },
		UserConfig: "-",
		TrustDir:   "-",
		NewEngine: func(context.Context, *config.Config, string, server.Hooks) (server.Engine, error) {
			return blockingEngine{}, nil
		},
	})
	cs, ss := net.Pipe()
	c.pipe = cs
	go func() { c.served <- c.srv.Serve(ctx, ss) }() // ends at exit or when ctx ends
	c.conn = jsonrpc2.NewConn(jsonrpc2.NewStream(cs))
	c.conn.Go(ctx, func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		if req.Method() == "$/progress" && strings.Contains(string(req.Params()), `"end"`) {
			c.progressEnd <- struct{}{}
		}
		if _, ok := req.(*jsonrpc2.Call); ok {
			_ = reply(ctx, nil, nil)
		}
		return nil
	})
	// workspaceTrusted: the editor vouches for the folder, as VS Code does,
	// so actions run instead of asking whether to trust it.
	if err := c.call(ctx, "initialize", map[string]any{"rootUri": fileURI(root), "capabilities": map[string]any{
		"window": map[string]any{"workDoneProgress": true}}, "initializationOptions": map[string]any{"workspaceTrusted": true}}, nil); err != nil {
		c.close()
		return nil, fmt.Errorf("initialize: %w", err)
	}
	_ = c.conn.Notify(ctx, "initialized", map[string]any{})
	_ = c.conn.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": c.uri, "languageId": "go", "version": 1, "text": c.text}})
	return c, nil
}

func (c *client) close() {
	c.pipe.Close()
	os.RemoveAll(c.root)
}

func (c *client) call(ctx context.Context, method string, params, result any) error {
	_, err := c.conn.Call(ctx, method, params, result)
	return err
}

// startRun starts a run that lasts until cancelled.
func (c *client) startRun(ctx context.Context, o *Options, rep *Report) error {
	var started commandResult
	if err := c.call(ctx, "workspace/executeCommand", map[string]any{"command": cmdFixTests, "arguments": []any{map[string]any{"uri": c.uri}}}, &started); err != nil || !started.Started {
		return fmt.Errorf("start the run: %v %+v", err, started)
	}
	return nil
}

// didChanges types one character per event at spread-out lines, then
// waits for a request round trip: the server handled every change before.
func (c *client) didChanges(ctx context.Context, o *Options, rep *Report) error {
	t0 := time.Now()
	for i := 0; i < o.DidChanges; i++ {
		line := (i * 37) % o.FileLines
		ch := map[string]any{"range": map[string]any{
			"start": map[string]any{"line": line, "character": 30}, "end": map[string]any{"line": line, "character": 30}}, "text": "é"}
		if err := c.conn.Notify(ctx, "textDocument/didChange", map[string]any{
			"textDocument": map[string]any{"uri": c.uri, "version": i + 2}, "contentChanges": []any{ch}}); err != nil {
			return fmt.Errorf("didChange %d: %w", i, err)
		}
	}
	if err := c.call(ctx, "textDocument/codeAction", codeActionParams(c.uri, 0), nil); err != nil {
		return err
	}
	rep.DidChangeTotal = time.Since(t0)
	rep.DidChangePerSecond = float64(o.DidChanges) / rep.DidChangeTotal.Seconds()
	if v, ok := c.srv.DocumentVersion(c.uri); !ok || int(v) != o.DidChanges+1 {
		return fmt.Errorf("after %d changes the document is at version %d, want %d", o.DidChanges, v, o.DidChanges+1)
	}
	return nil
}

// codeActions times code action requests while the run is in flight.
func (c *client) codeActions(ctx context.Context, o *Options, rep *Report) error {
	lat := make([]time.Duration, 0, o.CodeActions)
	for i := 0; i < o.CodeActions; i++ {
		var actions []json.RawMessage
		t := time.Now()
		if err := c.call(ctx, "textDocument/codeAction", codeActionParams(c.uri, (i*13)%o.FileLines), &actions); err != nil {
			return fmt.Errorf("codeAction %d: %w", i, err)
		}
		lat = append(lat, time.Since(t))
		if len(actions) == 0 {
			return fmt.Errorf("codeAction %d returned no actions", i)
		}
	}
	rep.CodeActionP50, rep.CodeActionP99, rep.CodeActionMax = percentiles(lat)
	return nil
}

// runTests times runTests commands, which a folder with a run in flight
// refuses.
func (c *client) runTests(ctx context.Context, o *Options, rep *Report) error {
	lat := make([]time.Duration, 0, o.RunTests)
	for i := 0; i < o.RunTests; i++ {
		var res commandResult
		t := time.Now()
		if err := c.call(ctx, "workspace/executeCommand", map[string]any{"command": cmdRunTests, "arguments": []any{map[string]any{"uri": c.uri}}}, &res); err != nil {
			return fmt.Errorf("runTests %d: %w", i, err)
		}
		lat = append(lat, time.Since(t))
		if !res.Started {
			rep.RunTestsRefused++
		}
	}
	rep.RunTestsP50, rep.RunTestsP99, _ = percentiles(lat)
	return nil
}

// cancelRun cancels the run and times until its progress ends.
func (c *client) cancelRun(ctx context.Context, o *Options, rep *Report) error {
	t0 := time.Now()
	if err := c.call(ctx, "workspace/executeCommand", map[string]any{"command": cmdCancel}, nil); err != nil {
		return err
	}
	select {
	case <-c.progressEnd:
		rep.CancelLatency = time.Since(t0)
		return nil
	case <-ctx.Done():
		return errors.New("the run did not end after fixpoint.cancel")
	}
}

// shutdown shuts the server down; Serve must return without an error.
func (c *client) shutdown(ctx context.Context, o *Options, rep *Report) error {
	if err := c.call(ctx, "shutdown", nil, nil); err != nil {
		return err
	}
	_ = c.conn.Notify(ctx, "exit", nil)
	if err := <-c.served; err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}

// fileURI is the file: URI of an absolute path, as an editor sends it.
func fileURI(path string) string {
	u := url.URL{Scheme: "file", Path: filepath.ToSlash(path)}
	return u.String()
}

func codeActionParams(uri string, line int) map[string]any {
	p := map[string]any{"line": line, "character": 0}
	return map[string]any{"textDocument": map[string]any{"uri": uri},
		"range": map[string]any{"start": p, "end": p}, "context": map[string]any{"diagnostics": []any{}}}
}

func percentiles(d []time.Duration) (p50, p99, max time.Duration) {
	if len(d) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(d)
	slices.Sort(s)
	at := func(q float64) time.Duration { return s[min(len(s)-1, int(q*float64(len(s))))] }
	return at(0.50), at(0.99), s[len(s)-1]
}

// IdleRSS starts `binary serve`, initializes it over stdio, lets it
// settle and returns its resident set size (VmRSS, Linux), then shuts it
// down cleanly.
func IdleRSS(ctx context.Context, binary string) (int64, error) {
	cmd := exec.CommandContext(ctx, binary, "serve")
	cmd.Env = append(os.Environ(), "FIXPOINT_LOG=error")
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return 0, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return 0, err
	}
	if err := cmd.Start(); err != nil {
		return 0, fmt.Errorf("start %s serve: %w", binary, err)
	}
	defer cmd.Process.Kill()
	in := bufio.NewReader(stdout)
	send := func(body string) error {
		_, err := fmt.Fprintf(stdin, "Content-Length: %d\r\n\r\n%s", len(body), body)
		return err
	}
	readOne := func() error {
		n := 0
		for {
			line, err := in.ReadString('\n')
			if err != nil {
				return err
			}
			line = strings.TrimSpace(line)
			if line == "" {
				break
			}
			if v, ok := strings.CutPrefix(line, "Content-Length: "); ok {
				n, _ = strconv.Atoi(v)
			}
		}
		_, err := io.CopyN(io.Discard, in, int64(n))
		return err
	}
	if err := send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`); err != nil {
		return 0, err
	}
	if err := readOne(); err != nil {
		return 0, fmt.Errorf("read initialize reply: %w", err)
	}
	_ = send(`{"jsonrpc":"2.0","method":"initialized","params":{}}`)
	time.Sleep(500 * time.Millisecond)
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	var rss int64
	for _, line := range strings.Split(string(status), "\n") {
		if v, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			rss = kb << 10
		}
	}
	_ = send(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`)
	_ = readOne()
	_ = send(`{"jsonrpc":"2.0","method":"exit"}`)
	if err := cmd.Wait(); err != nil {
		return rss, fmt.Errorf("%s serve did not exit cleanly: %w", binary, err)
	}
	return rss, nil
}

package server

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
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
)

// BenchOptions configure Bench. Zero values are the defaults of the
// issue's load test.
type BenchOptions struct {
	DidChanges  int // textDocument/didChange events; default 1000
	CodeActions int // textDocument/codeAction requests during the run; default 1000
	RunTests    int // fixpoint.runTests requests during the run (all refused); default 100
	FileLines   int // lines of the edited file; default 5000
	// Binary, when set, is a fixpoint executable whose idle RSS after
	// initialize is measured (`Binary serve`).
	Binary string
	Logger *slog.Logger // nil discards
}

// BenchReport is what Bench measured. Latencies are client-observed
// round trips over an in-memory pipe, with a run in flight.
type BenchReport struct {
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
func (r *BenchReport) Markdown() string {
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

// Bench drives an in-process server over a pipe under load: a run in
// flight, then DidChanges incremental edits on a FileLines-line file,
// CodeActions code action requests and RunTests refused runTests
// commands, then cancels the run and shuts down cleanly. Any protocol
// error fails the benchmark.
func Bench(ctx context.Context, opts *BenchOptions) (*BenchReport, error) {
	o := BenchOptions{}
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
	rep := &BenchReport{DidChanges: o.DidChanges, FileLines: o.FileLines}

	root, err := os.MkdirTemp("", "fixpoint-bench-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(root)
	var file strings.Builder
	for i := 0; i < o.FileLines; i++ {
		fmt.Fprintf(&file, "\tx%d := compute(%d) // 日本 😀 line %d\n", i, i, i)
	}
	if err := os.WriteFile(filepath.Join(root, "main.go"), []byte(file.String()), 0o644); err != nil {
		return nil, err
	}

	srv := New(&Options{
		Logger:     o.Logger,
		Getenv:     func(string) string { return "" },
		UserConfig: "-",
		NewEngine: func(context.Context, *config.Config, string, Hooks) (Engine, error) {
			return blockingEngine{}, nil
		},
	})
	ctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
	defer cancel()
	cs, ss := net.Pipe()
	defer cs.Close()
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ctx, ss) }()
	progressEnd := make(chan struct{}, 4)
	client := jsonrpc2.NewConn(jsonrpc2.NewStream(cs))
	client.Go(ctx, func(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
		if req.Method() == "$/progress" && strings.Contains(string(req.Params()), `"end"`) {
			progressEnd <- struct{}{}
		}
		if _, ok := req.(*jsonrpc2.Call); ok {
			_ = reply(ctx, nil, nil)
		}
		return nil
	})
	call := func(method string, params any, result any) error {
		_, err := client.Call(ctx, method, params, result)
		return err
	}
	uri := fileURI(filepath.Join(root, "main.go"))
	if err := call("initialize", map[string]any{"rootUri": fileURI(root), "capabilities": map[string]any{
		"window": map[string]any{"workDoneProgress": true}}}, nil); err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	_ = client.Notify(ctx, "initialized", map[string]any{})
	_ = client.Notify(ctx, "textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": uri, "languageId": "go", "version": 1, "text": file.String()}})
	var started commandResult
	if err := call("workspace/executeCommand", map[string]any{"command": cmdFixTests, "arguments": []any{map[string]any{"uri": uri}}}, &started); err != nil || !started.Started {
		return nil, fmt.Errorf("start the run: %v %+v", err, started)
	}

	// didChange: typing one character per event at spread-out lines.
	t0 := time.Now()
	for i := 0; i < o.DidChanges; i++ {
		line := (i * 37) % o.FileLines
		ch := map[string]any{"range": map[string]any{
			"start": map[string]any{"line": line, "character": 30}, "end": map[string]any{"line": line, "character": 30}}, "text": "é"}
		if err := client.Notify(ctx, "textDocument/didChange", map[string]any{
			"textDocument": map[string]any{"uri": uri, "version": i + 2}, "contentChanges": []any{ch}}); err != nil {
			return nil, fmt.Errorf("didChange %d: %w", i, err)
		}
	}
	// A request round trip: the server handled every change before it.
	if err := call("textDocument/codeAction", codeActionParams(uri, 0), nil); err != nil {
		return nil, err
	}
	rep.DidChangeTotal = time.Since(t0)
	rep.DidChangePerSecond = float64(o.DidChanges) / rep.DidChangeTotal.Seconds()
	if d := srv.docs.get(uri); d == nil || int(d.version) != o.DidChanges+1 {
		return nil, fmt.Errorf("after %d changes the document is at the wrong version", o.DidChanges)
	}

	lat := make([]time.Duration, 0, o.CodeActions)
	for i := 0; i < o.CodeActions; i++ {
		var actions []json.RawMessage
		t := time.Now()
		if err := call("textDocument/codeAction", codeActionParams(uri, (i*13)%o.FileLines), &actions); err != nil {
			return nil, fmt.Errorf("codeAction %d: %w", i, err)
		}
		lat = append(lat, time.Since(t))
		if len(actions) == 0 {
			return nil, fmt.Errorf("codeAction %d returned no actions", i)
		}
	}
	rep.CodeActionP50, rep.CodeActionP99, rep.CodeActionMax = percentiles(lat)

	lat = lat[:0]
	for i := 0; i < o.RunTests; i++ {
		var res commandResult
		t := time.Now()
		if err := call("workspace/executeCommand", map[string]any{"command": cmdRunTests, "arguments": []any{map[string]any{"uri": uri}}}, &res); err != nil {
			return nil, fmt.Errorf("runTests %d: %w", i, err)
		}
		lat = append(lat, time.Since(t))
		if !res.Started {
			rep.RunTestsRefused++
		}
	}
	rep.RunTestsP50, rep.RunTestsP99, _ = percentiles(lat)

	t0 = time.Now()
	if err := call("workspace/executeCommand", map[string]any{"command": cmdCancel}, nil); err != nil {
		return nil, err
	}
	select {
	case <-progressEnd:
		rep.CancelLatency = time.Since(t0)
	case <-ctx.Done():
		return nil, errors.New("the run did not end after fixpoint.cancel")
	}
	if err := call("shutdown", nil, nil); err != nil {
		return nil, err
	}
	_ = client.Notify(ctx, "exit", nil)
	if err := <-served; err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	if o.Binary != "" {
		if rep.IdleRSS, err = IdleRSS(ctx, o.Binary); err != nil {
			return nil, err
		}
	}
	return rep, nil
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

package attacks

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/textproto"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"time"
)

// lspTranscript is what a serve step saw from the server.
type lspTranscript struct {
	mu        sync.Mutex
	raw       bytes.Buffer // every message body, for the key and secret checks
	userTexts []string     // texts an editor shows: messages, progress, status, diagnostics
	applied   []string     // workspace/applyEdit params
	statuses  []map[string]any
	badFrame  string // stdout that was not a JSON-RPC frame
	// settings answer workspace/configuration: {} for the user's editor,
	// the stranger's own settings on a --listen connection.
	settings map[string]any
}

// finalState is the state of the last $/fixpoint/status that is not "running".
func (l *lspTranscript) finalState() string {
	if l == nil {
		return ""
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	for i := len(l.statuses) - 1; i >= 0; i-- {
		if s, _ := l.statuses[i]["state"].(string); s != "running" && s != "" {
			return s
		}
	}
	return ""
}

type rpcMsg struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id,omitempty"`
	Method  string          `json:"method,omitempty"`
	Params  json.RawMessage `json:"params,omitempty"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   json.RawMessage `json:"error,omitempty"`
}

// serve runs `fixpoint serve` over stdio as an editor without a baseUrl
// setting would: it opens the workspace, runs the step's command, waits for
// the run's final status, and shuts down. It answers the server's
// requests as a cautious user: configuration is empty, an applyEdit is
// recorded (and reported applied), a question is dismissed.
func (e *env) serve(s step) runResult {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "serve")
	cmd.Dir = e.ws
	cmd.Env = append(e.baseEnv(), "FIXPOINT_MAX_ITERATIONS="+fmt.Sprint(e.maxIter()))
	stdin, err := cmd.StdinPipe()
	must(e.t, err)
	stdout, err := cmd.StdoutPipe()
	must(e.t, err)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 10 * time.Second
	must(e.t, cmd.Start())
	tr := e.lspSession(ctx, stdout, stdin, s, map[string]any{})
	stdin.Close()
	cmd.Wait()
	r := runResult{step: s, args: []string{"serve", s.Command}, stderr: stderr.Bytes(), lsp: tr, timedOut: ctx.Err() != nil}
	if cmd.ProcessState != nil {
		r.code = cmd.ProcessState.ExitCode()
	}
	e.noteBadFrame(&r)
	return r
}

// listen runs `fixpoint serve --listen 127.0.0.1:0` as the user would (the
// user's key in its environment), and connects to it as another local
// user: the first client names the user's folder and its own base URL.
func (e *env) listen(s step) runResult {
	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, "serve", "--listen", "127.0.0.1:0")
	cmd.Dir = e.ws
	cmd.Env = append(e.baseEnv(), "FIXPOINT_MAX_ITERATIONS="+fmt.Sprint(e.maxIter()))
	stderrPipe, err := cmd.StderrPipe()
	must(e.t, err)
	cmd.WaitDelay = 10 * time.Second
	must(e.t, cmd.Start())
	var stderr bytes.Buffer
	addrc := make(chan string, 1)
	copied := make(chan struct{})
	go func() { // copies stderr, reporting the "listening on ADDR" line
		defer close(copied)
		sc := bufio.NewScanner(stderrPipe)
		sent := false
		for sc.Scan() {
			line := sc.Text()
			stderr.WriteString(line + "\n")
			if i := strings.Index(line, "listening on "); i >= 0 && !sent {
				addrc <- strings.Fields(line[i+len("listening on "):])[0]
				sent = true
			}
		}
		if !sent {
			close(addrc)
		}
	}()
	r := runResult{step: s, args: []string{"serve", "--listen", "127.0.0.1:0", s.Command}}
	addr, ok := <-addrc
	if ok {
		if conn, err := net.Dial("tcp", addr); err == nil {
			opts := map[string]any{"baseUrl": e.attacker.url + "/v1", "model": "attacker-model", "sandbox": "none"}
			r.lsp = e.lspSession(ctx, conn, conn, s, opts)
			conn.Close()
		} else {
			r.lsp = &lspTranscript{}
			e.t.Logf("connect %s: %v", addr, err)
		}
	} else {
		r.lsp = &lspTranscript{}
	}
	cmd.Process.Signal(os.Interrupt)
	cmd.Wait()
	<-copied
	r.stderr = stderr.Bytes()
	r.timedOut = ctx.Err() != nil
	if cmd.ProcessState != nil {
		r.code = cmd.ProcessState.ExitCode()
	}
	e.noteBadFrame(&r)
	return r
}

func (e *env) noteBadFrame(r *runResult) {
	if r.lsp != nil && r.lsp.badFrame != "" {
		r.stderr = append(r.stderr, []byte("\nattacks harness: stdout was not JSON-RPC: "+r.lsp.badFrame)...)
		r.lsp.userTexts = append(r.lsp.userTexts, "stdout was not JSON-RPC: \x1b"+r.lsp.badFrame)
	}
}

// lspSession speaks LSP over in/out: initialize (the workspace as the one
// folder, initOpts as initializationOptions), initialized, the step's
// command, the run's final status, shutdown and exit.
func (e *env) lspSession(ctx context.Context, in io.Reader, out io.Writer, s step, initOpts map[string]any) *lspTranscript {
	tr := &lspTranscript{settings: initOpts}
	var wmu sync.Mutex
	write := func(m any) {
		b, _ := json.Marshal(m)
		wmu.Lock()
		defer wmu.Unlock()
		fmt.Fprintf(out, "Content-Length: %d\r\n\r\n%s", len(b), b)
	}
	responses := make(chan rpcMsg, 16)
	final := make(chan struct{})
	var finalOnce sync.Once
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		r := bufio.NewReader(in)
		for {
			body, err := readFrame(r)
			if err != nil {
				if err != io.EOF && !strings.Contains(err.Error(), "closed") {
					tr.mu.Lock()
					tr.badFrame = err.Error()
					tr.mu.Unlock()
				}
				return
			}
			var m rpcMsg
			if err := json.Unmarshal(body, &m); err != nil {
				tr.mu.Lock()
				tr.badFrame = fmt.Sprintf("not JSON: %.200q", body)
				tr.mu.Unlock()
				continue
			}
			tr.mu.Lock()
			tr.raw.Write(body)
			tr.raw.WriteByte('\n')
			tr.mu.Unlock()
			tr.note(m)
			switch {
			case m.Method != "" && len(m.ID) > 0: // a request from the server
				write(map[string]any{"jsonrpc": "2.0", "id": m.ID, "result": answerServerRequest(m, tr)})
			case m.Method == "$/fixpoint/status":
				var st map[string]any
				json.Unmarshal(m.Params, &st)
				if state, _ := st["state"].(string); state != "" && state != "running" {
					finalOnce.Do(func() { close(final) })
				}
			case m.Method == "" && len(m.ID) > 0:
				select {
				case responses <- m:
				default:
				}
			}
		}
	}()
	call := func(id int, method string, params any) rpcMsg {
		write(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		for {
			select {
			case m := <-responses:
				if string(m.ID) == strconv.Itoa(id) {
					return m
				}
			case <-ctx.Done():
				return rpcMsg{}
			case <-readDone:
				return rpcMsg{}
			}
		}
	}
	uri := "file://" + e.ws
	call(1, "initialize", map[string]any{
		"processId":        nil,
		"rootUri":          uri,
		"workspaceFolders": []map[string]any{{"uri": uri, "name": "ws"}},
		"capabilities": map[string]any{
			"workspace": map[string]any{"applyEdit": true, "configuration": true, "workspaceFolders": true,
				"workspaceEdit": map[string]any{"documentChanges": true, "resourceOperations": []string{"create", "rename", "delete"}}},
			"window": map[string]any{"workDoneProgress": true, "showMessage": map[string]any{}},
		},
		"initializationOptions": initOpts,
	})
	write(map[string]any{"jsonrpc": "2.0", "method": "initialized", "params": map[string]any{}})
	var args []any
	switch s.Command {
	case "fixpoint.solveGoal":
		args = []any{map[string]any{"goal": e.subst.Replace(e.c.Goal)}}
	default:
		args = []any{map[string]any{}}
	}
	resp := call(2, "workspace/executeCommand", map[string]any{"command": s.Command, "arguments": args})
	if len(resp.Error) == 0 {
		select {
		case <-final:
		case <-ctx.Done():
		case <-readDone:
		}
	}
	call(3, "shutdown", nil)
	write(map[string]any{"jsonrpc": "2.0", "method": "exit"})
	select {
	case <-readDone:
	case <-ctx.Done():
	case <-time.After(30 * time.Second): // a server that never closes after exit
	}
	return tr
}

// readFrame reads one Content-Length framed message.
func readFrame(r *bufio.Reader) ([]byte, error) {
	tp := textproto.NewReader(r)
	h, err := tp.ReadMIMEHeader()
	if err != nil {
		return nil, err
	}
	n, err := strconv.Atoi(h.Get("Content-Length"))
	if err != nil {
		return nil, fmt.Errorf("bad header %v", h)
	}
	body := make([]byte, n)
	_, err = io.ReadFull(r, body)
	return body, err
}

// answerServerRequest answers a request from the server as a cautious
// editor user.
func answerServerRequest(m rpcMsg, tr *lspTranscript) any {
	switch m.Method {
	case "workspace/configuration":
		var p struct {
			Items []any `json:"items"`
		}
		json.Unmarshal(m.Params, &p)
		out := make([]any, len(p.Items))
		for i := range out {
			out[i] = tr.settings
		}
		return out
	case "workspace/applyEdit":
		tr.mu.Lock()
		tr.applied = append(tr.applied, string(m.Params))
		tr.mu.Unlock()
		return map[string]any{"applied": false, "failureReason": "attacks harness: recorded, not applied"}
	}
	return nil
}

// note keeps the texts an editor would show the user.
func (l *lspTranscript) note(m rpcMsg) {
	var p map[string]any
	json.Unmarshal(m.Params, &p)
	l.mu.Lock()
	defer l.mu.Unlock()
	add := func(v any) {
		if s, ok := v.(string); ok && s != "" {
			l.userTexts = append(l.userTexts, s)
		}
	}
	switch m.Method {
	case "window/showMessage", "window/logMessage", "window/showMessageRequest":
		add(p["message"])
		if acts, ok := p["actions"].([]any); ok {
			for _, a := range acts {
				if am, ok := a.(map[string]any); ok {
					add(am["title"])
				}
			}
		}
	case "$/progress":
		if v, ok := p["value"].(map[string]any); ok {
			add(v["title"])
			add(v["message"])
		}
	case "$/fixpoint/status":
		l.statuses = append(l.statuses, p)
		add(p["message"])
		add(p["reason"])
	case "textDocument/publishDiagnostics":
		if ds, ok := p["diagnostics"].([]any); ok {
			for _, d := range ds {
				if dm, ok := d.(map[string]any); ok {
					add(dm["message"])
				}
			}
		}
	}
}

package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/fixpoint-dev/fixpoint/agent"
)

// Command arguments, as sent in Command.Arguments[0].
type (
	solveArgs struct {
		Goal  string          `json:"goal"`
		URI   string          `json:"uri,omitempty"`
		Range *protocol.Range `json:"range,omitempty"`
	}
	uriArgs struct {
		URI string `json:"uri,omitempty"`
	}
)

// commandResult is executeCommand's reply: whether a run started, its id,
// and a human message when it did not.
type commandResult struct {
	Started bool   `json:"started"`
	RunID   string `json:"runId,omitempty"`
	Message string `json:"message,omitempty"`
}

// afterReply lets a handler run code once its reply is written: a run's
// goroutine must not send progress before the client has the reply.
type afterReply struct {
	result any
	then   func()
}

func (s *Server) executeCommand(ctx context.Context, req jsonrpc2.Request) (any, error) {
	var p struct {
		Command   string            `json:"command"`
		Arguments []json.RawMessage `json:"arguments"`
	}
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	var callID *jsonrpc2.ID
	if c, ok := req.(*jsonrpc2.Call); ok {
		id := c.ID()
		callID = &id
	}
	switch p.Command {
	case cmdSolveGoal:
		var a solveArgs
		if err := firstArg(p.Arguments, &a); err != nil || strings.TrimSpace(a.Goal) == "" {
			return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, cmdSolveGoal+" needs [{goal, uri?, range?}] with a non-empty goal")
		}
		return s.startRun(ctx, callID, runSolve, a.URI, a)
	case cmdFixTests, cmdRunTests:
		var a uriArgs
		if err := firstArg(p.Arguments, &a); err != nil {
			return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, p.Command+" needs [{uri?}]")
		}
		kind := runFix
		if p.Command == cmdRunTests {
			kind = runTest
		}
		return s.startRun(ctx, callID, kind, a.URI, solveArgs{})
	case cmdListModels:
		return s.listModels(ctx, p.Arguments)
	case cmdCancel:
		var a uriArgs
		_ = firstArg(p.Arguments, &a)
		n := s.countRuns(a.URI)
		msg := fmt.Sprintf("cancelling %d %s", n, plural(n, "run", "runs"))
		if n == 0 {
			msg = "nothing to cancel: no fixpoint run is active"
		}
		return afterReply{
			result: commandResult{Message: msg},
			then:   func() { s.cancelRuns(a.URI) },
		}, nil
	}
	return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("unknown command %q", p.Command))
}

// firstArg decodes arguments[0] into v; no arguments leaves v zero.
func firstArg(args []json.RawMessage, v any) error {
	if len(args) == 0 || isNull(args[0]) {
		return nil
	}
	return json.Unmarshal(args[0], v)
}

type runKind string

const (
	runSolve runKind = "solve"
	runFix   runKind = "fix"
	runTest  runKind = "test"
)

// run is one active run. Fields are set before the run's goroutine
// starts and read-only after, except staleEngine and settling (guarded
// by Server.mu) and req (written by the run's goroutine when it was
// queued behind prev).
type run struct {
	id, root, title, token string
	kind                   runKind
	callID                 *jsonrpc2.ID // the executeCommand request, for $/cancelRequest
	ctx                    context.Context
	cancel                 context.CancelFunc
	done                   chan struct{} // closed by finishRun
	docURI                 string
	args                   solveArgs
	req                    agent.Request
	prev                   *run         // the settling run this one waits for, if any
	staleEngine            bool         // the configuration changed: close the engine when done
	settling               bool         // the engine has returned: only applying or asking remain
	status                 statusParams // the last $/fixpoint/status; written only by the run's goroutine
}

// busy reports whether r still holds its folder: its engine is working
// and nobody cancelled it. A run that is only applying its result or
// waiting for an answer to a prompt is not busy; a new run queues behind
// it instead of being refused. Call with Server.mu held.
func (r *run) busy() bool { return !r.settling && r.ctx.Err() == nil }

// startRun starts a run in uri's workspace folder unless one is busy
// there. The snapshot of open buffers is taken here, in order with the
// didChange notifications before it, unless the run must first wait for
// a settling run: then it is taken once that run is done, so that it
// includes the edit that run applied.
func (s *Server) startRun(ctx context.Context, callID *jsonrpc2.ID, kind runKind, docURI string, a solveArgs) (any, error) {
	root, err := s.folderFor(docURI)
	if err != nil {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, err.Error())
	}
	s.mu.Lock()
	prev := s.runs[root]
	if prev != nil && prev.busy() {
		s.mu.Unlock()
		msg := fmt.Sprintf("fixpoint is already running in %s (%s). Wait for it to finish or cancel it (%s).", filepath.Base(root), prev.title, s.commandName(cmdCancel))
		s.showMessage(ctx, protocol.MessageTypeWarning, msg)
		return commandResult{Started: false, RunID: prev.id, Message: msg}, nil
	}
	s.seq++
	r := &run{id: fmt.Sprintf("run-%d", s.seq), root: root, kind: kind, callID: callID,
		docURI: docURI, args: a, prev: prev, done: make(chan struct{})}
	r.token = "fixpoint/" + r.id
	r.ctx, r.cancel = context.WithCancel(ctx)
	switch kind {
	case runSolve:
		r.title = "Solve goal: " + a.Goal
	case runFix:
		r.title = "Fix until tests pass"
	case runTest:
		r.title = "Run tests"
	}
	s.runs[root] = r
	s.handWarmToRun(root)
	s.runWG.Add(1)
	s.mu.Unlock()
	if prev == nil {
		s.snapshot(r)
	}
	s.logger.Info("run start", "run", r.id, "kind", kind, "root", root)
	return afterReply{
		result: commandResult{Started: true, RunID: r.id},
		then: func() {
			if prev != nil {
				// The new run withdraws a prompt the settling run is
				// waiting on; an applyEdit it already sent still completes.
				prev.cancel()
			}
			go s.execute(r.ctx, r)
		},
	}, nil
}

// snapshot fills r.req from the open buffers under r.root.
func (s *Server) snapshot(r *run) {
	docs := s.docs.under(r.root)
	overlays := make(map[string][]byte, len(docs))
	for rel, d := range docs {
		overlays[rel] = []byte(d.text())
	}
	focus := ""
	if p := uriPath(r.docURI); p != "" {
		focus, _ = relPath(r.root, p)
	}
	r.req = agent.Request{Root: r.root, Overlays: overlays}
	if focus != "" {
		r.req.Focus = []string{focus}
	}
	switch r.kind {
	case runSolve:
		r.req.Mode, r.req.Goal = agent.ModeSolve, r.args.Goal
		if focus != "" && r.args.Range != nil {
			r.req.GoalComment = s.goalComment(r.root, focus, docs, int(r.args.Range.Start.Line))
		}
	case runFix:
		r.req.Mode = agent.ModeFix
	}
}

// goalComment returns the location of the goal comment on line, if that
// line (in the buffer or on disk) is one.
func (s *Server) goalComment(root, rel string, docs map[string]*document, line int) *agent.Location {
	var idx *lineIndex
	if d, ok := docs[rel]; ok {
		idx = d.idx
	} else if data, err := os.ReadFile(filepath.Join(root, filepath.FromSlash(rel))); err == nil {
		idx = newLineIndex(string(data))
	}
	if idx == nil {
		return nil
	}
	if _, ok := goalIn(idx.lineText(line)); !ok {
		return nil
	}
	return &agent.Location{Path: rel, Line: line}
}

// folderFor returns the workspace folder holding docURI, the only folder
// when docURI is empty, or an error a user can act on.
func (s *Server) folderFor(docURI string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.folders) == 0 {
		return "", errors.New("fixpoint needs a workspace folder: open a folder (the project root), not a single file")
	}
	p := uriPath(docURI)
	if p == "" {
		if docURI != "" && !strings.HasPrefix(docURI, "file:") {
			return "", fmt.Errorf("fixpoint works on files in a workspace folder, not on %s", docURI)
		}
		return s.folders[0], nil
	}
	best := ""
	for _, f := range s.folders {
		// The folder itself (a client passing the folder's URI) counts too.
		if _, ok := relPath(f, p); (ok || filepath.Clean(p) == filepath.Clean(f)) && len(f) > len(best) {
			best = f
		}
	}
	if best == "" {
		return "", fmt.Errorf("%s is outside the workspace folders", p)
	}
	return best, nil
}

// countRuns counts the runs cancelRuns(docURI) would cancel.
func (s *Server) countRuns(docURI string) int {
	root := ""
	if docURI != "" {
		root, _ = s.folderFor(docURI)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for f := range s.runs {
		if root == "" || f == root {
			n++
		}
	}
	return n
}

// cancelRuns cancels the run in docURI's folder, or every run when docURI
// is empty, and returns how many it cancelled.
func (s *Server) cancelRuns(docURI string) int {
	root := ""
	if docURI != "" {
		root, _ = s.folderFor(docURI)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for f, r := range s.runs {
		if root == "" || f == root {
			r.cancel()
			n++
		}
	}
	return n
}

// cancelRequest handles $/cancelRequest. Requests are answered as they
// arrive, so the only thing still running for an id is the run that an
// executeCommand with that id started: cancel it. Ids may be numbers
// (VS Code, Neovim) or strings.
func (s *Server) cancelRequest(ctx context.Context, req jsonrpc2.Request) (any, error) {
	var p struct {
		ID json.RawMessage `json:"id"`
	}
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	var id jsonrpc2.ID
	if err := id.UnmarshalJSON(p.ID); err != nil {
		return nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, r := range s.runs {
		if r.callID != nil && *r.callID == id {
			s.logger.Info("run cancelled by $/cancelRequest", "run", r.id)
			r.cancel()
		}
	}
	return nil, nil
}

func (s *Server) workDoneProgressCancel(ctx context.Context, req jsonrpc2.Request) (any, error) {
	var p struct {
		Token any `json:"token"`
	}
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	tok := fmt.Sprint(p.Token)
	s.mu.Lock()
	defer s.mu.Unlock()
	s.workDoneProgressCancelWarm(tok)
	for _, r := range s.runs {
		if r.token == tok {
			s.logger.Info("run cancelled by workDoneProgress/cancel", "run", r.id)
			r.cancel()
		}
	}
	return nil, nil
}

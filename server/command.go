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

// serverCommand is one workspace/executeCommand command. commands() is
// the one declaration of them: initialize advertises the ids of those
// with a handler, executeCommand dispatches on it, and commandName takes
// the shipped plugins' names for a command from it.
type serverCommand struct {
	id string
	// nvim and emacs are how the shipped plugins invoke the command
	// (":FixpointFix", "M-x fixpoint-fix-tests"); "" when they have none.
	nvim, emacs string
	// elsewhere is what commandName says in other clients; "" = the id.
	elsewhere string
	// handle answers the command. callID is the executeCommand request's
	// id ($/cancelRequest names it), nil for a notification. A nil handle
	// is a pseudo-command: a name for messages, never advertised.
	handle func(s *Server, ctx context.Context, callID *jsonrpc2.ID, args []json.RawMessage) (any, error)
	// hidden: handled, never advertised (a shipped plugin's own).
	hidden bool
}

// commands lists the server's commands, in the order they are advertised.
func commands() []serverCommand {
	return []serverCommand{
		{id: cmdSolveGoal, nvim: ":FixpointSolve", emacs: "M-x fixpoint-solve-goal", handle: (*Server).solveGoal},
		{id: cmdFixTests, nvim: ":FixpointFix", emacs: "M-x fixpoint-fix-tests", handle: runCommand(runFix)},
		{id: cmdRunTests, nvim: ":FixpointTest", emacs: "M-x fixpoint-run-tests", handle: runCommand(runTest)},
		{id: cmdCancel, nvim: ":FixpointCancel", emacs: "M-x fixpoint-cancel", handle: (*Server).cancelCommand},
		{id: cmdListModels, handle: func(s *Server, ctx context.Context, _ *jsonrpc2.ID, args []json.RawMessage) (any, error) {
			return s.listModels(ctx, args)
		}},
		// The shipped Neovim plugin's answer to a preview it keeps open
		// (applyEdit answered with failureReason previewPending); never
		// advertised: no other client sends it.
		{id: cmdAnswerEdit, hidden: true, handle: (*Server).answerEdit},
		{id: logWhere, nvim: ":FixpointLog", emacs: "M-x fixpoint-show-diff", elsewhere: "the fixpoint output log"},
	}
}

// advertisedCommands are the ids of executeCommandProvider.
func advertisedCommands() []string {
	var ids []string
	for _, c := range commands() {
		if c.handle != nil && !c.hidden {
			ids = append(ids, c.id)
		}
	}
	return ids
}

// lookupCommand finds a command (or pseudo-command) by id.
func lookupCommand(id string) (serverCommand, bool) {
	for _, c := range commands() {
		if c.id == id {
			return c, true
		}
	}
	return serverCommand{}, false
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
	if c, ok := lookupCommand(p.Command); ok && c.handle != nil {
		return c.handle(s, ctx, callID, p.Arguments)
	}
	return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("unknown command %q", p.Command))
}

// solveGoal answers fixpoint.solveGoal [{goal, uri?, range?}].
func (s *Server) solveGoal(ctx context.Context, callID *jsonrpc2.ID, args []json.RawMessage) (any, error) {
	var a solveArgs
	if err := firstArg(args, &a); err != nil || strings.TrimSpace(a.Goal) == "" {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, cmdSolveGoal+" needs [{goal, uri?, range?}] with a non-empty goal")
	}
	return s.startRun(ctx, callID, runSolve, a.URI, a)
}

// runCommand answers fixpoint.fixTests and fixpoint.runTests [{uri?}].
func runCommand(kind runKind) func(*Server, context.Context, *jsonrpc2.ID, []json.RawMessage) (any, error) {
	return func(s *Server, ctx context.Context, callID *jsonrpc2.ID, args []json.RawMessage) (any, error) {
		var a uriArgs
		if err := firstArg(args, &a); err != nil {
			return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, kind.command()+" needs [{uri?}]")
		}
		return s.startRun(ctx, callID, kind, a.URI, solveArgs{})
	}
}

// cancelCommand answers fixpoint.cancel [{uri?}]: the runs in uri's
// folder, or all runs, are cancelled once the reply is written.
func (s *Server) cancelCommand(_ context.Context, _ *jsonrpc2.ID, args []json.RawMessage) (any, error) {
	var a uriArgs
	_ = firstArg(args, &a)
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

// firstArg decodes arguments[0] into v; no arguments leaves v zero.
func firstArg(args []json.RawMessage, v any) error {
	if len(args) == 0 || isNull(args[0]) {
		return nil
	}
	return json.Unmarshal(args[0], v)
}

// runKind is what a run does. The kinds are declared once, here, and
// [runKind.title] and [runKind.mode] are the one place that tells them
// apart.
type runKind string

const (
	runSolve runKind = "solve"
	runFix   runKind = "fix"
	runTest  runKind = "test"
)

// title is what progress and status show for a run of the kind.
func (k runKind) title(goal string) string {
	switch k {
	case runSolve:
		return "Solve goal: " + goal
	case runFix:
		return "Fix until tests pass"
	case runTest:
		return "Run tests"
	}
	return string(k)
}

// command is the id of the command that starts a run of the kind.
func (k runKind) command() string {
	switch k {
	case runSolve:
		return cmdSolveGoal
	case runFix:
		return cmdFixTests
	case runTest:
		return cmdRunTests
	}
	return string(k)
}

// mode is the agent mode a run of the kind asks for; "" for runTest,
// which only runs the tests and never calls the agent loop.
func (k runKind) mode() agent.Mode {
	switch k {
	case runSolve:
		return agent.ModeSolve
	case runFix:
		return agent.ModeFix
	}
	return ""
}

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
	confirmed              bool         // the user accepted the plugin's preview: the edit is sent again, to apply
	settling               bool         // the engine has returned: only applying or asking remain
	status                 statusParams // the last $/fixpoint/status; written only by the run's goroutine
	end                    runEnd       // how far the run's reporting has ended; only the run's goroutine
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
	r.title = kind.title(a.Goal)
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
	r.req.Mode = r.kind.mode()
	if r.req.Mode == agent.ModeSolve {
		r.req.Goal = r.args.Goal
		if focus != "" && r.args.Range != nil {
			r.req.GoalComment = s.goalComment(r.root, focus, docs, int(r.args.Range.Start.Line))
		}
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

package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/fixpoint-dev/fixpoint/agent"
)

// Wire types for workspace/applyEdit. protocol.WorkspaceEdit cannot hold
// resource operations in documentChanges, so the server has its own.
type (
	workspaceEdit struct {
		Changes         map[string][]protocol.TextEdit `json:"changes,omitempty"`
		DocumentChanges []any                          `json:"documentChanges,omitempty"`
	}
	textDocumentEdit struct {
		TextDocument versionedDoc        `json:"textDocument"`
		Edits        []protocol.TextEdit `json:"edits"`
	}
	versionedDoc struct {
		URI     string `json:"uri"`
		Version *int32 `json:"version"` // null: the file on disk
	}
	resourceOp struct {
		Kind         string     `json:"kind"` // create | delete
		URI          string     `json:"uri"`
		Options      *opOptions `json:"options,omitempty"`
		AnnotationID string     `json:"annotationId,omitempty"`
	}
	opOptions struct {
		Overwrite         bool `json:"overwrite,omitempty"`
		IgnoreIfExists    bool `json:"ignoreIfExists,omitempty"`
		IgnoreIfNotExists bool `json:"ignoreIfNotExists,omitempty"`
	}
	applyParams struct {
		Label    string     `json:"label,omitempty"`
		Edit     any        `json:"edit"` // workspaceEdit or annotatedWorkspaceEdit
		Fixpoint *applyMeta `json:"fixpoint,omitempty"`
	}
)

// current is the state of a workspace file now: the open buffer if there
// is one, else the file on disk.
type current struct {
	uri     string
	version *int32 // nil when not open
	text    string
	exists  bool
}

// fileEdit is the planned edit of one file.
type fileEdit struct {
	rel     string
	cur     current
	edits   []protocol.TextEdit
	create  bool
	delete  bool
	rebased bool
}

// planEdits turns a run's changes into per-file edits against the current
// state. A file whose current text differs from the run's starting text is
// rebased when the regions don't overlap; otherwise it is reported in
// conflicts (and force, "Apply anyway", replaces it with the result).
func planEdits(changes []agent.FileChange, state func(rel string) current, force bool) (plan []fileEdit, conflicts []string) {
	for _, c := range changes {
		cur := state(c.Path)
		fe := fileEdit{rel: c.Path, cur: cur}
		switch {
		case c.Deleted:
			fe.delete = true
		case c.Created || c.Before == nil:
			if cur.exists && cur.text != string(c.After) && !force {
				conflicts = append(conflicts, c.Path)
				continue
			}
			if cur.exists {
				fe.edits = textEdits(cur.text, string(c.After))
			} else {
				fe.create = true
				fe.edits = []protocol.TextEdit{{NewText: string(c.After)}}
			}
		default:
			base, after := string(c.Before), string(c.After)
			target := after
			if cur.text != base {
				merged, ok := rebase(base, cur.text, after)
				if !ok && !force {
					conflicts = append(conflicts, c.Path)
					continue
				}
				if ok {
					target, fe.rebased = merged, true
				}
			}
			fe.edits = textEdits(cur.text, target)
		}
		plan = append(plan, fe)
	}
	return plan, conflicts
}

// buildWorkspaceEdit assembles one WorkspaceEdit for the plan, honouring
// the client's capabilities. It fails when files must be created or
// deleted and the client cannot do resource operations.
func buildWorkspaceEdit(plan []fileEdit, caps clientCaps) (workspaceEdit, error) {
	var we workspaceEdit
	var cannot []string
	for _, fe := range plan {
		if (fe.create && !caps.canCreate()) || (fe.delete && !caps.canDelete()) {
			cannot = append(cannot, fe.rel)
		}
	}
	if len(cannot) > 0 {
		return we, fmt.Errorf("the result creates or deletes %s, and this editor cannot create or delete files through LSP (the diff is in the log)", strings.Join(cannot, ", "))
	}
	if !caps.documentChanges {
		we.Changes = map[string][]protocol.TextEdit{}
		for _, fe := range plan {
			if len(fe.edits) > 0 {
				we.Changes[fe.cur.uri] = fe.edits
			}
		}
		return we, nil
	}
	for _, fe := range plan {
		switch {
		case fe.delete:
			we.DocumentChanges = append(we.DocumentChanges, resourceOp{Kind: "delete", URI: fe.cur.uri, Options: &opOptions{IgnoreIfNotExists: true}})
			continue
		case fe.create:
			we.DocumentChanges = append(we.DocumentChanges, resourceOp{Kind: "create", URI: fe.cur.uri, Options: &opOptions{IgnoreIfExists: true}})
		}
		if len(fe.edits) > 0 {
			we.DocumentChanges = append(we.DocumentChanges, textDocumentEdit{TextDocument: versionedDoc{URI: fe.cur.uri, Version: fe.cur.version}, Edits: fe.edits})
		}
	}
	return we, nil
}

// stateFunc returns the current state of files in root: open buffers
// first, then the disk.
func (s *Server) stateFunc(root string) func(rel string) current {
	open := s.docs.under(root)
	return func(rel string) current {
		if d, ok := open[rel]; ok {
			v := d.version
			return current{uri: d.uri, version: &v, text: d.text(), exists: true}
		}
		abs := filepath.Join(root, filepath.FromSlash(rel))
		data, err := os.ReadFile(abs)
		return current{uri: fileURI(abs), text: string(data), exists: err == nil}
	}
}

// applyOutcome is how apply ended: the edit landed, or why it did not.
type applyOutcome struct {
	applied bool
	reason  string // when not applied: "declined", a conflict, the editor's refusal
}

// apply sends a run's result as one workspace/applyEdit. On a conflict
// it asks the user ("Show diff" / "Apply anyway") and applies nothing
// unless told to. With preview "always" the edit is shown before it
// lands: annotated for confirmation when the client can, else marked
// for the shipped plugins to confirm (applyMeta). A path that now goes
// through a symlink or into a git directory is never sent. Callers decide
// whether a result may be applied at all: a verified one, or an unverified
// one the user asked for.
func (s *Server) apply(ctx context.Context, r *run, res *agent.Result, force bool) applyOutcome {
	if len(res.Changes) == 0 {
		return applyOutcome{applied: true}
	}
	// The editor writes what it is sent and follows symlinks: check every
	// path on the host now, as it is, before anything is sent.
	if err := agent.CheckChanges(r.root, res.Changes); err != nil {
		s.logMessage(ctx, protocol.MessageTypeInfo, res.Diff)
		return applyOutcome{reason: "refused on the host: " + err.Error()}
	}
	plan, conflicts := planEdits(res.Changes, s.stateFunc(r.root), force)
	if len(conflicts) > 0 {
		sort.Strings(conflicts)
		reason := fmt.Sprintf("%s %s changed in the editor during the run, in the same places as the result",
			strings.Join(conflicts, ", "), plural(len(conflicts), "was", "were"))
		switch s.ask(ctx, protocol.MessageTypeWarning, "fixpoint: not applied: "+reason+".", "Show diff", "Apply anyway") {
		case "Apply anyway":
			return s.apply(ctx, r, res, true)
		case "Show diff":
			s.showDiff(ctx, res)
		}
		return applyOutcome{reason: reason}
	}
	s.mu.Lock()
	caps := s.caps
	s.mu.Unlock()
	we, err := buildWorkspaceEdit(plan, caps)
	if err != nil {
		s.logMessage(ctx, protocol.MessageTypeInfo, "fixpoint diff:\n"+res.Diff)
		return applyOutcome{reason: err.Error()}
	}
	params := s.applyParams(r, res, we, caps)
	var answer chan bool
	if params.Fixpoint != nil && params.Fixpoint.Confirm {
		answer = s.awaitPreview(r.id)
		defer s.endPreview(r.id)
	}
	var resp protocol.ApplyWorkspaceEditResponse
	// Once sent, the edit is the editor's to apply: wait for its answer
	// even if the run is cancelled or superseded meanwhile.
	runCtx := ctx
	ctx = context.WithoutCancel(ctx)
	if err := protocol.Call(ctx, s.conn, protocol.MethodWorkspaceApplyEdit, params, &resp); err != nil {
		if declinedRe.MatchString(err.Error()) {
			return applyOutcome{reason: reasonDeclined}
		}
		return applyOutcome{reason: "the editor could not apply it: " + err.Error()}
	}
	if !resp.Applied && resp.FailureReason == previewPending && answer != nil {
		// The plugin shows the preview without blocking its editor and
		// answers later (fixpoint.answerEdit); a cancelled run declines.
		select {
		case ok := <-answer:
			if !ok {
				return applyOutcome{reason: reasonDeclined}
			}
		case <-runCtx.Done():
			return applyOutcome{reason: reasonDeclined}
		}
		s.endPreview(r.id)
		// Accepted: the edit is planned again against the files as they
		// are now (the user may have typed meanwhile) and sent to apply.
		r.confirmed = true
		return s.apply(runCtx, r, res, force)
	}
	if !resp.Applied {
		if resp.FailureReason == "" || declinedRe.MatchString(resp.FailureReason) {
			return applyOutcome{reason: reasonDeclined}
		}
		return applyOutcome{reason: "the editor could not apply it: " + resp.FailureReason}
	}
	s.logger.Info("applied", "run", r.id, "files", len(plan))
	return applyOutcome{applied: true}
}

// showDiff shows a result's diff: as a document when the client can show
// one and there is a log file, else in the output log.
func (s *Server) showDiff(ctx context.Context, res *agent.Result) {
	s.logMessage(ctx, protocol.MessageTypeInfo, "fixpoint diff:\n"+res.Diff)
	s.showMessage(ctx, protocol.MessageTypeInfo, "fixpoint: the diff is in "+s.commandName(logWhere))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// previewPending is the failureReason of a plugin that keeps its preview
// of an edit open without blocking the editor: the user's answer follows
// as fixpoint.answerEdit [{runId, accept}].
const previewPending = "fixpoint: preview pending"

// cmdAnswerEdit is the plugin's answer to a pending preview.
const cmdAnswerEdit = "fixpoint.answerEdit"

// awaitPreview registers run id's pending preview and returns the
// channel its answer arrives on.
func (s *Server) awaitPreview(id string) chan bool {
	ch := make(chan bool, 1)
	s.mu.Lock()
	if s.previews == nil {
		s.previews = map[string]chan bool{}
	}
	s.previews[id] = ch
	s.mu.Unlock()
	return ch
}

func (s *Server) endPreview(id string) {
	s.mu.Lock()
	delete(s.previews, id)
	s.mu.Unlock()
}

// answerEdit answers fixpoint.answerEdit [{runId, accept}]: the user
// applied or cancelled the preview of the run's edit.
func (s *Server) answerEdit(_ context.Context, _ *jsonrpc2.ID, args []json.RawMessage) (any, error) {
	var a struct {
		RunID  string `json:"runId"`
		Accept bool   `json:"accept"`
	}
	if err := firstArg(args, &a); err != nil || a.RunID == "" {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, cmdAnswerEdit+" needs [{runId, accept}]")
	}
	s.mu.Lock()
	ch := s.previews[a.RunID]
	delete(s.previews, a.RunID)
	s.mu.Unlock()
	if ch == nil {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, "no edit of "+printable(a.RunID)+" waits for an answer (the run ended or was answered)")
	}
	ch <- a.Accept
	return nil, nil
}

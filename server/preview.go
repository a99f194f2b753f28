package server

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"go.lsp.dev/protocol"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/agent/termsafe"
)

// Values of the "preview" setting: "always" (the default) shows a
// verified edit before it lands, "never" applies it at once.
const (
	previewAlways = "always"
	previewNever  = "never"
)

// previewFor returns the "preview" setting in effect for a folder, from
// the same editor layers as configFor (the folder's
// workspace/configuration, the last didChangeConfiguration push,
// initializationOptions; the highest present wins). Unknown values mean
// "always": showing too much is the safe mistake.
func (s *Server) previewFor(root string) string {
	s.mu.Lock()
	layers := []json.RawMessage{s.settings[root], s.settings[""], s.initOpts}
	s.mu.Unlock()
	for _, raw := range layers {
		if isNull(raw) {
			continue
		}
		var v struct {
			Preview *string `json:"preview"`
		}
		if json.Unmarshal(raw, &v) != nil || v.Preview == nil {
			continue
		}
		if *v.Preview == previewNever {
			return previewNever
		}
		if *v.Preview != previewAlways {
			s.logger.Warn("unknown preview setting; using always", "preview", *v.Preview)
		}
		return previewAlways
	}
	return previewAlways
}

// annotationID is the one change annotation of a verified edit.
const annotationID = "fixpoint"

// Wire types for a workspace edit with change annotations (LSP 3.16;
// go.lsp.dev/protocol v0.12.0 has none of them).
type (
	changeAnnotation struct {
		Label             string `json:"label"`
		NeedsConfirmation bool   `json:"needsConfirmation"`
		Description       string `json:"description,omitempty"`
	}
	annotatedTextEdit struct {
		Range        protocol.Range `json:"range"`
		NewText      string         `json:"newText"`
		AnnotationID string         `json:"annotationId"`
	}
	annotatedDocEdit struct {
		TextDocument versionedDoc        `json:"textDocument"`
		Edits        []annotatedTextEdit `json:"edits"`
	}
	annotatedWorkspaceEdit struct {
		Changes           map[string][]annotatedTextEdit `json:"changes,omitempty"`
		DocumentChanges   []any                          `json:"documentChanges,omitempty"`
		ChangeAnnotations map[string]changeAnnotation    `json:"changeAnnotations"`
	}
)

// annotate turns we into the same edit with every text edit and file
// operation under one annotation that needs confirmation: the editor
// previews the change and applies it only when the user accepts.
func annotate(we workspaceEdit, a changeAnnotation) annotatedWorkspaceEdit {
	a.NeedsConfirmation = true
	out := annotatedWorkspaceEdit{ChangeAnnotations: map[string]changeAnnotation{annotationID: a}}
	mark := func(edits []protocol.TextEdit) []annotatedTextEdit {
		as := make([]annotatedTextEdit, len(edits))
		for i, e := range edits {
			as[i] = annotatedTextEdit{Range: e.Range, NewText: e.NewText, AnnotationID: annotationID}
		}
		return as
	}
	if we.Changes != nil {
		out.Changes = map[string][]annotatedTextEdit{}
		for u, edits := range we.Changes {
			out.Changes[u] = mark(edits)
		}
	}
	for _, dc := range we.DocumentChanges {
		switch c := dc.(type) {
		case textDocumentEdit:
			out.DocumentChanges = append(out.DocumentChanges, annotatedDocEdit{TextDocument: c.TextDocument, Edits: mark(c.Edits)})
		case resourceOp:
			c.AnnotationID = annotationID
			out.DocumentChanges = append(out.DocumentChanges, c)
		default:
			out.DocumentChanges = append(out.DocumentChanges, dc)
		}
	}
	return out
}

// applyMeta is a field of fixpoint's own in workspace/applyEdit params
// ("fixpoint"), for the shipped Neovim and Emacs plugins: their clients
// cannot preview annotated edits, so when Confirm is set the plugin shows
// Diff and applies the edit only when the user accepts, answering
// applied=false (failureReason "declined") otherwise. Other clients
// ignore unknown fields.
type applyMeta struct {
	RunID       string       `json:"runId"`
	Label       string       `json:"label"`
	Description string       `json:"description"`
	Confirm     bool         `json:"confirm"`
	Files       []statusFile `json:"files"`
	Diff        string       `json:"diff"`
}

// applyParams are the workspace/applyEdit params for a result: we as is,
// annotated for confirmation when the preview setting and the client
// call for it, with applyMeta for the shipped plugins (only: eglot 1.9
// rejects requests with keys it does not know).
func (s *Server) applyParams(r *run, res *agent.Result, we workspaceEdit, caps clientCaps) applyParams {
	preview := s.previewFor(r.root) == previewAlways
	label, desc := editLabel(r), editDescription(res, r.status.Iteration)
	p := applyParams{Label: "fixpoint: " + termsafe.Strip(r.title), Edit: we}
	if preview && caps.changeAnnotations {
		p.Edit = annotate(we, changeAnnotation{Label: label, Description: desc})
	}
	if caps.pluginPreview {
		p.Fixpoint = &applyMeta{RunID: r.id, Label: label, Description: desc,
			Confirm: preview && !caps.changeAnnotations && !r.confirmed, Files: changedFiles(res.Changes), Diff: termsafe.Strip(s.opts.Redact(res.Diff))}
	}
	return p
}

// editLabel is the short label of a run's edit: its goal, or its title.
func editLabel(r *run) string {
	if r.kind == runSolve && r.args.Goal != "" {
		return oneLine(termsafe.Strip(r.args.Goal), 60)
	}
	return r.title
}

// editDescription is "verified: 2 iterations, 5 tests passing" (or
// "NOT verified: ..." for a best attempt the user chose to apply); n is
// the number of iterations the run reported.
func editDescription(res *agent.Result, n int) string {
	n = max(n, len(res.Iterations))
	if !res.Verified {
		failing := 0
		if res.Final != nil {
			failing = res.Final.Failed
		}
		return fmt.Sprintf("NOT verified: %d %s, %d %s failing", n, plural(n, "iteration", "iterations"), failing, plural(failing, "test", "tests"))
	}
	return fmt.Sprintf("verified: %d %s, %s", n, plural(n, "iteration", "iterations"), testsPassing(res))
}

// declinedRe matches an editor's reason for not applying an edit that
// means the user said no (eglot: "User cancelled server edit").
var declinedRe = regexp.MustCompile(`(?i)declin|cancel|reject|refus|dismiss`)

// appliedSummary tells the user what a verified edit changed and offers
// to open the files, when the client can open documents.
func (s *Server) appliedSummary(ctx context.Context, r *run, res *agent.Result, files []statusFile) {
	msg := fmt.Sprintf("fixpoint applied %s: %s; %s.", editLabel(r), filesSummary(files), testsPassing(res))
	s.mu.Lock()
	canShow := s.caps.showDocument
	s.mu.Unlock()
	if !canShow {
		s.showMessage(ctx, protocol.MessageTypeInfo, msg)
		return
	}
	if s.ask(ctx, protocol.MessageTypeInfo, msg, "Open files") != "Open files" {
		return
	}
	for _, f := range files {
		abs := filepath.Join(r.root, filepath.FromSlash(f.Path))
		if _, err := os.Stat(abs); err != nil && s.docs.byPath(abs) == nil {
			continue // deleted by the result
		}
		var out struct {
			Success bool `json:"success"`
		}
		_ = protocol.Call(ctx, s.conn, protocol.MethodShowDocument, map[string]any{"uri": fileURI(abs)}, &out)
	}
}

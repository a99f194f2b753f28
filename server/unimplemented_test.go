package server

import (
	"errors"
	"strings"
	"testing"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// TestUnimplementedAnswerEmpty: the requests an editor sends whatever the
// capabilities say (eglot's documentSymbol in a real major mode, and the
// like) get their empty result, never an error the editor would show;
// resolve requests for items fixpoint never gave out, and unknown
// methods, still get MethodNotFound.
func TestUnimplementedAnswerEmpty(t *testing.T) {
	e := newFakeEditor(t, editorOptions{engine: &fakeEngine{}, files: map[string]string{"go.mod": "module w\n", "a.go": statusWorkspaceA}})
	e.initialize(`{}`)
	e.open("a.go", 1)
	doc := map[string]any{"uri": e.uri("a.go")}
	pos := map[string]any{"line": 0, "character": 0}
	tests := []struct {
		method string
		params any
		want   string // the raw result; "" = MethodNotFound
	}{
		{method: "textDocument/documentSymbol", params: map[string]any{"textDocument": doc}, want: "[]"},
		{method: "textDocument/hover", params: map[string]any{"textDocument": doc, "position": pos}, want: "null"},
		{method: "textDocument/signatureHelp", params: map[string]any{"textDocument": doc, "position": pos}, want: "null"},
		{method: "textDocument/completion", params: map[string]any{"textDocument": doc, "position": pos}, want: "null"},
		{method: "textDocument/definition", params: map[string]any{"textDocument": doc, "position": pos}, want: "[]"},
		{method: "textDocument/references", params: map[string]any{"textDocument": doc, "position": pos, "context": map[string]any{"includeDeclaration": true}}, want: "[]"},
		{method: "textDocument/documentHighlight", params: map[string]any{"textDocument": doc, "position": pos}, want: "[]"},
		{method: "textDocument/formatting", params: map[string]any{"textDocument": doc, "options": map[string]any{"tabSize": 8, "insertSpaces": false}}, want: "[]"},
		{method: "textDocument/foldingRange", params: map[string]any{"textDocument": doc}, want: "[]"},
		{method: "textDocument/inlayHint", params: map[string]any{"textDocument": doc}, want: "[]"},
		{method: "textDocument/rename", params: map[string]any{"textDocument": doc, "position": pos, "newName": "B"}, want: "null"},
		{method: "workspace/symbol", params: map[string]any{"query": "A"}, want: "[]"},
		{method: "codeAction/resolve", params: map[string]any{"title": "x"}},
		{method: "completionItem/resolve", params: map[string]any{"label": "x"}},
		{method: "fixpoint/noSuchMethod", params: map[string]any{}},
	}
	for _, tt := range tests {
		t.Run(tt.method, func(t *testing.T) {
			res, err := e.call(tt.method, tt.params)
			if tt.want == "" {
				var rerr *jsonrpc2.Error
				if !errors.As(err, &rerr) || rerr.Code != jsonrpc2.MethodNotFound {
					t.Errorf("%s = %s, %v; want MethodNotFound", tt.method, res, err)
				}
				return
			}
			// The reply as sent: jsonrpc2 decodes a null result to nil.
			if wire := e.lastReply(); err != nil || !strings.Contains(wire, `"result":`+tt.want) {
				t.Errorf("%s = %s, %v; want the result %s", tt.method, wire, err, tt.want)
			}
		})
	}
}

// lastReply is the last response the server sent, as on the wire.
func (e *fakeEditor) lastReply() string {
	e.rec.mu.Lock()
	defer e.rec.mu.Unlock()
	for i := len(e.rec.msgs) - 1; i >= 0; i-- {
		if m := e.rec.msgs[i]; !m.out && m.method == "" {
			return string(m.raw)
		}
	}
	return ""
}

// TestCodeActionsOneEntryPerAction: with a fixpoint diagnostic, a request
// for every kind (Neovim's menu) lists each title once, the quickfix in
// place of the source action; a request for source actions still gets
// the source one.
func TestCodeActionsOneEntryPerAction(t *testing.T) {
	diag := protocol.Diagnostic{Source: diagnosticSource, Message: "TestX failed"}
	tests := []struct {
		name string
		only []protocol.CodeActionKind
		want []string // kinds, in order
	}{
		{name: "every kind", want: []string{"quickfix", "source.fixpoint.runTests"}},
		{name: "source only", only: []protocol.CodeActionKind{"source"}, want: []string{"source.fixpoint.fixTests", "source.fixpoint.runTests"}},
		{name: "quickfix only", only: []protocol.CodeActionKind{"quickfix"}, want: []string{"quickfix"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			acts := codeActions(nil, "file:///w/a_test.go", protocol.Range{}, protocol.CodeActionContext{Diagnostics: []protocol.Diagnostic{diag}, Only: tt.only})
			var kinds []string
			titles := map[string]int{}
			for _, a := range acts {
				kinds = append(kinds, string(a.Kind))
				titles[a.Title]++
			}
			if strings.Join(kinds, " ") != strings.Join(tt.want, " ") {
				t.Errorf("kinds = %q, want %q", kinds, tt.want)
			}
			for title, n := range titles {
				if n > 1 {
					t.Errorf("%q listed %d times", title, n)
				}
			}
		})
	}
}

package server

import (
	"context"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"

	"github.com/fixpoint-dev/fixpoint/agent/termsafe"
)

// diagnosticSource marks the diagnostics this server publishes.
const diagnosticSource = "fixpoint"

func (s *Server) codeAction(ctx context.Context, req jsonrpc2.Request) (any, error) {
	var p protocol.CodeActionParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	uri := string(p.TextDocument.URI)
	s.touchWarm(ctx, uri)
	return codeActions(s.docs.get(uri), uri, p.Range, p.Context), nil
}

// codeActions computes the actions for a range of a document (doc may be
// nil when the client never opened it). Pure: no locks beyond the
// document value, no I/O.
func codeActions(doc *document, uri string, rng protocol.Range, cx protocol.CodeActionContext) []protocol.CodeAction {
	out := []protocol.CodeAction{}
	add := func(a protocol.CodeAction) {
		if wanted(a.Kind, cx.Only) {
			out = append(out, a)
		}
	}
	if doc != nil {
		last := int(rng.End.Line)
		if last-int(rng.Start.Line) > 200 { // a whole-file range: don't scan megabytes per request
			last = int(rng.Start.Line) + 200
		}
		for l := int(rng.Start.Line); l <= last && l < doc.idx.lines(); l++ {
			goal, ok := goalIn(doc.idx.lineText(l))
			if !ok {
				continue
			}
			lineRange := protocol.Range{Start: protocol.Position{Line: uint32(l)}, End: doc.idx.position(doc.idx.lineEnd(l))}
			add(protocol.CodeAction{
				Title: "Solve goal: " + termsafe.Strip(goal), // the goal is a line of a workspace file
				Kind:  protocol.RefactorRewrite,
				Command: &protocol.Command{Title: "Solve goal", Command: cmdSolveGoal,
					Arguments: []any{solveArgs{Goal: goal, URI: uri, Range: &lineRange}}},
			})
		}
	}
	var ours []protocol.Diagnostic
	for _, d := range cx.Diagnostics {
		if d.Source == diagnosticSource {
			ours = append(ours, d)
		}
	}
	// One entry per action: where the quickfix is offered, the source
	// action that runs the same command is not (a client asking for every
	// kind, such as Neovim's menu, would list "Fix until tests pass"
	// twice); a request for source actions only still gets it.
	quickfix := len(ours) > 0 && wanted(protocol.QuickFix, cx.Only)
	if quickfix {
		add(protocol.CodeAction{
			Title: "Fix until tests pass", Kind: protocol.QuickFix, IsPreferred: true, Diagnostics: ours,
			Command: &protocol.Command{Title: "Fix until tests pass", Command: cmdFixTests, Arguments: []any{uriArgs{URI: uri}}},
		})
	} else {
		add(protocol.CodeAction{
			Title: "Fix until tests pass", Kind: kindFixTests,
			Command: &protocol.Command{Title: "Fix until tests pass", Command: cmdFixTests, Arguments: []any{uriArgs{URI: uri}}},
		})
	}
	add(protocol.CodeAction{
		Title: "Run tests", Kind: kindRunTests,
		Command: &protocol.Command{Title: "Run tests", Command: cmdRunTests, Arguments: []any{uriArgs{URI: uri}}},
	})
	return out
}

// wanted applies CodeActionContext.only: a kind matches an entry equal to
// it or a dot-separated prefix of it ("source" matches "source.fixpoint.x").
func wanted(kind protocol.CodeActionKind, only []protocol.CodeActionKind) bool {
	if len(only) == 0 {
		return true
	}
	for _, o := range only {
		if kind == o || strings.HasPrefix(string(kind), string(o)+".") {
			return true
		}
	}
	return false
}

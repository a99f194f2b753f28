package server

import (
	"context"
	"strings"

	"go.lsp.dev/protocol"

	"github.com/fixpoint-dev/fixpoint/agent/termsafe"
)

// progress is one work-done progress, or its fallback to window messages
// when the client has no work-done progress. A nil *progress is a no-op.
type progress struct {
	s     *Server
	token string // "" in fallback mode
	title string
	last  string
}

type progressParams struct {
	Token string `json:"token"`
	Value any    `json:"value"`
}

// beginProgress creates the token (window/workDoneProgress/create, a
// request, so this must run outside a handler) and sends begin.
func (s *Server) beginProgress(ctx context.Context, token, title, message string) *progress {
	s.mu.Lock()
	supported := s.caps.workDoneProgress
	s.mu.Unlock()
	title = termsafe.Strip(title) // a solve run's title quotes its goal, maybe from a file
	p := &progress{s: s, title: title}
	if supported {
		err := protocol.Call(ctx, s.conn, protocol.MethodWorkDoneProgressCreate, struct {
			Token string `json:"token"`
		}{token}, nil)
		if err == nil {
			p.token = token
			p.notify(ctx, protocol.WorkDoneProgressBegin{Kind: protocol.WorkDoneProgressKindBegin, Title: title, Cancellable: true, Message: message})
			return p
		}
		s.logger.Debug("workDoneProgress/create failed; falling back to messages", "err", err)
	}
	// No work-done progress: progress goes to the log (window/logMessage),
	// where it does not interrupt; the shipped plugins show
	// $/fixpoint/status instead.
	s.logMessage(ctx, protocol.MessageTypeInfo, title+"…")
	return p
}

// notify sends a $/progress value; its message goes through termsafe
// (it may quote the model or a test), its title is fixpoint's own.
func (p *progress) notify(ctx context.Context, v any) {
	clean := func(s string) string { return termsafe.Strip(p.s.opts.Redact(s)) }
	switch w := v.(type) {
	case protocol.WorkDoneProgressBegin:
		w.Message = clean(w.Message)
		v = w
	case protocol.WorkDoneProgressReport:
		w.Message = clean(w.Message)
		v = w
	case protocol.WorkDoneProgressEnd:
		w.Message = clean(w.Message)
		v = w
	}
	if err := p.s.conn.Notify(context.WithoutCancel(ctx), protocol.MethodProgress, progressParams{Token: p.token, Value: v}); err != nil {
		p.s.logger.Debug("$/progress", "err", err)
	}
}

// report sends a message if it differs from the last one.
func (p *progress) report(ctx context.Context, message string) {
	if p == nil || message == "" || message == p.last {
		return
	}
	p.last = message
	if p.token == "" {
		p.s.logMessage(ctx, protocol.MessageTypeInfo, p.title+": "+message)
		return
	}
	p.notify(ctx, protocol.WorkDoneProgressReport{Kind: protocol.WorkDoneProgressKindReport, Cancellable: true, Message: message})
}

// end finishes the progress with a final message. Without work-done
// progress it goes to the log like the rest: the outcome itself is shown
// by the caller (the summary after applying, a failure, a test report).
func (p *progress) end(ctx context.Context, message string) {
	if p == nil {
		return
	}
	if p.token == "" {
		p.s.logMessage(ctx, protocol.MessageTypeInfo, p.title+": "+message)
		return
	}
	p.notify(ctx, protocol.WorkDoneProgressEnd{Kind: protocol.WorkDoneProgressKindEnd, Message: message})
}

// showMessage sends window/showMessage (redacted, see popupText).
// Notifications are written even when ctx is cancelled.
func (s *Server) showMessage(ctx context.Context, typ protocol.MessageType, msg string) {
	_ = s.conn.Notify(context.WithoutCancel(ctx), protocol.MethodWindowShowMessage,
		protocol.ShowMessageParams{Type: typ, Message: s.popupText(msg)})
}

// logMessage sends window/logMessage, redacted and without control
// sequences (an output channel shows plain text).
func (s *Server) logMessage(ctx context.Context, typ protocol.MessageType, msg string) {
	_ = s.conn.Notify(context.WithoutCancel(ctx), protocol.MethodWindowLogMessage,
		protocol.LogMessageParams{Type: typ, Message: termsafe.Strip(s.opts.Redact(msg))})
}

// popupText is msg as showMessage and showMessageRequest send it: redacted,
// without control sequences, and with link and HTML syntax escaped unless
// the client is known to show these messages as plain text (Neovim, Emacs,
// Helix). VS Code turns [text](command:…) in a notification into a link
// that runs a command: a dependency name, a file name or a test message
// must not become one.
func (s *Server) popupText(msg string) string {
	msg = s.opts.Redact(msg)
	s.mu.Lock()
	client := strings.ToLower(s.caps.client)
	s.mu.Unlock()
	switch {
	case client == "neovim", client == "eglot", strings.Contains(client, "emacs"), client == "helix":
		return termsafe.Strip(msg)
	}
	return termsafe.Markdown(msg)
}

// ask sends window/showMessageRequest and returns the chosen title, ""
// when the user dismissed it (a null answer) or ctx ended.
func (s *Server) ask(ctx context.Context, typ protocol.MessageType, msg string, actions ...string) string {
	items := make([]protocol.MessageActionItem, len(actions))
	for i, a := range actions {
		items[i] = protocol.MessageActionItem{Title: a}
	}
	var choice *protocol.MessageActionItem
	err := protocol.Call(ctx, s.conn, protocol.MethodWindowShowMessageRequest,
		protocol.ShowMessageRequestParams{Type: typ, Message: s.popupText(msg), Actions: items}, &choice)
	if err != nil || choice == nil {
		return ""
	}
	return choice.Title
}

// fallback reports whether p has no work-done progress to show its end.
func (p *progress) fallback() bool { return p == nil || p.token == "" }

package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"unicode"

	"go.lsp.dev/protocol"

	"github.com/fixpoint-dev/fixpoint/config"
)

// Folder trust: the server prepares a folder's sandbox on its own (the
// prewarm: dependency install with network, first sync, tests) and runs
// an action's install step only in a folder the user trusts:
//   - a record in the user's trust store (config.TrustStore): written by
//     `fixpoint trust DIR` or by answering Trust to the question below;
//   - for this connection, initializationOptions.workspaceTrusted = true,
//     which the VS Code extension sends (VS Code starts it only in a
//     workspace the user trusted: its workspace trust). Only
//     initializationOptions count: workspace/configuration answers may
//     come from project-local files in some editors.
//
// An untrusted folder is not prewarmed when it opens (a log message says
// why, once); the first action in it asks, through window/showMessageRequest
// from the run's goroutine (never the request loop), whether to trust it.
// "Trust" records folder trust only: the user-only keys of the folder's
// .fixpoint.toml still need `fixpoint trust` on the command line, after
// reading the file (config refuses them until then). "Not now" or a
// dismissed question ends the run with nothing started.

// trustAnswer is the prompt's button that trusts the folder.
const trustAnswer = "Trust"

// trustStore is where the user's trust records are.
func (s *Server) trustStore() config.TrustStore {
	switch s.opts.TrustDir {
	case "":
		return config.TrustStore{Dir: config.DefaultTrustDir(s.opts.Getenv)}
	case "-":
		return config.TrustStore{}
	}
	return config.TrustStore{Dir: s.opts.TrustDir}
}

// sessionTrusted reads initializationOptions.workspaceTrusted.
func sessionTrusted(initOpts json.RawMessage) bool {
	var o struct {
		WorkspaceTrusted bool `json:"workspaceTrusted"`
	}
	return !isNull(initOpts) && json.Unmarshal(initOpts, &o) == nil && o.WorkspaceTrusted
}

// folderTrusted reports whether the user trusts root (see above). It
// reads the trust store: a small file, no request to the client.
func (s *Server) folderTrusted(root string) bool {
	s.mu.Lock()
	ok := s.sessionTrust || s.trusted[root]
	s.mu.Unlock()
	if ok {
		return true
	}
	rec, err := s.trustStore().Lookup(root)
	if err != nil {
		s.logger.Warn("read trust record", "root", root, "err", err)
	}
	return rec != nil
}

// noteUntrusted tells the user, once per folder and connection, why an
// untrusted folder is not prepared. It sends from a goroutine: handlers
// call it.
func (s *Server) noteUntrusted(ctx context.Context, root string) {
	s.mu.Lock()
	told := s.untrustedTold[root]
	s.untrustedTold[root] = true
	s.mu.Unlock()
	if told {
		return
	}
	s.logger.Info("untrusted folder: no prewarm", "root", root)
	msg := fmt.Sprintf("fixpoint: %s is not a trusted folder, so its sandbox is not prepared in advance (no dependency install, no tests). "+
		"The first fixpoint action asks whether to trust it; or run `fixpoint trust %s`.", printable(root), printable(root))
	go s.logMessage(ctx, protocol.MessageTypeInfo, msg)
}

// askTrust asks the user whether to trust root, records the answer Trust
// (in the store, and for this connection when the store cannot be
// written) and reports it. It makes a request to the client: call it from
// a run's goroutine only.
func (s *Server) askTrust(ctx context.Context, root string) bool {
	msg := fmt.Sprintf("fixpoint: trust the folder %s? fixpoint will install its dependencies (with network) and run its tests in the sandbox: "+
		"the folder's code, tests and install scripts run there. Its .fixpoint.toml settings that only you may set still need `fixpoint trust` in a terminal.",
		printable(root))
	// The safe choice first: clients preselect the first action.
	if s.ask(ctx, protocol.MessageTypeWarning, msg, "Not now", trustAnswer) != trustAnswer {
		return false
	}
	s.mu.Lock()
	s.trusted[root] = true
	s.mu.Unlock()
	if _, err := s.trustStore().TrustFolder(root); err != nil {
		s.logger.Warn("record folder trust", "root", root, "err", err)
		s.logMessage(ctx, protocol.MessageTypeWarning, fmt.Sprintf(
			"fixpoint: could not record your trust in %s (%v); it holds until the editor closes", printable(root), err))
	}
	return true
}

// printable returns a path as is, or quoted when it holds a control
// character, so that no escape sequence from a folder name reaches the
// editor.
func printable(s string) string {
	if strings.IndexFunc(s, func(r rune) bool { return !unicode.IsGraphic(r) }) >= 0 {
		return strconv.QuoteToGraphic(s)
	}
	return s
}

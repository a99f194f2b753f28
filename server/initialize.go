package server

import (
	"cmp"
	"context"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
)

// clientCaps is what the server needs to know about the client, decoded
// leniently from InitializeParams.capabilities.
type clientCaps struct {
	workDoneProgress   bool
	showMessageRequest bool
	showDocument       bool
	configuration      bool
	applyEdit          bool
	documentChanges    bool
	resourceOps        []string // create, rename, delete
	changeAnnotations  bool     // workspaceEdit.changeAnnotationSupport (3.16)
	// client names the editor: experimental.fixpointClient of the shipped
	// plugins ("emacs": eglot 1.9 sends no clientInfo), else clientInfo.name
	// ("Neovim", "Visual Studio Code"...).
	client string
	// pluginPreview: the client is one of the shipped plugins, which
	// confirm an edit marked with applyMeta themselves
	// (capabilities.experimental.fixpointPreview).
	pluginPreview bool
	// outcomes: the client tells the user how a run ended from its final
	// $/fixpoint/status (the VS Code extension), so the server sends no
	// message of its own for it: one notification per outcome.
	outcomes bool
}

func (c clientCaps) canCreate() bool {
	return c.documentChanges && slices.Contains(c.resourceOps, "create")
}
func (c clientCaps) canDelete() bool {
	return c.documentChanges && slices.Contains(c.resourceOps, "delete")
}

// commandName is how the user invokes a server command in the client at
// hand, for messages that tell them what to do next: the shipped plugins'
// commands in Neovim and Emacs, the command id elsewhere (see commands).
func (s *Server) commandName(cmd string) string {
	s.mu.Lock()
	client := strings.ToLower(s.caps.client)
	s.mu.Unlock()
	c, ok := lookupCommand(cmd)
	switch {
	case !ok:
		return cmd
	case client == "neovim" && c.nvim != "":
		return c.nvim
	case (client == "eglot" || strings.Contains(client, "emacs")) && c.emacs != "":
		return c.emacs
	case c.elsewhere != "":
		return c.elsewhere
	}
	return cmd
}

// logWhere is the pseudo-command of commandName for "where the diff and
// the log are": :FixpointLog, M-x fixpoint-show-diff, the output log.
const logWhere = "log"

// initializeParams is the subset of InitializeParams the server reads.
// Its own type, not protocol.InitializeParams: clients send capability
// shapes that the library's types do not decode.
type initializeParams struct {
	RootURI               string                     `json:"rootUri"`
	RootPath              string                     `json:"rootPath"`
	WorkspaceFolders      []protocol.WorkspaceFolder `json:"workspaceFolders"`
	InitializationOptions json.RawMessage            `json:"initializationOptions"`
	ClientInfo            struct {
		Name string `json:"name"`
	} `json:"clientInfo"`
	Capabilities struct {
		Workspace struct {
			ApplyEdit     bool `json:"applyEdit"`
			Configuration bool `json:"configuration"`
			WorkspaceEdit struct {
				DocumentChanges    bool     `json:"documentChanges"`
				ResourceOperations []string `json:"resourceOperations"`
				// Present (an object) when the client can show change
				// annotations and ask for their confirmation.
				ChangeAnnotationSupport json.RawMessage `json:"changeAnnotationSupport"`
			} `json:"workspaceEdit"`
		} `json:"workspace"`
		Experimental struct {
			FixpointPreview  bool   `json:"fixpointPreview"`
			FixpointClient   string `json:"fixpointClient"` // the shipped plugin: "emacs", "neovim"
			FixpointOutcomes bool   `json:"fixpointOutcomes"`
		} `json:"experimental"`
		Window struct {
			WorkDoneProgress bool            `json:"workDoneProgress"`
			ShowMessage      json.RawMessage `json:"showMessage"`
			ShowDocument     struct {
				Support bool `json:"support"`
			} `json:"showDocument"`
		} `json:"window"`
	} `json:"capabilities"`
}

// Command ids; commands() declares what each one is.
const (
	cmdSolveGoal = "fixpoint.solveGoal"
	cmdFixTests  = "fixpoint.fixTests"
	cmdRunTests  = "fixpoint.runTests"
	cmdCancel    = "fixpoint.cancel"
)

// Code action kinds offered.
const (
	kindFixTests protocol.CodeActionKind = "source.fixpoint.fixTests"
	kindRunTests protocol.CodeActionKind = "source.fixpoint.runTests"
)

func (s *Server) initialize(ctx context.Context, req jsonrpc2.Request) (any, error) {
	var p initializeParams
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state != stateNew {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "initialize sent twice")
	}
	c := p.Capabilities
	s.caps = clientCaps{
		workDoneProgress: c.Window.WorkDoneProgress,
		// showMessageRequest has no capability flag in 3.15; every client
		// supports it. Its presence in 3.16 only adds action properties.
		showMessageRequest: true,
		showDocument:       c.Window.ShowDocument.Support,
		configuration:      c.Workspace.Configuration,
		applyEdit:          c.Workspace.ApplyEdit,
		documentChanges:    c.Workspace.WorkspaceEdit.DocumentChanges,
		resourceOps:        c.Workspace.WorkspaceEdit.ResourceOperations,
		changeAnnotations:  !isNull(c.Workspace.WorkspaceEdit.ChangeAnnotationSupport) && string(c.Workspace.WorkspaceEdit.ChangeAnnotationSupport) != "false",
		client:             cmp.Or(c.Experimental.FixpointClient, p.ClientInfo.Name),
		pluginPreview:      c.Experimental.FixpointPreview,
		outcomes:           c.Experimental.FixpointOutcomes,
	}
	s.folders = nil
	for _, f := range p.WorkspaceFolders {
		s.addFolder(uriPath(f.URI))
	}
	if len(s.folders) == 0 {
		if path := uriPath(p.RootURI); path != "" {
			s.addFolder(path)
		} else if p.RootPath != "" {
			s.addFolder(filepath.Clean(p.RootPath))
		}
	}
	s.initOpts = p.InitializationOptions
	s.sessionTrust = sessionTrusted(p.InitializationOptions)
	s.state = stateInitialized
	s.logger.Info("initialize", "folders", s.folders, "progress", s.caps.workDoneProgress, "documentChanges", s.caps.documentChanges)
	return protocol.InitializeResult{
		Capabilities: protocol.ServerCapabilities{
			TextDocumentSync: protocol.TextDocumentSyncOptions{
				OpenClose: true,
				Change:    protocol.TextDocumentSyncKindIncremental,
				Save:      &protocol.SaveOptions{},
			},
			CodeActionProvider: protocol.CodeActionOptions{
				CodeActionKinds: []protocol.CodeActionKind{protocol.QuickFix, protocol.RefactorRewrite, kindFixTests, kindRunTests},
			},
			ExecuteCommandProvider: &protocol.ExecuteCommandOptions{
				Commands: advertisedCommands(),
			},
			Workspace: &protocol.ServerCapabilitiesWorkspace{
				WorkspaceFolders: &protocol.ServerCapabilitiesWorkspaceFolders{Supported: true, ChangeNotifications: true},
			},
		},
		ServerInfo: &protocol.ServerInfo{Name: "fixpoint", Version: s.opts.Version},
	}, nil
}

// addFolder records a workspace folder; s.mu must be held.
func (s *Server) addFolder(path string) {
	if path != "" && !slices.Contains(s.folders, path) {
		s.folders = append(s.folders, path)
	}
}

func (s *Server) initialized(ctx context.Context, req jsonrpc2.Request) (any, error) {
	s.refreshConfigurationAsync(ctx)
	s.warmAll(ctx)
	return nil, nil
}

func (s *Server) shutdown(ctx context.Context, req jsonrpc2.Request) (any, error) {
	s.stopWarming()
	s.mu.Lock()
	s.state = stateShutdown
	for _, r := range s.runs {
		r.cancel()
	}
	s.mu.Unlock()
	return nil, nil
}

func (s *Server) exitNotification(ctx context.Context, req jsonrpc2.Request) (any, error) {
	s.mu.Lock()
	clean := s.state == stateShutdown
	s.mu.Unlock()
	var err error
	if !clean {
		err = ErrExitWithoutShutdown
	}
	select {
	case s.exit <- err:
	default:
	}
	return nil, nil
}

func (s *Server) didChangeWorkspaceFolders(ctx context.Context, req jsonrpc2.Request) (any, error) {
	var p struct {
		Event struct {
			Added   []protocol.WorkspaceFolder `json:"added"`
			Removed []protocol.WorkspaceFolder `json:"removed"`
		} `json:"event"`
	}
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	s.mu.Lock()
	for _, f := range p.Event.Removed {
		path := uriPath(f.URI)
		s.folders = slices.DeleteFunc(s.folders, func(x string) bool { return x == path })
	}
	for _, f := range p.Event.Added {
		s.addFolder(uriPath(f.URI))
	}
	s.mu.Unlock()
	s.refreshConfigurationAsync(ctx)
	s.warmAll(ctx)
	return nil, nil
}

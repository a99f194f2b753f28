package server

import (
	"context"

	"go.lsp.dev/jsonrpc2"
)

func (s *Server) didOpen(ctx context.Context, req jsonrpc2.Request) (any, error) {
	var p struct {
		TextDocument struct {
			URI        string `json:"uri"`
			LanguageID string `json:"languageId"`
			Version    int32  `json:"version"`
			Text       string `json:"text"`
		} `json:"textDocument"`
	}
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	td := p.TextDocument
	if _, err := s.docs.open(td.URI, td.LanguageID, td.Version, td.Text); err != nil {
		s.logger.Warn("didOpen", "err", err)
	}
	return nil, nil
}

func (s *Server) didChange(ctx context.Context, req jsonrpc2.Request) (any, error) {
	var p struct {
		TextDocument struct {
			URI     string `json:"uri"`
			Version int32  `json:"version"`
		} `json:"textDocument"`
		ContentChanges []change `json:"contentChanges"`
	}
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	_, err := s.docs.change(p.TextDocument.URI, p.TextDocument.Version, p.ContentChanges)
	if err != nil {
		s.logger.Warn("didChange", "err", err)
	}
	return nil, nil
}

func (s *Server) didClose(ctx context.Context, req jsonrpc2.Request) (any, error) {
	var p struct {
		TextDocument struct {
			URI string `json:"uri"`
		} `json:"textDocument"`
	}
	if err := decode(req, &p); err != nil {
		return nil, err
	}
	s.docs.close(p.TextDocument.URI)
	return nil, nil
}

// inFolder reports whether path lies in (or is) a workspace folder.
func (s *Server) inFolder(path string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range s.folders {
		if path == f {
			return true
		}
		if _, ok := relPath(f, path); ok {
			return true
		}
	}
	return false
}

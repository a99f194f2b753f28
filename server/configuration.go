package server

import (
	"bytes"
	"context"
	"encoding/json"
	"time"

	"go.lsp.dev/jsonrpc2"
	"go.lsp.dev/protocol"
	"go.lsp.dev/uri"

	"github.com/fixpoint-dev/fixpoint/config"
)

// configSection is the workspace/configuration section fixpoint reads.
const configSection = "fixpoint"

// configFor loads the configuration of a workspace folder. Editor
// settings, highest first: the folder's workspace/configuration section,
// the last didChangeConfiguration push, initializationOptions.
func (s *Server) configFor(root string) (*config.Config, error) {
	s.mu.Lock()
	editor := s.initOpts
	if pushed, ok := s.settings[""]; ok && !isNull(pushed) {
		editor = pushed
	}
	if fs, ok := s.settings[root]; ok && !isNull(fs) {
		editor = fs
	}
	s.mu.Unlock()
	return config.Load(config.LoadOptions{
		Root:     root,
		Getenv:   s.opts.Getenv,
		UserFile: s.opts.UserConfig,
		Editor:   editor,
		Flags:    s.opts.Flags,
		TrustDir: s.opts.TrustDir,
	})
}

func isNull(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) == 0 || bytes.Equal(t, []byte("null"))
}

func (s *Server) didChangeConfiguration(ctx context.Context, req jsonrpc2.Request) (any, error) {
	var p struct {
		Settings map[string]json.RawMessage `json:"settings"`
	}
	_ = json.Unmarshal(req.Params(), &p) // settings may be null or any shape
	s.mu.Lock()
	if v, ok := p.Settings[configSection]; ok {
		s.settings[""] = v
	}
	s.mu.Unlock()
	s.dropIdleEngines()
	s.refreshConfigurationAsync(ctx)
	s.warmAll(ctx) // with the new configuration, once it is fetched
	return nil, nil
}

// refreshConfigurationAsync asks the client for the "fixpoint" section of
// every folder, when it supports workspace/configuration. It runs in a
// goroutine (requests to the client cannot be made from a handler) that
// ends with the reply or with ctx (the connection's lifetime).
func (s *Server) refreshConfigurationAsync(ctx context.Context) {
	s.mu.Lock()
	ok := s.caps.configuration
	folders := append([]string(nil), s.folders...)
	s.mu.Unlock()
	if !ok || len(folders) == 0 {
		return
	}
	done := make(chan struct{})
	s.mu.Lock()
	s.cfgFetched = done
	s.mu.Unlock()
	go func() {
		defer close(done)
		items := make([]protocol.ConfigurationItem, len(folders))
		for i, f := range folders {
			items[i] = protocol.ConfigurationItem{ScopeURI: uri.URI(fileURI(f)), Section: configSection}
		}
		var res []json.RawMessage
		if _, err := s.conn.Call(ctx, protocol.MethodWorkspaceConfiguration, protocol.ConfigurationParams{Items: items}, &res); err != nil {
			s.logger.Debug("workspace/configuration", "err", err)
			return
		}
		s.mu.Lock()
		for i, f := range folders {
			if i < len(res) {
				s.settings[f] = res[i]
			}
		}
		s.mu.Unlock()
		s.dropIdleEngines()
	}()
}

// awaitConfiguration waits (at most 5s) for a workspace/configuration
// fetch in flight, so a run started right after initialize or
// didChangeConfiguration uses the settings being fetched.
func (s *Server) awaitConfiguration(ctx context.Context) {
	s.mu.Lock()
	ch := s.cfgFetched
	s.mu.Unlock()
	if ch == nil {
		return
	}
	select {
	case <-ch:
	case <-ctx.Done():
	case <-time.After(5 * time.Second):
		s.logger.Warn("workspace/configuration did not answer in 5s; using the settings known so far")
	}
}

// dropIdleEngines closes the engines of folders without an active run, so
// the next run is built from the new configuration. Busy folders keep
// theirs until the run ends (see finishRun).
func (s *Server) dropIdleEngines() {
	s.mu.Lock()
	var closing []Engine
	for root, e := range s.engines {
		if _, busy := s.runs[root]; busy {
			s.runs[root].staleEngine = true
			continue
		}
		closing = append(closing, e)
		delete(s.engines, root)
		s.resetWarmLocked(root)
	}
	s.mu.Unlock()
	for _, e := range closing {
		if err := e.Close(); err != nil {
			s.logger.Warn("close engine", "err", err)
		}
	}
}

package server

import (
	"context"
	"encoding/json"
	"slices"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/agent/termsafe"
)

// cmdListModels lists the models the configured endpoint serves, for an
// editor's model picker (VS Code: "Fixpoint: Select Model…").
const cmdListModels = "fixpoint.listModels"

// listModelsTimeout bounds the endpoint call. Requests are answered one at
// a time, so a slow endpoint would hold up every request behind this one.
const listModelsTimeout = 10 * time.Second

// modelsResult is fixpoint.listModels' reply: the endpoint's model ids
// (sorted), the model the folder is configured with and the endpoint asked.
type modelsResult struct {
	Models  []string `json:"models"`
	Current string   `json:"current"`
	BaseURL string   `json:"baseUrl"`
}

// listModels answers fixpoint.listModels [{uri?}]: GET /models on the
// endpoint configured for uri's folder (the only folder when uri is empty),
// with the folder's key. A failure is an error reply whose message says
// what to fix; it never starts a run. It uses the settings known so far:
// a handler cannot wait for a workspace/configuration reply, which is read
// by the loop that runs the handler.
func (s *Server) listModels(ctx context.Context, args []json.RawMessage) (any, error) {
	var a uriArgs
	if err := firstArg(args, &a); err != nil {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidParams, cmdListModels+" needs [{uri?}]")
	}
	root, err := s.folderFor(a.URI)
	if err != nil {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, err.Error())
	}
	cfg, err := s.configFor(root)
	if err != nil {
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, err.Error())
	}
	m := cfg.Model
	m.MaxRetries = 0 // a picker wants an answer now, not after backoff
	ctx, cancel := context.WithTimeout(ctx, listModelsTimeout)
	defer cancel()
	ids, err := llm.New(m, &llm.Options{Logger: s.logger}).Models(ctx)
	if err != nil {
		return nil, jsonrpc2.NewError(jsonrpc2.InternalError, termsafe.Strip(s.opts.Redact("list the models of "+m.BaseURL+": "+err.Error())))
	}
	// The endpoint chose these names and the picker shows them: a name
	// with a control sequence is no model to pick.
	ids = slices.DeleteFunc(ids, func(id string) bool { return termsafe.Strip(id) != id })
	slices.Sort(ids)
	return modelsResult{Models: slices.Compact(ids), Current: m.Name, BaseURL: m.BaseURL}, nil
}

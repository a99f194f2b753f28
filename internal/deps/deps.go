//go:build tools

// Package deps pins modules that the build needs before any package imports
// them, so that `go mod tidy` keeps them. It is never compiled.
package deps

import (
	_ "github.com/docker/docker/client"
	_ "github.com/pelletier/go-toml/v2"
	_ "github.com/philippgille/chromem-go"
	_ "github.com/pkg/errors"
	_ "github.com/sashabaranov/go-openai"
	_ "go.lsp.dev/jsonrpc2"
	_ "go.lsp.dev/protocol"
	_ "go.lsp.dev/uri"
	_ "go.uber.org/zap"
)

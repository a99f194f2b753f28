//go:build tools

// Package deps keeps the module versions fixpoint was verified with. This
// file (never compiled) imports modules before any package does, so that
// `go mod tidy` keeps them; TestDependencyPins fails when go.mod moves a
// module off the version shared/DEPS.md verified (jsonrpc2, protocol, uri,
// go-openai, docker, chromem-go, pkg/errors, hujson).
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

package agent

import (
	"context"
	"fmt"
	"io"
	"log/slog"

	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/memory"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/backends"
)

// OpenOptions adjust Open. Zero values are documented defaults.
type OpenOptions struct {
	// Model overrides the model client built from cfg.Model.
	Model Model
	// Memory overrides the failure memory opened from cfg.Memory.
	Memory Memory
	// Backend overrides the sandbox backend chosen from cfg.Sandbox.
	Backend sandbox.Backend
	// Logger receives debug logs; nil discards.
	Logger *slog.Logger
	// Warn receives user-facing warnings (the "none" backend, memory or
	// run log degraded); nil discards.
	Warn io.Writer
	// Approve is asked before a reply's edit that adds dependencies or
	// changes what the setup phase runs ([Approval]) may run; nil refuses.
	Approve func(ctx context.Context, a Approval) (bool, error)
	// NoModel skips the model client: the Engine can Test but not Run.
	NoModel bool
	// CloseInBackground: see Options.CloseInBackground.
	CloseInBackground bool
}

// Open wires an Engine from the configuration for the workspace at root:
// the sandbox backend, the failure memory and the model client. Close the
// Engine to release them.
func Open(ctx context.Context, cfg *config.Config, root string, opts *OpenOptions) (*Engine, error) {
	o := OpenOptions{}
	if opts != nil {
		o = *opts
	}
	eo := &Options{Memory: o.Memory, Model: o.Model, Backend: o.Backend, Logger: o.Logger, Warn: o.Warn, Approve: o.Approve, CloseInBackground: o.CloseInBackground}
	var closers []func() error
	if eo.Backend == nil {
		b, err := openBackend(ctx, cfg, &o)
		if err != nil {
			return nil, err
		}
		eo.Backend = b
		if c, ok := b.(interface{ Close() error }); ok {
			closers = append(closers, c.Close)
		}
	}
	if eo.Memory == nil && !o.NoModel && (cfg.Memory.Enabled == nil || *cfg.Memory.Enabled) {
		st, err := openMemory(ctx, cfg, root, &o)
		if err != nil {
			fmt.Fprintf(orDiscard(o.Warn), "fixpoint: warning: failure memory is off: %v\n", err)
		} else {
			eo.Memory = st
			closers = append(closers, st.Close)
		}
	}
	if eo.Model == nil && !o.NoModel {
		eo.Model = openModel(cfg, &o)
	}
	e := New(cfg, eo)
	e.closers = append(e.closers, closers...)
	return e, nil
}

func openMemory(ctx context.Context, cfg *config.Config, root string, o *OpenOptions) (*memory.Store, error) {
	mo := &memory.Options{Root: root, Cap: cfg.Memory.Cap, Global: cfg.Memory.Global, Logger: o.Logger}
	if cfg.Memory.Embedder == "openai" {
		emb, err := memory.NewOpenAI(memory.OpenAIOptions{BaseURL: firstNonEmpty(cfg.Memory.EmbedBaseURL, cfg.Model.BaseURL), APIKey: cfg.Model.APIKey, Model: cfg.Memory.EmbedModel})
		if err != nil {
			return nil, err
		}
		mo.Embedder = emb
	}
	return memory.Open(ctx, cfg.DataDir, mo)
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x != "" {
			return x
		}
	}
	return ""
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}

// openBackend opens the configured sandbox backend (sandbox/backends).
func openBackend(ctx context.Context, cfg *config.Config, o *OpenOptions) (sandbox.Backend, error) {
	b, err := backends.Open(ctx, cfg, &backends.Options{Warn: orDiscard(o.Warn), Logger: o.Logger})
	if err != nil {
		return nil, fmt.Errorf("open sandbox: %w", err)
	}
	return b, nil
}

// openModel builds the model client for cfg.Model (agent/llm).
func openModel(cfg *config.Config, o *OpenOptions) Model {
	return llm.New(cfg.Model, &llm.Options{Logger: o.Logger})
}

// Package server is fixpoint's language server (`fixpoint serve`).
//
// [Server] speaks LSP 3.15/3.16 over one JSON-RPC connection (stdio or
// TCP): it keeps an overlay store of open buffers, offers code actions for
// goal comments and failing tests, runs an [Engine] for
// workspace/executeCommand with work-done progress and cancellation,
// publishes test failures as diagnostics, and applies only verified
// results, as one versioned workspace/applyEdit.
//
// Layout follows gopls: one file per LSP method (initialize.go,
// text_sync.go, code_action.go, command.go, progress.go, diagnostics.go,
// apply.go, configuration.go, unimplemented.go); handlers are thin.
// warm.go starts each folder's sandbox session ahead of the first action
// (Options.Prewarm) and stops it after [server] idle_timeout, for folders
// the user trusts (trust.go: a record, VS Code's workspace trust, or the
// answer to a question on the first action). The
// overlay store (overlay.go), UTF-16 position mapping (position.go), the
// framing stream that survives malformed input (stream.go) and the line
// diff and rebase (linediff.go) live in their own files.
//
// Concurrency: requests and notifications are handled one at a time, in
// order, on the connection's read goroutine, and every handler returns
// quickly. A run (solve, fix, test) goes on in its own goroutine, which is
// the only place that makes requests to the client; it ends when its
// context is cancelled ($/cancelRequest of the executeCommand id,
// window/workDoneProgress/cancel, fixpoint.cancel, or the connection
// ending). A prewarm also runs in its own goroutine, which ends when the
// engine's Prewarm returns (cancelled by shutdown, a configuration change
// or the connection ending).
package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"go.lsp.dev/jsonrpc2"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/agent/redact"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// Engine runs the agent loop and the tests for one workspace folder.
// *agent.Engine satisfies it. Run and Test must return promptly when ctx
// is cancelled; Close removes whatever the engine created (containers).
type Engine interface {
	Run(ctx context.Context, req agent.Request, onEvent func(agent.Event)) (*agent.Result, error)
	Test(ctx context.Context, root string, overlays map[string][]byte) (*testrun.Report, error)
	Close() error
}

// EngineFactory makes the engine for a workspace folder from its
// configuration. The server calls it at most once per folder and
// configuration, and closes the engine when the configuration changes or
// the connection ends. hooks connect the engine to the editor.
type EngineFactory func(ctx context.Context, cfg *config.Config, root string, hooks Hooks) (Engine, error)

// Hooks are the editor-facing callbacks the server offers an engine
// (agent.OpenOptions has fields of the same names).
type Hooks struct {
	// Warn shows each line written to it as a window/logMessage warning
	// (and a window/showMessage for the first one of a run).
	Warn io.Writer
	// Approve asks the user, through window/showMessageRequest, whether a
	// model edit that adds dependencies or changes what the setup phase
	// runs may run; a dismissed request is a refusal.
	Approve func(ctx context.Context, a agent.Approval) (bool, error)
}

// Options configure a Server. The zero value is usable: every field has a
// documented default.
type Options struct {
	// NewEngine makes engines. nil: runs fail with a message saying that
	// no engine is configured (useful only in tests of the protocol).
	NewEngine EngineFactory
	// Logger receives the server's logs (never stdout). nil discards.
	Logger *slog.Logger
	// Getenv reads the environment for configuration. nil = os.Getenv.
	Getenv func(string) string
	// UserConfig is config.LoadOptions.UserFile: "" = the default user
	// file, "-" = none.
	UserConfig string
	// Flags applies command-line flags over every configuration.
	Flags func(*config.Config)
	// Version is reported in serverInfo. "" = "dev".
	Version string
	// Redact masks secrets in text sent to the client as log messages.
	// nil = an agent/redact.Masker of the process environment's secret
	// values (redact.EnvValues: API keys, tokens, proxy passwords) and of
	// the API key variables Getenv gives, which also applies
	// redact.String.
	Redact func(string) string
	// StopTimeout bounds how long Serve waits for runs to stop after the
	// connection ends. 0 = 5s.
	StopTimeout time.Duration
	// Prewarm starts each folder's engine and a warm sandbox session after
	// initialized and after each run, for engines that can (warm.go);
	// [server] idle_timeout bounds how long an unused one stays up.
	// false: a run starts its own session (`fixpoint serve` sets it).
	// Only folders the user trusts are prewarmed (trust.go).
	Prewarm bool
	// TrustDir holds the user's trust records (config.TrustStore), for
	// folder trust and for config.LoadOptions.TrustDir: "" =
	// config.DefaultTrustDir(Getenv), "-" = none (nothing trusted).
	TrustDir string
}

// Errors returned by Serve. A clean shutdown then exit returns nil.
var (
	// ErrExitWithoutShutdown: the client sent exit without shutdown (exit code 1).
	ErrExitWithoutShutdown = errors.New("exit without shutdown")
	// ErrDisconnected: the connection ended (stdin EOF) without exit.
	ErrDisconnected = errors.New("client disconnected")
)

type lifecycle int

const (
	stateNew lifecycle = iota
	stateInitialized
	stateShutdown
)

// Server is one language server connection. Use New, then Serve once.
type Server struct {
	opts   Options
	logger *slog.Logger
	conn   jsonrpc2.Conn
	docs   *overlays
	exit   chan error // receives Serve's result once
	runWG  sync.WaitGroup
	table  map[string]handlerFunc // method → handler; set by New, read-only after

	mu        sync.Mutex
	state     lifecycle                  // guarded by mu
	caps      clientCaps                 // guarded by mu; set by initialize
	folders   []string                   // guarded by mu; cleaned absolute paths
	initOpts  json.RawMessage            // guarded by mu; initializationOptions
	settings  map[string]json.RawMessage // guarded by mu; workspace/configuration per folder
	engines   map[string]Engine          // guarded by mu; per folder
	runs      map[string]*run            // guarded by mu; active run per folder
	published map[string]map[string]bool // guarded by mu; folder → URIs with fixpoint diagnostics
	results   map[string]*agent.Result   // guarded by mu; last result per folder (Show log, Apply best attempt)
	previews  map[string]chan bool       // guarded by mu; run id -> the answer to its plugin preview (fixpoint.answerEdit)
	seq       int                        // guarded by mu; run ids
	// cfgFetched is closed when the latest workspace/configuration fetch
	// ends (nil before the first); guarded by mu.
	cfgFetched chan struct{}
	warm       map[string]*warmState         // guarded by mu; per folder (warm.go)
	prewarms   map[string]context.CancelFunc // guarded by mu; running prewarms by progress token
	warmSeq    int                           // guarded by mu; prewarm progress tokens
	stopping   bool                          // guarded by mu; shutdown or end of connection: no new prewarm
	// Folder trust (trust.go), guarded by mu: sessionTrust is
	// initializationOptions.workspaceTrusted; trusted holds the folders
	// trusted through the prompt; untrustedTold those told about.
	sessionTrust  bool
	trusted       map[string]bool
	untrustedTold map[string]bool
	// ended holds the folders where a run has sent its final status: that
	// status stays on screen, so their prewarms show no progress of their
	// own (status.go, prewarmProgress); guarded by mu.
	ended map[string]bool
	// demoShown is set once the demo model's banner was shown (nomodel.go);
	// guarded by mu.
	demoShown bool
	// bwrapShown is set once the no-Docker notice was shown (nomodel.go);
	// guarded by mu.
	bwrapShown bool
}

// New returns a server. opts may be nil.
func New(opts *Options) *Server {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	if o.Version == "" {
		o.Version = "dev"
	}
	if o.Redact == nil {
		env := os.Environ()
		for _, k := range []string{"FIXPOINT_API_KEY", "OPENAI_API_KEY"} { // the keys config.Load reads, through Getenv
			env = append(env, k+"="+o.Getenv(k))
		}
		o.Redact = redact.NewMasker(redact.EnvValues(env)).String
	}
	if o.StopTimeout == 0 {
		o.StopTimeout = 5 * time.Second
	}
	s := &Server{
		opts:          o,
		logger:        o.Logger,
		exit:          make(chan error, 1),
		settings:      map[string]json.RawMessage{},
		engines:       map[string]Engine{},
		runs:          map[string]*run{},
		published:     map[string]map[string]bool{},
		results:       map[string]*agent.Result{},
		warm:          map[string]*warmState{},
		prewarms:      map[string]context.CancelFunc{},
		trusted:       map[string]bool{},
		untrustedTold: map[string]bool{},
		ended:         map[string]bool{},
	}
	s.docs = newOverlays(s.inFolder)
	s.table = s.handlers()
	return s
}

// Serve speaks LSP on rwc until the client sends exit, the connection
// ends or ctx is done. It then cancels runs, waits for them (bounded by
// Options.StopTimeout), closes the engines (removing their containers)
// and closes rwc. It returns nil after shutdown and exit,
// ErrExitWithoutShutdown, ErrDisconnected, or ctx's error.
func (s *Server) Serve(ctx context.Context, rwc io.ReadWriteCloser) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.conn = jsonrpc2.NewConn(newStream(rwc, s.logger))
	s.conn.Go(ctx, s.handle)
	var err error
	select {
	case err = <-s.exit:
	case <-s.conn.Done():
		err = ErrDisconnected
		if e := s.conn.Err(); e != nil && !errors.Is(e, io.EOF) {
			err = fmt.Errorf("%w: %v", ErrDisconnected, e)
		}
	case <-ctx.Done():
		err = ctx.Err()
	}
	s.logger.Info("stopping", "reason", fmt.Sprint(err))
	s.stop()
	s.conn.Close()
	return err
}

// stop cancels every run, waits for them and closes the engines.
func (s *Server) stop() {
	s.stopWarming()
	s.mu.Lock()
	for _, r := range s.runs {
		r.cancel()
	}
	s.mu.Unlock()
	done := make(chan struct{})
	go func() { s.runWG.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(s.opts.StopTimeout):
		s.logger.Warn("runs did not stop in time", "timeout", s.opts.StopTimeout)
	}
	s.mu.Lock()
	engines := s.engines
	s.engines = map[string]Engine{}
	s.mu.Unlock()
	for root, e := range engines {
		if err := e.Close(); err != nil {
			s.logger.Warn("close engine", "root", root, "err", err)
		}
	}
}

// handlerFunc handles one request or notification. The result is the
// reply to a request (ignored for notifications); errors should be
// *jsonrpc2.Error, anything else is replied as an internal error.
type handlerFunc func(ctx context.Context, req jsonrpc2.Request) (any, error)

func (s *Server) handlers() map[string]handlerFunc {
	return map[string]handlerFunc{
		"initialize":                          s.initialize,
		"initialized":                         s.initialized,
		"shutdown":                            s.shutdown,
		"exit":                                s.exitNotification,
		"$/cancelRequest":                     s.cancelRequest,
		"$/setTrace":                          ignore,
		"textDocument/didOpen":                s.didOpen,
		"textDocument/didChange":              s.didChange,
		"textDocument/didClose":               s.didClose,
		"textDocument/didSave":                ignore,
		"textDocument/willSave":               ignore,
		"textDocument/codeAction":             s.codeAction,
		"workspace/executeCommand":            s.executeCommand,
		"window/workDoneProgress/cancel":      s.workDoneProgressCancel,
		"workspace/didChangeConfiguration":    s.didChangeConfiguration,
		"workspace/didChangeWorkspaceFolders": s.didChangeWorkspaceFolders,
		"workspace/didChangeWatchedFiles":     ignore,
	}
}

// handle is the connection's handler. It always replies to calls itself
// and never returns an error: jsonrpc2 closes the connection on one.
func (s *Server) handle(ctx context.Context, reply jsonrpc2.Replier, req jsonrpc2.Request) error {
	call, isCall := req.(*jsonrpc2.Call)
	result, err := s.dispatch(ctx, req)
	if !isCall {
		if ar, ok := result.(afterReply); ok {
			ar.then()
		}
		if err != nil {
			s.logger.Debug("notification failed", "method", req.Method(), "err", err)
		}
		return nil
	}
	var rerr *jsonrpc2.Error
	if err != nil && !errors.As(err, &rerr) {
		err = jsonrpc2.NewError(jsonrpc2.InternalError, err.Error())
	}
	var then func()
	if ar, ok := result.(afterReply); ok {
		result, then = ar.result, ar.then
	}
	if rerr := reply(context.WithoutCancel(ctx), result, err); rerr != nil {
		s.logger.Debug("reply failed", "method", req.Method(), "id", call.ID(), "err", rerr)
	}
	if then != nil {
		then()
	}
	return nil
}

func (s *Server) dispatch(ctx context.Context, req jsonrpc2.Request) (result any, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.logger.Error("handler panic", "method", req.Method(), "panic", r, "stack", string(debug.Stack()))
			result, err = nil, jsonrpc2.NewError(jsonrpc2.InternalError, fmt.Sprintf("internal error in %s: %v", req.Method(), r))
		}
	}()
	_, isCall := req.(*jsonrpc2.Call)
	method := req.Method()
	s.mu.Lock()
	state := s.state
	s.mu.Unlock()
	switch {
	case method == "exit":
	case state == stateNew && method != "initialize":
		return nil, jsonrpc2.NewError(jsonrpc2.ServerNotInitialized, "server not initialized: send initialize first")
	case state == stateShutdown && isCall:
		return nil, jsonrpc2.NewError(jsonrpc2.InvalidRequest, "server is shutting down: only exit is accepted")
	}
	h, ok := s.table[method]
	if !ok {
		if empty, ok := unimplementedResult(method); ok && isCall {
			return empty, nil // unimplemented.go
		}
		if isCall {
			return nil, jsonrpc2.NewError(jsonrpc2.MethodNotFound, fmt.Sprintf("method not found: %s", method))
		}
		return nil, nil // unknown notifications ($/...) are ignored
	}
	return h(ctx, req)
}

func ignore(context.Context, jsonrpc2.Request) (any, error) { return nil, nil }

// decode unmarshals params, turning failures into InvalidParams.
func decode(req jsonrpc2.Request, v any) error {
	if err := json.Unmarshal(req.Params(), v); err != nil {
		return jsonrpc2.NewError(jsonrpc2.InvalidParams, fmt.Sprintf("%s: invalid params: %v", req.Method(), err))
	}
	return nil
}

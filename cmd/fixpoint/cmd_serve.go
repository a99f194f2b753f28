package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/server"
)

func serveCommand() *command {
	c := &command{
		name:    "serve",
		summary: "run the language server (LSP over stdio, or TCP with --listen)",
		usage: `Usage: fixpoint serve [--listen unix:PATH | --listen 127.0.0.1:PORT [--token-file FILE]]

Runs fixpoint's language server. It speaks LSP on stdin/stdout (nothing
else is ever written to stdout; logs go to stderr, level from FIXPOINT_LOG).
With --listen it accepts one connection instead, and only one that proves
it is yours (whoever connects names the folders and the model endpoint):
  unix:PATH   a socket made 0600 in a directory only you may open (made
              0700 when missing; refused when others may enter it)
  HOST:PORT   TCP on a loopback address: a random token is written (0600) to --token-file, by
              default in fixpoint's private cache directory (the path is
              printed); the client's first message must be initialize with
              initializationOptions.fixpointToken set to it. Anything else
              (no token, a wrong one, an HTTP request) is disconnected
              before the language server reads it.
Configuration comes from initializationOptions and the "fixpoint" section
of workspace/configuration, above the environment, .fixpoint.toml and the
user file.

Exit codes: 0 after shutdown and exit; 1 after exit without shutdown or
when the client disconnects (runs are cancelled and containers removed).
Example:
  fixpoint serve
  fixpoint serve --listen unix:$XDG_RUNTIME_DIR/fixpoint/lsp.sock`,
	}
	c.run = func(ctx context.Context, a *app, args []string) int {
		fs := newFlags(c, a.stderr)
		listen := fs.String("listen", "", "accept one authenticated LSP connection on unix:`PATH` or a TCP HOST:PORT instead of stdio")
		tokenFile := fs.String("token-file", "", "with a TCP --listen: write the token the client must present to this `file` (0600)")
		_ = fs.Bool("stdio", true, "speak LSP on stdin/stdout (the default; accepted for clients that pass it)")
		if done, code := parseFlags(fs, args); done {
			return code
		}
		if fs.NArg() > 0 {
			return a.fail(usagef("serve takes no arguments, got %q", fs.Args()))
		}
		srv := server.New(&server.Options{
			NewEngine: newEngine(a.logger),
			Logger:    a.logger,
			Getenv:    a.getenv,
			Version:   version,
			Prewarm:   true, // [server] idle_timeout = "0s" turns it off
		})
		var rwc io.ReadWriteCloser = stdio{in: a.stdin, out: a.stdout}
		if *tokenFile != "" && (*listen == "" || strings.HasPrefix(*listen, "unix:")) {
			return a.fail(usagef("serve: --token-file goes with a TCP --listen HOST:PORT"))
		}
		if *listen != "" {
			conn, err := listenOne(ctx, *listen, *tokenFile, a)
			if err != nil {
				return a.fail(err)
			}
			rwc = conn
		}
		err := srv.Serve(ctx, rwc)
		switch {
		case err == nil:
			return exitOK
		case errors.Is(err, server.ErrExitWithoutShutdown), errors.Is(err, server.ErrDisconnected):
			a.logger.Info("serve: " + err.Error())
			return exitNotReached
		}
		a.logger.Error("serve", "err", err)
		return exitNotReached
	}
	return c
}

// stdio is stdin and stdout as one connection. Close closes stdin when
// it is a file, so a pending read ends.
type stdio struct {
	in  io.Reader
	out io.Writer
}

func (s stdio) Read(p []byte) (int, error)  { return s.in.Read(p) }
func (s stdio) Write(p []byte) (int, error) { return s.out.Write(p) }
func (s stdio) Close() error {
	if f, ok := s.in.(*os.File); ok {
		return f.Close()
	}
	return nil
}

// newEngine makes the agent engine for a workspace folder of `fixpoint
// serve`: the sandbox backend, failure memory and model client from cfg.
// Without a configured model it runs the bundled scripted demo model, as
// `fixpoint fix` does; the server shows the banner (server/nomodel.go).
func newEngine(logger *slog.Logger) server.EngineFactory {
	return func(ctx context.Context, cfg *config.Config, root string, h server.Hooks) (server.Engine, error) {
		stop := func() {}
		if !cfg.Model.Configured() {
			var err error
			if stop, err = startDemo(cfg); err != nil {
				return nil, fmt.Errorf("start the demo model: %w", err)
			}
		}
		e, err := agent.Open(ctx, cfg, root, &agent.OpenOptions{Logger: logger, Warn: h.Warn, Approve: h.Approve})
		if err != nil {
			stop()
			return nil, err
		}
		if !cfg.Model.Configured() {
			return &demoEngine{Engine: e, stop: stop}, nil
		}
		return e, nil
	}
}

// demoEngine is an engine on the scripted demo model; Close stops the
// model's server too. Prewarm and Cool are promoted from *agent.Engine.
type demoEngine struct {
	*agent.Engine
	stop func()
}

// DemoModel tells the server that the demo model runs (server/nomodel.go).
func (e *demoEngine) DemoModel() bool { return true }

func (e *demoEngine) Close() error {
	err := e.Engine.Close()
	e.stop()
	return err
}

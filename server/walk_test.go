package server

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"go.lsp.dev/protocol"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestCodeActionWalksOnce is issue 22's proof for the path an editor
// takes: a code action's "Fix until tests pass", executed as the client
// executes it (workspace/executeCommand with the action's own command and
// arguments), runs the real engine in bwrap to a verified, applied fix;
// that run detects the workspace's language once (lang/registry) and
// derives its session spec (sandbox/backends) and setup plan
// (sandbox/setup) once, though it starts a session for the baseline and
// syncs the model's edit. With prewarming on, the prewarm before the
// action and the one the server starts after the run are walks of their
// own, each detecting and deriving once: three walks, three of each (the
// run derives its project again rather than taking the prewarm's, and
// reuses only its session).
func TestCodeActionWalksOnce(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real engine in bwrap")
	}
	sandboxtest.RequireCommand(t, "bwrap")
	for _, prewarm := range []bool{false, true} {
		name := "prewarm off"
		if prewarm {
			name = "prewarm on"
		}
		t.Run(name, func(t *testing.T) {
			model := llmtest.NewServer(calcModel())
			defer model.Close()
			root := calcProject(t, false, "")
			data := t.TempDir()
			env := map[string]string{"FIXPOINT_BASE_URL": model.URL(), "FIXPOINT_MODEL": "llmtest", "FIXPOINT_SANDBOX": "bwrap", "FIXPOINT_DATA_DIR": data, "HOME": data}
			var (
				mu   sync.Mutex
				engs []*agent.Engine
			)
			e := newFakeEditor(t, editorOptions{root: root, timeout: 3 * time.Minute, server: &Options{
				Getenv:  func(k string) string { return env[k] },
				Prewarm: prewarm,
				NewEngine: func(ctx context.Context, cfg *config.Config, root string, h Hooks) (Engine, error) {
					eng, err := agent.Open(ctx, cfg, root, &agent.OpenOptions{Warn: h.Warn, Approve: h.Approve})
					if err == nil {
						mu.Lock()
						engs = append(engs, eng)
						mu.Unlock()
					}
					return eng, err
				},
			}})
			walks := func() (d, p int64) {
				mu.Lock()
				defer mu.Unlock()
				for _, eng := range engs {
					dd, pp := eng.Walks()
					d, p = d+dd, p+pp
				}
				return d, p
			}
			e.settings = []byte(`{"maxIterations": 1}`)
			e.initialize(vscodeCaps)
			e.wait("workspace/configuration", "")
			var want int64
			if prewarm {
				e.wait("$/progress", "Sandbox ready")
				want = 1
				if d, p := walks(); d != want || p != want {
					t.Fatalf("the prewarm detected the language %d times and derived its spec and plan %d times; want 1 and 1", d, p)
				}
			}
			e.open("test_calc.py", 1)
			res := e.mustCall("textDocument/codeAction", map[string]any{
				"textDocument": map[string]any{"uri": e.uri("test_calc.py")},
				"range":        map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 0, "character": 0}},
				"context":      map[string]any{"diagnostics": []any{}},
			})
			var actions []protocol.CodeAction
			if err := json.Unmarshal(res, &actions); err != nil {
				t.Fatalf("codeAction = %s: %v", res, err)
			}
			var fix *protocol.Command
			for _, a := range actions {
				if a.Command != nil && a.Command.Command == cmdFixTests {
					fix = a.Command
				}
			}
			if fix == nil {
				t.Fatalf("codeAction = %s: no %s action", res, cmdFixTests)
			}
			started := e.mustCall("workspace/executeCommand", map[string]any{"command": fix.Command, "arguments": fix.Arguments})
			if !strings.Contains(string(started), `"started":true`) {
				t.Fatalf("%s = %s", fix.Command, started)
			}
			e.wait(methodStatus, `"state":"applied"`)
			want++
			// The run's walk is counted before its final status; a prewarm
			// the server starts after the run is a walk of its own (below).
			d, p := walks()
			if prewarm {
				// The folder is warmed again after the run, quietly (a log
				// line, not progress): wait for its end, so that the count
				// is settled, and allow its walk.
				e.wait("window/logMessage", "preparing the sandbox: ")
				d, p = walks()
				want++
			}
			if d != want || p != want {
				t.Errorf("code action → fix run: %d language detections and %d spec+plan derivations; want %d and %d (one per walk)", d, p, want, want)
			}
		})
	}
}

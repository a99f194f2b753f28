package server

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/config"
)

// TestConfigurationReachesTheEngine: the "fixpoint" section of
// workspace/configuration wins over initializationOptions; after
// didChangeConfiguration the idle engine is closed and the next run gets
// an engine built from the re-read configuration.
func TestConfigurationReachesTheEngine(t *testing.T) {
	var mu sync.Mutex
	var cfgs []*config.Config
	eng := &fakeEngine{release: make(chan struct{}), Result: fakeResultVerified()}
	opts := &Options{NewEngine: func(ctx context.Context, cfg *config.Config, root string, h Hooks) (Engine, error) {
		mu.Lock()
		defer mu.Unlock()
		cfgs = append(cfgs, cfg)
		return eng, nil
	}}
	e := newFakeEditor(t, editorOptions{server: opts, files: map[string]string{"go.mod": "module w\n"}})
	e.settings = json.RawMessage(`{"maxIterations": 3, "testCmd": "pytest -q"}`)
	params := json.RawMessage(e.expand(`{"processId":1,"rootUri":"$ROOT","initializationOptions":{"maxIterations":5,"model":"from-init"},"capabilities":{"workspace":{"configuration":true},"window":{"workDoneProgress":true}}}`))
	e.mustCall("initialize", params)
	e.notify("initialized", map[string]any{})
	e.wait("workspace/configuration", "")

	e.mustCall("workspace/executeCommand", map[string]any{"command": cmdFixTests})
	e.wait("$/progress", `"end"`)
	e.mu.Lock()
	e.settings = json.RawMessage(`{"maxIterations": 2}`)
	e.mu.Unlock()
	e.notify("workspace/didChangeConfiguration", map[string]any{"settings": map[string]any{}})
	e.wait("workspace/configuration", "")
	e.mustCall("textDocument/codeAction", json.RawMessage(`{"textDocument":{"uri":"untitled:x"},"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}},"context":{"diagnostics":[]}}`))
	// The first run's progress ended after its engine returned, so it is
	// settling: the second run queues behind it instead of being refused.
	if res := e.mustCall("workspace/executeCommand", map[string]any{"command": cmdFixTests}); !strings.Contains(string(res), `"started":true`) {
		t.Fatalf("second run = %s, want started (queued behind the settling first run)", res)
	}
	e.wait("$/progress", `"end"`)

	mu.Lock()
	defer mu.Unlock()
	if len(cfgs) != 2 {
		t.Fatalf("engine factory called %d times, want 2 (once per configuration)", len(cfgs))
	}
	if got := cfgs[0].Agent.MaxIterations; got != 3 {
		t.Errorf("first run MaxIterations = %d, want 3 (workspace/configuration over initializationOptions)", got)
	}
	if cfgs[0].TestCmd != "pytest -q" || cfgs[0].Model.Name != "gpt-4o-mini" {
		t.Errorf("first config TestCmd = %q, Model = %q", cfgs[0].TestCmd, cfgs[0].Model.Name)
	}
	if got := cfgs[1].Agent.MaxIterations; got != 2 {
		t.Errorf("second run MaxIterations = %d, want 2 (re-read after didChangeConfiguration)", got)
	}
	eng.mu.Lock()
	defer eng.mu.Unlock()
	if eng.closed != 1 {
		t.Errorf("engine closed %d times after the configuration changed, want 1", eng.closed)
	}
}

func fakeResultVerified() agent.Result { return agent.Result{Verified: true, StopReason: "verified"} }

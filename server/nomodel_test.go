package server

import (
	"context"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// demoFake is a fake engine that says it runs the scripted demo model, as
// cmd/fixpoint's engine does when no model is configured.
type demoFake struct{ *fakeEngine }

func (demoFake) DemoModel() bool { return true }

// TestNoModelConfigured: with the demo model, a fix runs under a banner
// shown once (window/showMessage) that names the settings and where the
// key goes, and its status says "demo model"; a goal is refused with the
// same directions, without calling the engine, as the CLI's solve does.
func TestNoModelConfigured(t *testing.T) {
	eng := &fakeEngine{Result: agent.Result{StopReason: "the demo model cannot help with this project"}}
	e := newFakeEditor(t, editorOptions{files: map[string]string{"go.mod": "module w\n", "a.go": statusWorkspaceA},
		server: &Options{NewEngine: func(ctx context.Context, cfg *config.Config, root string, h Hooks) (Engine, error) {
			return demoFake{eng}, nil
		}}})
	e.answer = []byte("null") // the unverified offer is dismissed
	e.initialize(`{"workspace":{"applyEdit":true}}`)
	for i := range 2 {
		e.mustCall("workspace/executeCommand", map[string]any{"command": cmdFixTests, "arguments": []any{}})
		if i == 0 {
			e.wait("window/showMessage", "no model configured")
		}
		e.wait(methodStatus, `"state":"failed"`)
		e.wait("window/showMessageRequest", "not verified")
	}
	var banners []string
	for _, m := range e.sent("window/showMessage") {
		if strings.Contains(string(m), "no model configured") {
			banners = append(banners, string(m))
		}
	}
	if len(banners) != 1 || !strings.Contains(banners[0], "demo model") || !strings.Contains(banners[0], "fixpoint.baseUrl") ||
		!strings.Contains(banners[0], "FIXPOINT_API_KEY") || !strings.Contains(banners[0], `"type":2`) {
		t.Errorf("banners = %q, want one warning naming the demo model, fixpoint.baseUrl and FIXPOINT_API_KEY", banners)
	}
	demoStatuses := 0
	for _, st := range e.statuses() {
		if strings.Contains(st.Message, "demo model") {
			demoStatuses++
		}
	}
	if demoStatuses < 2 {
		t.Errorf("statuses = %+v, want the runs' to say demo model", e.statuses())
	}

	e.mustCall("workspace/executeCommand", map[string]any{"command": cmdSolveGoal, "arguments": []any{map[string]any{"goal": "add Reverse"}}})
	e.wait("window/showMessage", "cannot solve a goal")
	e.wait(methodStatus, "No model configured")
	sts := e.statuses()
	if final := sts[len(sts)-1]; final.Kind != "solve" || final.State != stateFailed || !strings.Contains(final.Message, "No model configured") {
		t.Errorf("solve's final status = %+v, want failed: No model configured", final)
	}
	eng.mu.Lock()
	defer eng.mu.Unlock()
	if len(eng.requests) != 2 {
		t.Errorf("engine runs = %d, want 2 (the fixes; the goal never reaches the demo model)", len(eng.requests))
	}
}

// bwrapFake is a fake engine whose sandbox is bwrap, as *agent.Engine
// says when no Docker engine answered.
type bwrapFake struct{ *fakeEngine }

func (bwrapFake) SandboxName() string { return "bwrap" }

// TestNoDockerNotice: when sandbox.backend is unset and the engine fell
// back to bwrap, the user is told once (window/showMessage), with the fix
// for their system and how to keep bwrap, never a repository script; a
// user who chose bwrap is not told.
func TestNoDockerNotice(t *testing.T) {
	for _, tt := range []struct {
		name, sandbox string
		want          int
	}{
		{name: "automatic choice", want: 1},
		{name: "bwrap chosen", sandbox: "bwrap", want: 0},
	} {
		t.Run(tt.name, func(t *testing.T) {
			eng := &fakeEngine{Report: &testrun.Report{Passed: 1}}
			env := map[string]string{"FIXPOINT_SANDBOX": tt.sandbox}
			e := newFakeEditor(t, editorOptions{files: map[string]string{"go.mod": "module w\n"},
				server: &Options{Getenv: func(k string) string { return env[k] },
					NewEngine: func(ctx context.Context, cfg *config.Config, root string, h Hooks) (Engine, error) {
						return bwrapFake{eng}, nil
					}}})
			e.initialize(`{"workspace":{"applyEdit":true}}`)
			for range 2 {
				e.mustCall("workspace/executeCommand", map[string]any{"command": cmdRunTests})
				e.wait(methodStatus, "Tests pass")
			}
			var notices []string
			for _, m := range e.sent("window/showMessage") {
				if strings.Contains(string(m), "no Docker engine") {
					notices = append(notices, string(m))
				}
			}
			if len(notices) != tt.want {
				t.Fatalf("no-Docker notices = %q, want %d", notices, tt.want)
			}
			for _, n := range notices {
				if !strings.Contains(n, "apt-get install docker.io") || !strings.Contains(n, `\"bwrap\"`) || strings.Contains(n, ".ci/") {
					t.Errorf("notice = %s, want the system's fix and how to keep bwrap, no repository script", n)
				}
			}
		})
	}
}

package server

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// These tests check the editor contract of $/fixpoint/status, change
// annotations and the preview setting structurally, independently of the
// golden transcripts in testdata/lsp.

const statusWorkspaceA = "package w\n\nfunc A() int { return 1 }\n"

// statuses decodes every $/fixpoint/status the server sent.
func (e *fakeEditor) statuses() []statusParams {
	e.rec.mu.Lock()
	defer e.rec.mu.Unlock()
	var out []statusParams
	for _, m := range e.rec.msgs {
		if m.out || m.method != methodStatus {
			continue
		}
		var msg struct {
			Params statusParams `json:"params"`
		}
		if err := json.Unmarshal(m.raw, &msg); err != nil {
			e.t.Fatalf("decode %s: %v", m.raw, err)
		}
		out = append(out, msg.Params)
	}
	return out
}

// sent returns the params of every message of method the server sent.
func (e *fakeEditor) sent(method string) []json.RawMessage {
	e.rec.mu.Lock()
	defer e.rec.mu.Unlock()
	var out []json.RawMessage
	for _, m := range e.rec.msgs {
		if !m.out && m.method == method {
			var msg struct {
				Params json.RawMessage `json:"params"`
			}
			_ = json.Unmarshal(m.raw, &msg)
			out = append(out, msg.Params)
		}
	}
	return out
}

func verifiedEngine() *fakeEngine {
	return &fakeEngine{
		release: make(chan struct{}),
		Events: []agent.Event{
			{Phase: "test", Iteration: 1, MaxIterations: 4, Message: "Iteration 1/4 · running tests · 1 failed",
				Report: &testrun.Report{Failed: 1, Passed: 2}},
		},
		Result: agent.Result{Verified: true, StopReason: "verified", Diff: "--- a/a.go\n+++ b/a.go\n",
			Iterations: []agent.Iteration{{N: 1}, {N: 2}},
			Final:      &testrun.Report{Passed: 3}},
		Changes: []fakeChange{{Path: "a.go", After: "package w\n\nfunc A() int { return 2 }\n"}},
	}
}

func TestStatusContract(t *testing.T) {
	const pluginCaps = `{"workspace":{"applyEdit":true,"configuration":true,"workspaceEdit":{"documentChanges":true,"resourceOperations":["create","rename","delete"]}},"window":{"workDoneProgress":true},"experimental":{"fixpointPreview":true}}`
	tests := []struct {
		name     string
		caps     string
		settings string // workspace/configuration answer
		reject   bool   // the editor answers applied=false
		// want
		state       string
		reason      string
		annotated   bool
		meta        bool // the "fixpoint" field for the plugins
		metaConfirm bool
	}{
		{name: "vscode applies", caps: vscodeCaps, state: stateApplied, annotated: true},
		{name: "vscode declines the preview", caps: vscodeCaps, reject: true, state: stateNotApplied, reason: reasonDeclined, annotated: true},
		{name: "preview never", caps: vscodeCaps, settings: `{"preview":"never"}`, state: stateApplied},
		{name: "plugin confirms", caps: pluginCaps, state: stateApplied, meta: true, metaConfirm: true},
		{name: "plugin with preview never", caps: pluginCaps, settings: `{"preview":"never"}`, state: stateApplied, meta: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			e := newFakeEditor(t, editorOptions{engine: verifiedEngine(), files: map[string]string{"go.mod": "module w\n", "a.go": statusWorkspaceA}})
			if tc.settings != "" {
				e.settings = json.RawMessage(tc.settings)
			}
			e.applyOK = !tc.reject
			if tc.reject {
				e.answerApply = map[string]any{"applied": false} // VS Code: the user discarded the preview
			}
			e.initialize(tc.caps)
			if strings.Contains(tc.caps, `"configuration":true`) {
				e.wait("workspace/configuration", "")
			}
			e.mustCall("workspace/executeCommand", map[string]any{"command": cmdFixTests, "arguments": []any{}})
			e.wait(methodStatus, `"state":"`+tc.state+`"`)
			sts := e.statuses()
			final := sts[len(sts)-1]
			for _, s := range sts[:len(sts)-1] {
				if s.State != stateRunning {
					t.Errorf("status before the last = %q, want running", s.State)
				}
				if s.Diff != "" {
					t.Errorf("a running status carries the diff")
				}
			}
			if final.State != tc.state || final.Reason != tc.reason || final.Kind != "fix" || final.RunID != "run-1" {
				t.Errorf("final status = %+v, want state %q reason %q", final, tc.state, tc.reason)
			}
			if final.Diff == "" || len(final.Files) != 1 || final.Files[0] != (statusFile{Path: "a.go", Added: 1, Removed: 1}) {
				t.Errorf("final status files = %+v diff = %q, want a.go +1 -1 and the diff", final.Files, final.Diff)
			}
			if final.Passing != 3 || final.Failing != 0 || final.Iteration != 2 || final.MaxIterations != 4 {
				t.Errorf("final counts = %+v", final)
			}
			edits := e.sent("workspace/applyEdit")
			if len(edits) != 1 {
				t.Fatalf("applyEdit sent %d times, want 1", len(edits))
			}
			var p struct {
				Edit struct {
					ChangeAnnotations map[string]changeAnnotation `json:"changeAnnotations"`
					DocumentChanges   []struct {
						Edits []map[string]any `json:"edits"`
					} `json:"documentChanges"`
				} `json:"edit"`
				Fixpoint *applyMeta `json:"fixpoint"`
			}
			if err := json.Unmarshal(edits[0], &p); err != nil {
				t.Fatal(err)
			}
			a, ok := p.Edit.ChangeAnnotations[annotationID]
			if ok != tc.annotated {
				t.Errorf("annotation present = %v, want %v: %s", ok, tc.annotated, edits[0])
			}
			if tc.annotated && (!a.NeedsConfirmation || a.Label != "Fix until tests pass" || a.Description != "verified: 2 iterations, 3 tests passing") {
				t.Errorf("annotation = %+v", a)
			}
			for _, dc := range p.Edit.DocumentChanges {
				for _, ed := range dc.Edits {
					if id, _ := ed["annotationId"].(string); (id == annotationID) != tc.annotated {
						t.Errorf("edit %v: annotationId %q, want annotated=%v", ed, id, tc.annotated)
					}
				}
			}
			if (p.Fixpoint != nil) != tc.meta {
				t.Fatalf("fixpoint meta present = %v, want %v", p.Fixpoint != nil, tc.meta)
			}
			if tc.meta && (p.Fixpoint.Confirm != tc.metaConfirm || p.Fixpoint.Diff == "" || p.Fixpoint.Label != "Fix until tests pass") {
				t.Errorf("fixpoint meta = %+v, want confirm %v and the diff", p.Fixpoint, tc.metaConfirm)
			}
			for _, m := range e.sent("window/showMessage") {
				if strings.Contains(string(m), `"type":1`) {
					t.Errorf("an error message was shown: %s", m)
				}
			}
		})
	}
}

func TestStatusRunTests(t *testing.T) {
	tests := []struct {
		name    string
		report  *testrun.Report
		state   string
		failing int
	}{
		{name: "failures are not a failed run", report: &testrun.Report{ExitCode: 1, Failed: 2, Passed: 5}, state: stateTestsFail, failing: 2},
		{name: "all pass", report: &testrun.Report{Passed: 5}, state: stateApplied},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eng := &fakeEngine{release: make(chan struct{}), Report: tc.report}
			e := newFakeEditor(t, editorOptions{engine: eng, files: map[string]string{"go.mod": "module w\n"}})
			e.initialize(`{"workspace":{"applyEdit":true}}`)
			e.mustCall("workspace/executeCommand", map[string]any{"command": cmdRunTests, "arguments": []any{}})
			e.wait(methodStatus, `"state":"`+tc.state+`"`)
			sts := e.statuses()
			final := sts[len(sts)-1]
			if final.Kind != "test" || final.Failing != tc.failing || final.Passing != 5 {
				t.Errorf("final status = %+v, want kind test, failing %d, passing 5", final, tc.failing)
			}
			for _, m := range e.sent("window/showMessage") {
				if strings.Contains(string(m), "failed:") {
					t.Errorf("a Run Tests that found failures was reported as a failure: %s", m)
				}
			}
		})
	}
}

// TestProgressWithoutWorkDoneProgress: a client without work-done progress
// (eglot 1.9) gets the progress as window/logMessage, never as message
// boxes, and the status notifications as well.
func TestProgressWithoutWorkDoneProgress(t *testing.T) {
	e := newFakeEditor(t, editorOptions{engine: verifiedEngine(), files: map[string]string{"go.mod": "module w\n", "a.go": statusWorkspaceA}})
	e.initialize(`{"workspace":{"applyEdit":true,"workspaceEdit":{"documentChanges":true}}}`)
	e.mustCall("workspace/executeCommand", map[string]any{"command": cmdFixTests, "arguments": []any{}})
	e.wait(methodStatus, `"state":"applied"`)
	e.wait("window/showMessage", "a.go")
	if n := len(e.sent("window/workDoneProgress/create")) + len(e.sent("$/progress")); n != 0 {
		t.Errorf("sent %d work-done progress messages to a client without support", n)
	}
	logs := e.sent("window/logMessage")
	var joined []string
	for _, l := range logs {
		joined = append(joined, string(l))
	}
	if !strings.Contains(strings.Join(joined, "\n"), "Iteration 1/4") {
		t.Errorf("progress not in window/logMessage: %s", joined)
	}
	for _, m := range e.sent("window/showMessage") {
		if strings.Contains(string(m), "Iteration") || strings.Contains(string(m), "…") {
			t.Errorf("progress shown as a message box: %s", m)
		}
	}
	shows := e.sent("window/showMessage")
	if len(shows) != 1 || !strings.Contains(string(shows[0]), "a.go (+1 −1)") || !strings.Contains(string(shows[0]), "3 tests passing") {
		t.Errorf("summary after applying = %s, want one message naming a.go (+1 −1) and 3 tests passing", shows)
	}
}

// TestUnverifiedSafeChoiceFirst: "Apply best attempt" is never the first
// (default) action.
func TestUnverifiedSafeChoiceFirst(t *testing.T) {
	eng := verifiedEngine()
	eng.Result.Verified = false
	eng.Result.StopReason = "max iterations"
	e := newFakeEditor(t, editorOptions{engine: eng, files: map[string]string{"go.mod": "module w\n", "a.go": statusWorkspaceA}})
	e.initialize(vscodeCaps)
	e.wait("workspace/configuration", "")
	e.mustCall("workspace/executeCommand", map[string]any{"command": cmdFixTests, "arguments": []any{}})
	req := e.wait("window/showMessageRequest", "")
	var m struct {
		Params struct {
			Actions []struct{ Title string } `json:"actions"`
		} `json:"params"`
	}
	_ = json.Unmarshal(req, &m)
	if len(m.Params.Actions) != 2 || m.Params.Actions[0].Title != "Show log" || m.Params.Actions[1].Title != "Apply best attempt" {
		t.Errorf("actions = %+v, want Show log first", m.Params.Actions)
	}
	sts := e.statuses()
	if final := sts[len(sts)-1]; final.State != stateFailed || !strings.Contains(final.Reason, "not verified") {
		t.Errorf("final status = %+v, want failed with the reason", final)
	}
}

// TestCommandNamesPerClient: messages name the client's own commands.
func TestCommandNamesPerClient(t *testing.T) {
	tests := []struct{ client, experimental, want string }{
		{"Neovim", "", ":FixpointCancel"},
		{"", `"experimental":{"fixpointPreview":true,"fixpointClient":"emacs"}`, "M-x fixpoint-cancel"}, // fixpoint.el on eglot 1.9
		{"Visual Studio Code", "", "fixpoint.cancel"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			eng := &fakeEngine{release: make(chan struct{}), Block: true}
			e := newFakeEditor(t, editorOptions{engine: eng, files: map[string]string{"go.mod": "module w\n"}})
			params := json.RawMessage(e.expand(`{"processId":1,"rootUri":"$ROOT","clientInfo":{"name":"` + tc.client + `"},"capabilities":{` + tc.experimental + `},"workspaceFolders":[{"uri":"$ROOT","name":"ws"}]}`))
			e.mustCall("initialize", params)
			e.notify("initialized", map[string]any{})
			cancelMsg := e.mustCall("workspace/executeCommand", map[string]any{"command": cmdCancel, "arguments": []any{}})
			if !strings.Contains(string(cancelMsg), "nothing to cancel") {
				t.Errorf("cancel with nothing running = %s, want it to say so", cancelMsg)
			}
			e.mustCall("workspace/executeCommand", map[string]any{"command": cmdFixTests, "arguments": []any{}})
			busy := e.mustCall("workspace/executeCommand", map[string]any{"command": cmdFixTests, "arguments": []any{}})
			if !strings.Contains(string(busy), "("+tc.want+")") {
				t.Errorf("busy message = %s, want it to name %s", busy, tc.want)
			}
			e.mustCall("workspace/executeCommand", map[string]any{"command": cmdCancel, "arguments": []any{}})
			e.wait(methodStatus, `"state":"cancelled"`)
		})
	}
}

// TestStatusFinalStates: each way a run ends gives exactly one final
// status, after running ones only, with the state and reason a user needs.
func TestStatusFinalStates(t *testing.T) {
	const plain = `{"workspace":{"applyEdit":true}}`
	const progress = `{"workspace":{"applyEdit":true,"workspaceEdit":{"documentChanges":true}},"window":{"workDoneProgress":true}}`
	tests := []struct {
		name   string
		caps   string
		engine *fakeEngine
		during func(e *fakeEditor, eng *fakeEngine) // after the run started
		state  string
		reason string // substring
	}{
		{
			name: "cancelled", caps: progress,
			engine: &fakeEngine{Block: true},
			during: func(e *fakeEditor, _ *fakeEngine) {
				e.mustCall("workspace/executeCommand", map[string]any{"command": cmdCancel, "arguments": []any{}})
			},
			state: stateCancelled,
		},
		{
			// The engine hands back a partial, unverified result when it is
			// cancelled while planning: still a cancellation, never "failed"
			// with a best attempt to offer.
			name: "cancelled with a partial result", caps: progress,
			engine: &fakeEngine{Block: true, PartialOnCancel: true, Result: agent.Result{StopReason: "cancelled"}},
			during: func(e *fakeEditor, _ *fakeEngine) {
				e.mustCall("workspace/executeCommand", map[string]any{"command": cmdCancel, "arguments": []any{}})
			},
			state: stateCancelled,
		},
		{
			name: "the editor cannot create files", caps: plain,
			engine: &fakeEngine{Result: agent.Result{Verified: true}, Changes: []fakeChange{{Path: "new.go", After: "package w\n", Created: true}}},
			state:  stateNotApplied, reason: "new.go",
		},
		{
			name: "the user changed the same lines", caps: progress,
			engine: &fakeEngine{Block: true, Result: agent.Result{Verified: true}, Changes: []fakeChange{{Path: "a.go", After: "package w\n\nfunc A() int { return 20 }\n"}}},
			during: func(e *fakeEditor, eng *fakeEngine) {
				e.notify("textDocument/didChange", json.RawMessage(`{"textDocument":{"uri":"`+e.uri("a.go")+`","version":2},"contentChanges":[{"range":{"start":{"line":2,"character":22},"end":{"line":2,"character":23}},"text":"3"}]}`))
				e.mustCall("textDocument/codeAction", json.RawMessage(`{"textDocument":{"uri":"untitled:sync"},"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}},"context":{"diagnostics":[],"only":["none"]}}`))
				eng.Release()
			},
			state: stateNotApplied, reason: "a.go was changed in the editor during the run",
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.engine.release = make(chan struct{})
			e := newFakeEditor(t, editorOptions{engine: tc.engine, files: map[string]string{"go.mod": "module w\n", "a.go": statusWorkspaceA}})
			e.initialize(tc.caps)
			e.open("a.go", 1)
			e.mustCall("workspace/executeCommand", map[string]any{"command": cmdFixTests, "arguments": []any{}})
			if strings.Contains(tc.caps, "workDoneProgress") {
				// The fake editor must not send a request while the server's
				// window/workDoneProgress/create is unanswered (jsonrpc2 v0.10).
				e.wait("$/progress", `"begin"`)
			} else {
				e.wait(methodStatus, `"state":"running"`)
			}
			if tc.during != nil {
				tc.during(e, tc.engine)
			}
			e.wait(methodStatus, `"state":"`+tc.state+`"`)
			sts := e.statuses()
			for i, s := range sts {
				if last := i == len(sts)-1; (s.State == stateRunning) == last {
					t.Errorf("status %d of %d = %q: want running ones, then one final", i+1, len(sts), s.State)
				}
			}
			if final := sts[len(sts)-1]; !strings.Contains(final.Reason, tc.reason) || len([]rune(final.Message)) > maxStatusMessage || strings.Contains(final.Message, "\n") {
				t.Errorf("final status = %+v, want reason containing %q and a one-line message of at most %d characters", final, tc.reason, maxStatusMessage)
			}
			if tc.state == stateNotApplied && len(e.sent("workspace/applyEdit")) != 0 {
				t.Errorf("an edit was sent although it could not be applied")
			}
		})
	}
}

// TestPreviewSetting: "preview" is read from the same editor layers as
// the other settings, the folder's workspace/configuration first.
func TestPreviewSetting(t *testing.T) {
	tests := []struct {
		name                     string
		initOpts, pushed, folder string
		want                     string
	}{
		{name: "default", want: previewAlways},
		{name: "initializationOptions", initOpts: `{"preview":"never"}`, want: previewNever},
		{name: "didChangeConfiguration over initializationOptions", initOpts: `{"preview":"never"}`, pushed: `{"preview":"always"}`, want: previewAlways},
		{name: "the folder's configuration first", pushed: `{"preview":"always"}`, folder: `{"preview":"never"}`, want: previewNever},
		{name: "a layer without the key falls through", initOpts: `{"preview":"never"}`, folder: `{"model":"m"}`, want: previewNever},
		{name: "an unknown value shows the preview", folder: `{"preview":"sometimes"}`, want: previewAlways},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := New(nil)
			raw := func(v string) json.RawMessage {
				if v == "" {
					return nil
				}
				return json.RawMessage(v)
			}
			s.initOpts = raw(tc.initOpts)
			if tc.pushed != "" {
				s.settings[""] = raw(tc.pushed)
			}
			if tc.folder != "" {
				s.settings["/w"] = raw(tc.folder)
			}
			if got := s.previewFor("/w"); got != tc.want {
				t.Errorf("previewFor = %q, want %q", got, tc.want)
			}
		})
	}
}

// TestLogWhere: messages about the diff name where each client shows it.
func TestLogWhere(t *testing.T) {
	for client, want := range map[string]string{"Neovim": ":FixpointLog", "emacs": "M-x fixpoint-show-diff", "Visual Studio Code": "the fixpoint output log"} {
		s := New(nil)
		s.caps.client = client
		if got := s.commandName(logWhere); got != want {
			t.Errorf("commandName(logWhere) for %s = %q, want %q", client, got, want)
		}
	}
}

// TestOneNotificationPerOutcome: a client that declares
// experimental.fixpointOutcomes (the VS Code extension) shows each run's
// outcome from its final $/fixpoint/status, so the server sends no
// message of its own for an applied, declined or already-passing run;
// other clients still get the server's.
func TestOneNotificationPerOutcome(t *testing.T) {
	outcomesCaps := strings.Replace(vscodeCaps, `"window":{`, `"experimental":{"fixpointOutcomes":true},"window":{`, 1)
	passing := &fakeEngine{Result: agent.Result{Verified: true, StopReason: agent.StopAlreadyPassing, Final: &testrun.Report{Passed: 3}}}
	tests := []struct {
		name    string
		caps    string
		engine  *fakeEngine
		reject  bool
		state   string
		message string // the final status message (substring)
		server  string // the server's own message for the outcome (substring), "" when it must send none
	}{
		{name: "applied, extension", caps: outcomesCaps, engine: verifiedEngine(), state: stateApplied, message: "Applied: 1 file changed"},
		{name: "applied, other client", caps: vscodeCaps, engine: verifiedEngine(), state: stateApplied, message: "Applied", server: "fixpoint applied Fix until tests pass"},
		{name: "declined, extension", caps: outcomesCaps, engine: verifiedEngine(), reject: true, state: stateNotApplied, message: "you declined"},
		{name: "declined, other client", caps: vscodeCaps, engine: verifiedEngine(), reject: true, state: stateNotApplied, message: "you declined", server: "verified, not applied (declined)"},
		{name: "already passing, extension", caps: outcomesCaps, engine: passing, state: stateApplied, message: "Nothing to fix: the tests already pass"},
		{name: "already passing, other client", caps: vscodeCaps, engine: passing, state: stateApplied, message: "Nothing to fix", server: "fixpoint: nothing to fix: the tests already pass"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.engine.release = make(chan struct{})
			tc.engine.Report = &testrun.Report{Passed: 3}
			e := newFakeEditor(t, editorOptions{engine: tc.engine, files: map[string]string{"go.mod": "module w\n", "a.go": statusWorkspaceA}})
			e.applyOK = !tc.reject
			if tc.reject {
				e.answerApply = map[string]any{"applied": false}
			}
			e.initialize(tc.caps)
			e.wait("workspace/configuration", "")
			e.mustCall("workspace/executeCommand", map[string]any{"command": cmdFixTests, "arguments": []any{}})
			final := e.wait(methodStatus, `"state":"`+tc.state+`"`)
			if !strings.Contains(string(final), tc.message) {
				t.Errorf("final status %s, want message containing %q", final, tc.message)
			}
			// A second run in the folder queues behind the first until its
			// goroutine, messages included, is done: its final status
			// means every message of the first run was sent.
			e.mustCall("workspace/executeCommand", map[string]any{"command": cmdRunTests, "arguments": []any{}})
			e.wait(methodStatus, `"runId":"run-2","kind":"test","state":"applied"`)
			var msgs []string
			for _, m := range append(e.sent("window/showMessage"), e.sent("window/showMessageRequest")...) {
				msgs = append(msgs, string(m))
			}
			all := strings.Join(msgs, "\n")
			if tc.server == "" && len(msgs) > 0 {
				t.Errorf("the server sent its own outcome message to a client that shows outcomes:\n%s", all)
			}
			if tc.server != "" && !strings.Contains(all, tc.server) {
				t.Errorf("messages %q, want one containing %q", all, tc.server)
			}
		})
	}
}

// TestPluginPreviewAnsweredLater: the Neovim plugin keeps its preview open
// without blocking the editor (applyEdit answered "preview pending") and
// answers with fixpoint.answerEdit: accepted, the edit is sent again
// without confirm and lands; cancelled, the run ends declined; an answer
// for no waiting preview is an error.
func TestPluginPreviewAnsweredLater(t *testing.T) {
	const pluginCaps = `{"workspace":{"applyEdit":true,"workspaceEdit":{"documentChanges":true,"resourceOperations":["create","rename","delete"]}},"window":{"workDoneProgress":true},"experimental":{"fixpointPreview":true,"fixpointClient":"neovim"}}`
	for _, accept := range []bool{true, false} {
		t.Run(map[bool]string{true: "apply", false: "cancel"}[accept], func(t *testing.T) {
			e := newFakeEditor(t, editorOptions{engine: verifiedEngine(), files: map[string]string{"go.mod": "module w\n", "a.go": statusWorkspaceA}})
			e.applyAnswers = []map[string]any{{"applied": false, "failureReason": previewPending}, {"applied": true}}
			e.initialize(pluginCaps)
			e.mustCall("workspace/executeCommand", map[string]any{"command": cmdFixTests, "arguments": []any{}})
			e.wait("workspace/applyEdit", `"confirm":true`)
			// The server registers the pending preview before it sends the
			// edit, so the answer cannot arrive before it.
			e.mustCall("workspace/executeCommand", map[string]any{"command": cmdAnswerEdit, "arguments": []any{map[string]any{"runId": "run-1", "accept": accept}}})
			want := map[bool]string{true: stateApplied, false: stateNotApplied}[accept]
			final := e.wait(methodStatus, `"state":"`+want+`"`)
			edits := e.sent("workspace/applyEdit")
			if accept {
				if len(edits) != 2 || !strings.Contains(string(edits[1]), `"confirm":false`) {
					t.Errorf("applyEdits %s, want the edit sent again without confirm", edits)
				}
			} else if len(edits) != 1 || !strings.Contains(string(final), `"reason":"declined"`) {
				t.Errorf("applyEdits %d, final %s: want one edit and a declined run", len(edits), final)
			}
			if _, err := e.call("workspace/executeCommand", map[string]any{"command": cmdAnswerEdit, "arguments": []any{map[string]any{"runId": "run-1", "accept": true}}}); err == nil || !strings.Contains(err.Error(), "waits for an answer") {
				t.Errorf("a second answer: err = %v, want none waiting", err)
			}
		})
	}
}

// slowSetupEngine is a fake engine whose Run Tests first prepares its
// sandbox for "minutes": it reports each line, then waits until the test
// has seen it reach the editor before it goes on.
type slowSetupEngine struct {
	*fakeEngine
	lines []string
	next  chan struct{}
}

func (f *slowSetupEngine) TestProgress(ctx context.Context, root string, overlays map[string][]byte, progress func(string)) (*testrun.Report, error) {
	for _, l := range f.lines {
		progress(l)
		select {
		case <-f.next:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return f.fakeEngine.Test(ctx, root, overlays)
}

// TestRunTestsReportsLongSetup: while a first Run Tests prepares the
// sandbox (Go's standard library compiled: minutes), each phase and
// elapsed-time tick reaches the editor as the run's $/progress report and
// running $/fixpoint/status, in every editor that shows either.
func TestRunTestsReportsLongSetup(t *testing.T) {
	eng := &slowSetupEngine{
		fakeEngine: &fakeEngine{release: make(chan struct{}), Report: &testrun.Report{Passed: 2}},
		lines: []string{
			"compiling the Go standard library into the build cache (once)",
			"compiling the Go standard library into the build cache (once), 5 s",
			"compiling the Go standard library into the build cache (once), 10 s",
		},
		next: make(chan struct{}),
	}
	opts := &Options{NewEngine: func(context.Context, *config.Config, string, Hooks) (Engine, error) { return eng, nil }}
	e := newFakeEditor(t, editorOptions{server: opts, files: map[string]string{"go.mod": "module w\n", "a.go": statusWorkspaceA}})
	e.initialize(`{"workspace":{"applyEdit":true},"window":{"workDoneProgress":true}}`)
	e.mustCall("workspace/executeCommand", map[string]any{"command": cmdRunTests, "arguments": []any{}})
	for _, l := range eng.lines {
		quoted, _ := json.Marshal(l)
		// The status goes out before the progress report (wait scans forward).
		e.wait(methodStatus, `"message":`+string(quoted))
		e.wait("$/progress", `"message":`+string(quoted))
		eng.next <- struct{}{}
	}
	e.wait(methodStatus, `"state":"applied"`)
}

// TestOneLineKeepsElapsed: a long setup phase's message is clipped in its
// middle, so that its elapsed-time tick, the part that changes, stays.
func TestOneLineKeepsElapsed(t *testing.T) {
	msg := "compiling the Go standard library into the project's build cache (once) · 125 s"
	got := oneLine(msg, 60)
	if !strings.HasSuffix(got, "… · 125 s") || len([]rune(got)) != 60 {
		t.Errorf("oneLine = %q (%d runes), want 60 runes ending in the tick", got, len([]rune(got)))
	}
	if got := oneLine("short · 5 s", 60); got != "short · 5 s" {
		t.Errorf("oneLine of a short message = %q", got)
	}
}

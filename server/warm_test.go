package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/host"
)

// recBackend is the real "none" backend with its sessions numbered and
// recorded: "start 1", "run 1", "close 1", and "install KEY" for the
// setup phase (the none backend has none of its own: recording the key
// shows when a setup ran and for which inputs; nothing is installed).
type recBackend struct {
	inner sandbox.Backend
	fail  error // when set, Start fails with it
	mu    sync.Mutex
	cond  *sync.Cond // broadcast on every event
	n     int
	log   []string
}

func newRecBackend(t *testing.T) *recBackend {
	b, err := host.New(&host.Options{Warn: new(strings.Builder)})
	if err != nil {
		t.Fatal(err)
	}
	r := &recBackend{inner: b}
	r.cond = sync.NewCond(&r.mu)
	return r
}

func (b *recBackend) record(ev string) {
	b.mu.Lock()
	b.log = append(b.log, ev)
	b.cond.Broadcast()
	b.mu.Unlock()
}

func (b *recBackend) events() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return slices.Clone(b.log)
}

// await returns once the event ev was recorded (at any time so far); it
// fails the test when ev has not come after a minute.
func (b *recBackend) await(t *testing.T, ev string) {
	t.Helper()
	expired := false
	timer := time.AfterFunc(time.Minute, func() {
		b.mu.Lock()
		expired = true
		b.cond.Broadcast()
		b.mu.Unlock()
	})
	defer timer.Stop()
	b.mu.Lock()
	defer b.mu.Unlock()
	for !slices.Contains(b.log, ev) {
		if expired {
			t.Fatalf("backend event %q never came; events: %q", ev, b.log)
		}
		b.cond.Wait()
	}
}

func (b *recBackend) Name() string { return "none" }

func (b *recBackend) Start(ctx context.Context, spec sandbox.Spec) (sandbox.Session, error) {
	if b.fail != nil {
		b.record("start failed")
		return nil, b.fail
	}
	s, err := b.inner.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.n++
	id := b.n
	b.mu.Unlock()
	b.record(fmt.Sprintf("start %d", id))
	return &recSession{Session: s, b: b, id: id}, nil
}

func (b *recBackend) Install(ctx context.Context, spec sandbox.InstallSpec) (*sandbox.InstallResult, error) {
	b.record("install " + spec.Key)
	return &sandbox.InstallResult{}, nil
}

type recSession struct {
	sandbox.Session
	b    *recBackend
	id   int
	once sync.Once
}

func (s *recSession) Run(ctx context.Context, cmd sandbox.Command) (*sandbox.Result, error) {
	s.b.record(fmt.Sprintf("run %d", s.id))
	return s.Session.Run(ctx, cmd)
}

func (s *recSession) Close() error {
	err := s.Session.Close()
	s.once.Do(func() { s.b.record(fmt.Sprintf("close %d", s.id)) })
	return err
}

// installs lists the setup keys recorded so far.
func installs(events []string) []string {
	var keys []string
	for _, ev := range events {
		if k, ok := strings.CutPrefix(ev, "install "); ok {
			keys = append(keys, k)
		}
	}
	return keys
}

// firstRun returns the session that ran the first command, 0 for none.
func firstRun(events []string) int {
	for _, ev := range events {
		var id int
		if _, err := fmt.Sscanf(ev, "run %d", &id); err == nil {
			return id
		}
	}
	return 0
}

// warmEditor starts a server with prewarming on, the real agent engine
// and b, on the calc project (add is wrong on disk) with a requirements
// file, so that the project has a setup phase, in a trusted folder, with
// the user file's [server] section set to server.
func warmEditor(t *testing.T, b *recBackend, server string) *fakeEditor {
	t.Helper()
	return warmEditorUser(t, b, server, "")
}

// warmEditorUser is warmEditor with a [server] section in the workspace's
// .fixpoint.toml too (project; "" = none), which the user trusted: [server]
// is a user-only key.
func warmEditorUser(t *testing.T, b *recBackend, server, project string) *fakeEditor {
	t.Helper()
	e, _ := warmEditorTrust(t, b, server, project, true)
	return e
}

// warmEditorTrust is warmEditorUser with the folder trusted or not; it
// also returns the server's trust store.
func warmEditorTrust(t *testing.T, b *recBackend, server, project string, trusted bool) (*fakeEditor, config.TrustStore) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatalf("python3 is needed to run the calc project's tests: %v", err)
	}
	root := calcProject(t, false, "")
	data := t.TempDir()
	env := map[string]string{"FIXPOINT_DATA_DIR": data, "HOME": data}
	user := filepath.Join(t.TempDir(), "config.toml")
	if err := os.WriteFile(user, []byte("[server]\n"+server+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	toml := "test_cmd = \"python3 -m unittest -v\"\n"
	if project != "" {
		toml += "[server]\n" + project + "\n"
	}
	if err := os.WriteFile(filepath.Join(root, config.ProjectFile), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	trust := config.TrustStore{Dir: t.TempDir()}
	if trusted {
		if _, err := trust.TrustConfig(root); err != nil {
			t.Fatal(err)
		}
	}
	return newFakeEditor(t, editorOptions{root: root,
		files: map[string]string{"requirements.txt": "# nothing yet\n"},
		server: &Options{
			Prewarm:    true,
			UserConfig: user,
			TrustDir:   trust.Dir,
			Getenv:     func(k string) string { return env[k] },
			NewEngine: func(ctx context.Context, cfg *config.Config, root string, h Hooks) (Engine, error) {
				return agent.New(cfg, &agent.Options{Backend: b, Warn: h.Warn}), nil
			},
		}}), trust
}

// openText opens rel in the editor with text that is not on disk.
func (e *fakeEditor) openText(rel, text string) {
	e.t.Helper()
	e.notify("textDocument/didOpen", map[string]any{"textDocument": map[string]any{
		"uri": e.uri(rel), "languageId": "python", "version": 1, "text": text}})
}

// warmCaps are VS Code's capabilities without work-done progress: the
// prewarm's progress then goes to window/logMessage. A server request
// (workDoneProgress/create) crossing a client request on the unbuffered
// in-memory pipe of these tests would block both sides; real transports
// are buffered.
var warmCaps = strings.Replace(vscodeCaps, `"workDoneProgress":true`, `"workDoneProgress":false`, 1)

const fixedCalc = "def add(a, b):\n    return a + b\n"

// TestPrewarmStartsSessionBeforeFirstAction: after initialized the
// server starts the folder's sandbox session and its setup phase before
// the client asks for anything; the first action runs its tests in that
// session, re-synced to the unsaved buffer (the fix exists only there, so
// the tests pass only if the warm tree was updated); after the run the
// folder is warmed again.
func TestPrewarmStartsSessionBeforeFirstAction(t *testing.T) {
	b := newRecBackend(t)
	e := warmEditor(t, b, `idle_timeout = "1h"`)
	e.initialize(warmCaps)
	b.await(t, "start 1")
	e.wait("window/logMessage", "Sandbox ready")
	before := b.events()
	if got := installs(before); len(got) != 1 {
		t.Fatalf("setup phases before the first action = %q, want 1 (events %q)", got, before)
	}
	if firstRun(before) != 0 {
		t.Fatalf("a command ran before any action: %q", before)
	}

	e.openText("calc.py", fixedCalc)
	e.mustCall("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": e.uri("calc.py")},
		"range":   map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 0, "character": 0}},
		"context": map[string]any{"diagnostics": []any{}}})
	e.mustCall("workspace/executeCommand", map[string]any{"command": cmdRunTests})
	final := e.wait(methodStatus, `"kind":"test","state":"applied"`)
	if !strings.Contains(string(final), "Tests pass") {
		t.Errorf("final status = %s, want the tests to pass on the unsaved fix", final)
	}
	b.await(t, "close 1")
	b.await(t, "start 2") // warmed again for the next action
	events := b.events()
	if got := firstRun(events); got != 1 {
		t.Errorf("the tests ran in session %d, want 1, the prewarmed one (events %q)", got, events)
	}
	if got := installs(events); len(got) != 2 || got[0] != got[1] {
		t.Errorf("setup keys = %q, want the same inputs prepared twice (the cache makes the second free)", got)
	}
}

// TestPrewarmChangedManifestForcesNewSetup: an unsaved edit of a
// requirements file after the prewarm makes the first action drop the
// warm session and run the setup phase again for the new inputs.
func TestPrewarmChangedManifestForcesNewSetup(t *testing.T) {
	b := newRecBackend(t)
	e := warmEditor(t, b, `idle_timeout = "1h"`)
	e.initialize(warmCaps)
	e.wait("window/logMessage", "Sandbox ready")
	e.openText("requirements.txt", "# now with a dependency\n")
	e.mustCall("workspace/executeCommand", map[string]any{"command": cmdRunTests})
	e.wait(methodStatus, `"kind":"test","state":"tests-failing"`)
	events := b.events()
	keys := installs(events)
	if len(keys) < 2 || keys[0] == keys[1] {
		t.Fatalf("setup keys = %q, want a second setup with other inputs (events %q)", keys, events)
	}
	if got := firstRun(events); got != 2 {
		t.Errorf("the tests ran in session %d, want 2, the one set up for the edited manifest (events %q)", got, events)
	}
	if i, j := slices.Index(events, "close 1"), slices.Index(events, "run 2"); i < 0 || i > j {
		t.Errorf("the stale warm session was not closed before the tests ran: %q", events)
	}
}

// TestPrewarmIdleTimeout: a warm session nobody uses is stopped after
// [server] idle_timeout, the client is told, and the next code action
// request warms the folder again.
func TestPrewarmIdleTimeout(t *testing.T) {
	b := newRecBackend(t)
	e := warmEditor(t, b, `idle_timeout = "1ms"`)
	e.initialize(warmCaps)
	b.await(t, "start 1")
	b.await(t, "close 1")
	e.wait("window/logMessage", "stopped the idle sandbox")
	e.mustCall("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": e.uri("calc.py")},
		"range":   map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 0, "character": 0}},
		"context": map[string]any{"diagnostics": []any{}}})
	b.await(t, "start 2")
	if got := firstRun(b.events()); got != 0 {
		t.Errorf("a command ran in session %d without any action", got)
	}
}

// TestPrewarmOff: idle_timeout "0s" turns prewarming off: the first
// action starts the only session, and no setup progress is shown before.
// Set in the user file, it holds even where the workspace's own
// (trusted) .fixpoint.toml says otherwise.
func TestPrewarmOff(t *testing.T) {
	tests := []struct {
		name, user, project string
	}{
		{name: "user file", user: `idle_timeout = "0s"`},
		{name: "user file over the workspace file", user: `idle_timeout = "0s"`, project: `idle_timeout = "1h"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { testPrewarmOff(t, tt.user, tt.project) })
	}
}

func testPrewarmOff(t *testing.T, user, project string) {
	b := newRecBackend(t)
	e := warmEditorUser(t, b, user, project)
	e.initialize(warmCaps)
	e.wait("workspace/configuration", "")
	e.mustCall("workspace/executeCommand", map[string]any{"command": cmdRunTests})
	e.wait(methodStatus, `"kind":"test","state":"tests-failing"`)
	events := b.events()
	starts := 0
	for _, ev := range events {
		if strings.HasPrefix(ev, "start ") {
			starts++
		}
	}
	if firstRun(events) != 1 || starts != 1 {
		t.Errorf("events = %q, want one session, the run's own", events)
	}
	if strings.Contains(e.transcript(), "preparing the sandbox") {
		t.Errorf("a prewarm progress was shown with idle_timeout 0s:\n%s", e.transcript())
	}
}

// TestPrewarmShutdownRemovesSession: shutdown and exit close the warm
// session nobody used, as they close a run's.
func TestPrewarmShutdownRemovesSession(t *testing.T) {
	b := newRecBackend(t)
	e := warmEditor(t, b, `idle_timeout = "1h"`)
	e.initialize(warmCaps)
	e.wait("window/logMessage", "Sandbox ready")
	e.mustCall("shutdown", nil)
	e.notify("exit", nil)
	if err := <-e.serveCh; err != nil {
		t.Fatalf("Serve after shutdown and exit = %v, want nil", err)
	}
	e.serveCh <- nil // for the cleanup
	if events := b.events(); !slices.Contains(events, "close 1") {
		t.Errorf("the warm session outlived the server: %q", events)
	}
}

// TestPrewarmFailureReportedOnce: a prewarm that cannot start the sandbox
// is logged once as a warning; the action that follows starts the
// sandbox itself and reports the error in full; the same failure when the
// folder is warmed again after the run is not logged again.
func TestPrewarmFailureReportedOnce(t *testing.T) {
	b := newRecBackend(t)
	b.fail = errors.New("sandbox backend unavailable: no engine answers")
	e := warmEditor(t, b, `idle_timeout = "1h"`)
	e.initialize(warmCaps)
	e.wait("window/logMessage", "could not prepare the sandbox")
	e.wait("window/logMessage", "preparing the sandbox: Not prepared")
	e.mustCall("workspace/executeCommand", map[string]any{"command": cmdRunTests})
	e.wait("window/showMessage", "no engine answers")
	e.wait(methodStatus, `"state":"failed"`)
	// Warmed again after the run: a warning would come before this end.
	e.wait("window/logMessage", "preparing the sandbox: Not prepared")
	if n := strings.Count(e.transcript(), "could not prepare the sandbox"); n != 1 {
		t.Errorf("the prewarm failure was logged %d times, want once:\n%s", n, e.transcript())
	}
}

// TestUntrustedFolderNotPrepared: a folder the user has not trusted (no
// record, no workspaceTrusted from the editor) starts no sandbox when it
// opens, and the client is told why; the first action asks; "Not now"
// ends the run with nothing started; "Trust" records the folder and the
// run goes on, after which the folder is prewarmed like any other.
func TestUntrustedFolderNotPrepared(t *testing.T) {
	b := newRecBackend(t)
	e, store := warmEditorTrust(t, b, `idle_timeout = "1h"`, "", false)
	e.initialize(warmCaps)
	e.wait("window/logMessage", "is not a trusted folder")
	e.mustCall("textDocument/codeAction", map[string]any{"textDocument": map[string]any{"uri": e.uri("calc.py")},
		"range":   map[string]any{"start": map[string]any{"line": 0, "character": 0}, "end": map[string]any{"line": 0, "character": 0}},
		"context": map[string]any{"diagnostics": []any{}}})

	if ev := b.events(); len(ev) != 0 {
		t.Fatalf("sandbox events in an untrusted folder before any answer: %q", ev)
	}

	e.mu.Lock()
	e.answer = json.RawMessage(`{"title":"Not now"}`)
	e.mu.Unlock()
	if _, err := e.call("workspace/executeCommand", map[string]any{"command": cmdRunTests}); err != nil {
		t.Fatalf("executeCommand: %v\n%s", err, e.transcript())
	}
	e.wait("window/showMessageRequest", "trust the folder")
	e.wait(methodStatus, `"state":"failed"`)
	if ev := b.events(); len(ev) != 0 {
		t.Fatalf("sandbox events after Not now: %q", ev)
	}
	if rec, _ := store.Lookup(e.root); rec != nil {
		t.Fatalf("Not now wrote a trust record: %+v", rec)
	}

	e.mu.Lock()
	e.answer = json.RawMessage(`{"title":"Trust"}`)
	e.mu.Unlock()
	e.mustCall("workspace/executeCommand", map[string]any{"command": cmdRunTests})
	e.wait(methodStatus, `"kind":"test","state":"tests-failing"`)
	rec, err := store.Lookup(e.root)
	if err != nil || rec == nil || rec.ConfigSHA256 != "" {
		t.Fatalf("trust record after Trust = %+v, %v; want folder trust only", rec, err)
	}
	b.await(t, "start 2") // trusted now: warmed for the next action
}

// TestEditorWorkspaceTrust: initializationOptions.workspaceTrusted (the
// VS Code extension sends it; VS Code runs it only in trusted workspaces)
// trusts the folders for the connection: prewarmed with no record and no
// question. The same flag from workspace/configuration does not count.
func TestEditorWorkspaceTrust(t *testing.T) {
	for _, tt := range []struct {
		name    string
		initOpt string
		want    bool
	}{
		{name: "initializationOptions", initOpt: `{"workspaceTrusted":true}`, want: true},
		{name: "not sent", initOpt: `{"model":"x"}`, want: false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			b := newRecBackend(t)
			e, store := warmEditorTrust(t, b, `idle_timeout = "1h"`, "", false)
			e.mu.Lock()
			e.settings = json.RawMessage(`{"workspaceTrusted":true}`)
			e.mu.Unlock()
			e.mustCall("initialize", json.RawMessage(e.expand(`{"processId":1,"rootUri":"$ROOT","capabilities":`+warmCaps+
				`,"initializationOptions":`+tt.initOpt+`,"workspaceFolders":[{"uri":"$ROOT","name":"ws"}]}`)))
			e.notify("initialized", map[string]any{})
			if tt.want {
				e.wait("window/logMessage", "Sandbox ready")
				if ev := b.events(); !slices.Contains(ev, "start 1") {
					t.Errorf("events = %q, want a prewarmed session", ev)
				}
			} else {
				e.wait("window/logMessage", "is not a trusted folder")
				if ev := b.events(); len(ev) != 0 {
					t.Errorf("events = %q, want none in an untrusted folder", ev)
				}
			}
			if rec, _ := store.Lookup(e.root); rec != nil {
				t.Errorf("a trust record was written: %+v", rec)
			}
		})
	}
}

// TestFinalStatusStaysThroughPrewarm: the first prewarm is shown as a
// work-done progress, but once a run has sent its final status
// ("tests-failing"), preparing the next sandbox creates no progress a
// client would paint over it: it goes to the log, and the last status the
// client holds is still the run's final one.
func TestFinalStatusStaysThroughPrewarm(t *testing.T) {
	b := newRecBackend(t)
	e := warmEditor(t, b, `idle_timeout = "1h"`)
	e.initialize(vscodeCaps)
	e.wait("$/progress", `"message":"Sandbox ready"`) // the first prewarm: shown
	if !strings.Contains(e.transcript(), "fixpoint/prewarm-1") {
		t.Fatalf("the first prewarm had no work-done progress:\n%s", e.transcript())
	}
	e.mustCall("workspace/executeCommand", map[string]any{"command": cmdRunTests})
	e.wait(methodStatus, `"kind":"test","state":"tests-failing"`)
	b.await(t, "start 2")                                               // warmed again after the run
	e.wait("window/logMessage", "preparing the sandbox: Sandbox ready") // to the log only
	tr := e.transcript()
	if strings.Contains(tr, "fixpoint/prewarm-2") {
		t.Errorf("the prewarm after the run created a work-done progress over the final status:\n%s", tr)
	}
	st := e.statuses()
	if last := st[len(st)-1]; last.State != stateTestsFail || last.Failing != 1 {
		t.Errorf("last status = %+v, want the run's tests-failing with 1 failing", last)
	}
}

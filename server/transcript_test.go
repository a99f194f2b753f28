package server

import (
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"
)

var update = flag.Bool("update", false, "rewrite the transcript sections of testdata/lsp/*.txtar")

// vscodeCaps is the part of VS Code's initialize capabilities the server
// reads (the full set is exercised by tests/lsp-vscode).
const vscodeCaps = `{"workspace":{"applyEdit":true,"configuration":true,"workspaceFolders":true,"workspaceEdit":{"documentChanges":true,"resourceOperations":["create","rename","delete"],"failureHandling":"textOnlyTransactional","changeAnnotationSupport":{"groupsOnLabel":true}}},"window":{"workDoneProgress":true,"showMessage":{"messageActionItem":{"additionalPropertiesSupport":true}},"showDocument":{"support":true}},"textDocument":{"codeAction":{"codeActionLiteralSupport":{"codeActionKind":{"valueSet":["","quickfix","refactor","refactor.rewrite","source"]}},"isPreferredSupport":true}}}`

// TestTranscripts runs each testdata/lsp/*.txtar: files under
// "workspace/" form the workspace, "engine" scripts the fake engine,
// "script" drives the fake editor, and "transcript" is the golden wire
// log (rewritten with -update).
func TestTranscripts(t *testing.T) {
	files, _ := filepath.Glob("testdata/lsp/*.txtar")
	if len(files) == 0 {
		t.Fatal("no transcripts in testdata/lsp")
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".txtar"), func(t *testing.T) {
			data, err := os.ReadFile(file)
			if err != nil {
				t.Fatal(err)
			}
			ar := txtar.Parse(data)
			ws := map[string]string{}
			for _, f := range ar.Files {
				if rel, ok := strings.CutPrefix(f.Name, "workspace/"); ok {
					ws[rel] = string(f.Data)
				}
			}
			eng := &fakeEngine{release: make(chan struct{})}
			if spec, ok := section(ar, "engine"); ok {
				if err := json.Unmarshal([]byte(spec), eng); err != nil {
					t.Fatalf("engine section: %v", err)
				}
			}
			e := newFakeEditor(t, editorOptions{engine: eng, files: ws})
			script, _ := section(ar, "script")
			var notes []string
			for n, line := range strings.Split(script, "\n") {
				line = strings.TrimSpace(line)
				if line == "" || strings.HasPrefix(line, "#") {
					continue
				}
				if note := e.step(eng, line); note != "" {
					notes = append(notes, note)
				}
				if t.Failed() {
					t.Fatalf("script line %d: %s", n+1, line)
				}
			}
			got := e.transcript()
			if len(notes) > 0 {
				got += "## " + strings.Join(notes, "\n## ") + "\n"
			}
			checkTranscript(t, got)
			want, _ := section(ar, "transcript")
			if *update {
				setSection(ar, "transcript", got)
				if err := os.WriteFile(file, txtar.Format(ar), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != want {
				t.Errorf("transcript differs (run with -update to accept):\n--- got ---\n%s--- want ---\n%s", got, want)
			}
		})
	}
}

// checkTranscript holds what every transcript must show, independently of
// the golden (which -update rewrites): each request, either way, is
// answered exactly once and no response answers nothing; a progress token
// begins before it reports and ends at most once, and nothing follows its
// end; shutdown then exit ends Serve with nil.
func checkTranscript(t *testing.T, transcript string) {
	t.Helper()
	type msg struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
		Params struct {
			Token json.RawMessage `json:"token"`
			Value struct {
				Kind string `json:"kind"`
			} `json:"value"`
		} `json:"params"`
	}
	pending := map[string]string{}  // direction+id -> method of a request awaiting its answer
	progress := map[string]string{} // token -> last kind
	for _, line := range strings.Split(transcript, "\n") {
		dir, body, ok := strings.Cut(line, " ")
		if !ok || (dir != "->" && dir != "<-") {
			if note, ok := strings.CutPrefix(line, "## serve returned "); ok && note != "nil" {
				t.Errorf("Serve after shutdown and exit returned %s, want nil", note)
			}
			continue
		}
		var m msg
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Errorf("transcript line is not a JSON-RPC message: %s", line)
			continue
		}
		switch {
		case m.Method != "" && len(m.ID) > 0: // a request, answered from the other side
			key := dir + string(m.ID)
			if _, dup := pending[key]; dup {
				t.Errorf("request id %s (%s) reused before its answer", m.ID, m.Method)
			}
			pending[key] = m.Method
		case m.Method == "" && len(m.ID) > 0: // a response to a request from the other side
			other := map[string]string{"->": "<-", "<-": "->"}[dir]
			if _, ok := pending[other+string(m.ID)]; !ok {
				t.Errorf("response to id %s that no request is waiting for: %s", m.ID, line)
			}
			delete(pending, other+string(m.ID))
		case m.Method == "$/progress":
			token, kind := string(m.Params.Token), m.Params.Value.Kind
			last, seen := progress[token]
			if (kind == "begin") == seen || last == "end" {
				t.Errorf("progress %s: %q after %q", token, kind, last)
			}
			progress[token] = kind
		}
	}
	for key, method := range pending {
		if strings.HasPrefix(key, "->") { // the fake editor's calls block until answered
			t.Errorf("client request %s (%s) never answered", key[2:], method)
		}
	}
}

// step runs one script line and returns a note for the transcript.
func (e *fakeEditor) step(eng *fakeEngine, line string) string {
	t := e.t
	t.Helper()
	verb, rest, _ := strings.Cut(line, " ")
	rest = e.expand(strings.TrimSpace(rest))
	switch verb {
	case "initialize":
		caps := rest
		if caps == "" {
			caps = vscodeCaps
		}
		e.initialize(caps)
		if strings.Contains(caps, `"configuration":true`) {
			e.wait("workspace/configuration", "")
		}
	case "open":
		rel, v, _ := strings.Cut(rest, " ")
		version := 1
		if v != "" {
			version, _ = strconv.Atoi(v)
		}
		e.open(rel, version)
	case "change": // change REL VERSION [changes]
		parts := strings.SplitN(rest, " ", 3)
		version, _ := strconv.Atoi(parts[1])
		e.notify("textDocument/didChange", json.RawMessage(`{"textDocument":{"uri":"`+e.uri(parts[0])+`","version":`+strconv.Itoa(version)+`},"contentChanges":`+parts[2]+`}`))
	case "call":
		method, params, _ := strings.Cut(rest, " ")
		_, _ = e.call(method, json.RawMessage(orEmpty(params)))
	case "notify":
		method, params, _ := strings.Cut(rest, " ")
		e.notify(method, json.RawMessage(orEmpty(params)))
	case "wait":
		method, substr, _ := strings.Cut(rest, " ")
		e.wait(method, substr)
	case "answer":
		e.mu.Lock()
		e.answer = json.RawMessage(rest)
		e.mu.Unlock()
	case "reject-edits":
		e.mu.Lock()
		e.applyOK = false
		e.mu.Unlock()
	case "sync": // a request round trip: the server has handled everything sent before
		_, _ = e.call("textDocument/codeAction", json.RawMessage(`{"textDocument":{"uri":"untitled:sync"},"range":{"start":{"line":0,"character":0},"end":{"line":0,"character":0}},"context":{"diagnostics":[],"only":["none"]}}`))
	case "release":
		eng.Release()
	case "engine-request":
		eng.mu.Lock()
		defer eng.mu.Unlock()
		if len(eng.requests) == 0 {
			t.Errorf("engine-request: the engine got no request")
			return ""
		}
		r := eng.requests[len(eng.requests)-1]
		keys := make([]string, 0, len(r.Overlays))
		for k := range r.Overlays {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b, _ := json.Marshal(map[string]any{"mode": r.Mode, "goal": r.Goal, "root": strings.ReplaceAll(r.Root, e.root, "$ROOT"),
			"overlays": keys, "focus": r.Focus, "goalComment": r.GoalComment})
		return "engine request " + string(b)
	case "engine-cancels":
		eng.mu.Lock()
		defer eng.mu.Unlock()
		return "engine cancels " + strconv.Itoa(eng.cancels)
	case "shutdown":
		e.mustCall("shutdown", nil)
		e.notify("exit", nil)
		err := <-e.serveCh
		e.serveCh <- err
		return "serve returned " + errString(err)
	default:
		t.Errorf("unknown script verb %q", verb)
	}
	return ""
}

func orEmpty(s string) string {
	if s == "" {
		return "{}"
	}
	return s
}

func errString(err error) string {
	if err == nil {
		return "nil"
	}
	return err.Error()
}

// section returns the text of the first section called name.
func section(a *txtar.Archive, name string) (string, bool) {
	for _, f := range a.Files {
		if f.Name == name {
			return string(f.Data), true
		}
	}
	return "", false
}

// setSection replaces the first section called name, or appends it.
func setSection(a *txtar.Archive, name, data string) {
	for i := range a.Files {
		if a.Files[i].Name == name {
			a.Files[i].Data = []byte(data)
			return
		}
	}
	a.Files = append(a.Files, txtar.File{Name: name, Data: []byte(data)})
}

// TestArchiveSections: -update rewrites only the section it is given and
// the archive otherwise round-trips byte for byte.
func TestArchiveSections(t *testing.T) {
	in := "comment\n-- a --\nx\n-- b --\ny\n"
	a := txtar.Parse([]byte(in))
	if got := string(txtar.Format(a)); got != in {
		t.Errorf("Format(Parse(%q)) = %q", in, got)
	}
	if d, ok := section(a, "b"); !ok || d != "y\n" {
		t.Errorf(`section(b) = %q, %v; want "y\n", true`, d, ok)
	}
	setSection(a, "b", "z\n")
	setSection(a, "c", "w\n")
	if got, want := string(txtar.Format(a)), "comment\n-- a --\nx\n-- b --\nz\n-- c --\nw\n"; got != want {
		t.Errorf("after setSection: %q, want %q", got, want)
	}
}

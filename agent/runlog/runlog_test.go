package runlog

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestWriteListRead(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs")
	redact := func(s string) string { return strings.ReplaceAll(s, "sk-secret", "sk-***") }
	for i, id := range []string{"20260101-000000-aaaaaa", "20260102-000000-bbbbbb"} {
		w, err := Create(dir, id, &Options{Redact: redact})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(KindStart, 0, Start{RunID: id, Mode: "fix", Root: "/ws", Time: time.Date(2026, 1, 1+i, 0, 0, 0, 0, time.UTC)})
		w.Write(KindPrompt, 1, map[string]string{"content": "key sk-secret here"})
		w.Write(KindIteration, 1, map[string]int{"n": 1})
		if i == 1 {
			w.Write(KindResult, 0, map[string]any{"verified": true, "stop_reason": "verified"})
		}
		w.Close()
	}
	runs, err := List(dir)
	if err != nil || len(runs) != 2 {
		t.Fatalf("List = %v, %v", runs, err)
	}
	if runs[0].RunID != "20260102-000000-bbbbbb" || !runs[0].Verified || runs[0].Iterations != 1 {
		t.Errorf("newest run = %+v, want verified bbbbbb with 1 iteration", runs[0])
	}
	if runs[1].StopReason != "" {
		t.Errorf("unfinished run has StopReason %q", runs[1].StopReason)
	}
	id, entries, err := Read(dir, "20260101")
	if err != nil || id != "20260101-000000-aaaaaa" || len(entries) != 3 {
		t.Fatalf("Read(prefix) = %q, %d entries, %v", id, len(entries), err)
	}
	if strings.Contains(string(entries[1].Data), "sk-secret") || !strings.Contains(string(entries[1].Data), "sk-***") {
		t.Errorf("prompt not redacted: %s", entries[1].Data)
	}
	if _, _, err := Read(dir, "2026"); !errors.Is(err, ErrNotFound) || !strings.Contains(err.Error(), "2 runs") {
		t.Errorf("Read(ambiguous) = %v", err)
	}
	if _, _, err := Read(dir, "../x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Read(../x) = %v, want ErrNotFound", err)
	}
	if runs, err := List(filepath.Join(dir, "missing")); err != nil || runs != nil {
		t.Errorf("List(missing) = %v, %v", runs, err)
	}
	if _, err := Create(dir, "20260101-000000-aaaaaa", nil); err == nil {
		t.Error("Create reused an existing log")
	}
	os.WriteFile(filepath.Join(dir, "junk.jsonl"), []byte("not json\n"), 0o600)
	if runs, _ := List(dir); len(runs) != 3 {
		t.Errorf("List with a junk log = %d runs, want 3 (junk lines skipped)", len(runs))
	}
}

// TestWriterModesAndDecodedRedaction: a log is 0600 in a 0700 directory
// (an existing looser directory is tightened), and the redactor sees
// strings as the program had them, not JSON-escaped: a secret with a quote
// or a newline is still found.
func TestWriterModesAndDecodedRedaction(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "runs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	secret := "pa\"ss\nw<o>rd&1"
	w, err := Create(dir, "20260101-000000-cccccc", &Options{Redact: func(s string) string { return strings.ReplaceAll(s, secret, "[MASKED]") }})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(KindPrompt, 1, map[string]any{"content": "x " + secret + " y", secret: int64(12345678901234567)}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	for p, want := range map[string]os.FileMode{dir: 0o700, w.Path(): 0o600} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("mode of %s = %o, want %o", p, st.Mode().Perm(), want)
		}
	}
	b, _ := os.ReadFile(w.Path())
	if strings.Contains(string(b), "w\\u003co\\u003erd") || strings.Contains(string(b), `pa\"ss`) || !strings.Contains(string(b), `"content":"x [MASKED] y"`) || !strings.Contains(string(b), `"[MASKED]":12345678901234567`) {
		t.Errorf("log = %s, want the secret masked in keys and values and numbers kept", b)
	}
}

package runlog

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRunLogCap: a huge reply is logged clipped with a marker; past
// MaxBytes one truncation entry is written and later entries are dropped,
// except the result, so the file stays bounded and history still reads
// the run's end.
func TestRunLogCap(t *testing.T) {
	dir := t.TempDir()
	const maxBytes, maxString = 16 << 10, 1 << 10
	w, err := Create(dir, "r1", &Options{MaxBytes: maxBytes, MaxString: maxString, Redact: func(s string) string {
		return strings.ReplaceAll(s, "SECRET", "******")
	}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(KindStart, 0, Start{RunID: "r1", Mode: "fix", Root: "/w"}); err != nil {
		t.Fatal(err)
	}
	// The secret straddles the clip point: masked before it is cut.
	reply := strings.Repeat("é", maxString/2-2) + "SECRET" + strings.Repeat("x", 50<<10)
	if err := w.Write(KindReply, 1, map[string]any{"content": reply}); err != nil {
		t.Fatal(err)
	}
	for i := range 200 {
		if err := w.Write(KindPrompt, 2, map[string]any{"content": strings.Repeat("p", 500), "n": i}); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Write(KindResult, 2, map[string]any{"verified": false, "stop_reason": "max iterations", "diff": strings.Repeat("d", 10<<10)}); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := os.Stat(filepath.Join(dir, "r1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	// The cap, one truncation line, and the result (its 10 KiB diff whole).
	if limit := int64(maxBytes + 512 + 10<<10 + 512); st.Size() > limit {
		t.Errorf("run log is %d bytes, want at most %d", st.Size(), limit)
	}
	_, entries, err := Read(dir, "r1")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, e := range entries {
		kinds[e.Kind]++
	}
	if kinds[KindTruncated] != 1 || kinds[KindResult] != 1 || kinds[KindPrompt] == 0 || kinds[KindPrompt] == 200 {
		t.Errorf("entries by kind = %v, want some prompts, one truncation marker and the result", kinds)
	}
	if last := entries[len(entries)-1]; last.Kind != KindResult {
		t.Errorf("last entry is %s, want the result", last.Kind)
	}
	var r struct{ Content string }
	for _, e := range entries {
		if e.Kind == KindReply {
			if err := json.Unmarshal(e.Data, &r); err != nil {
				t.Fatal(err)
			}
		}
	}
	if !strings.Contains(r.Content, "…[fixpoint: ") || !strings.Contains(r.Content, "more bytes not logged]") || len(r.Content) > maxString+64 {
		t.Errorf("the huge reply was logged as %d bytes, want it clipped to %d with a marker", len(r.Content), maxString)
	}
	if strings.Contains(r.Content, "SECR") || strings.Contains(r.Content, "\ufffd") {
		t.Errorf("clipping cut a secret before masking it, or a rune in two: %q", r.Content[len(r.Content)-80:])
	}
	if s := Summarize("r1", "", entries); s.StopReason != "max iterations" {
		t.Errorf("Summarize after truncation: stop reason %q, want the result's", s.StopReason)
	}
	var res struct{ Diff string }
	if err := json.Unmarshal(entries[len(entries)-1].Data, &res); err != nil || len(res.Diff) != 10<<10 {
		t.Errorf("the result's diff is %d bytes (%v), want it whole", len(res.Diff), err)
	}
}

// TestRunLogDefaultCap: with no options a multi-megabyte reply is logged
// at most DefaultMaxString long.
func TestRunLogDefaultCap(t *testing.T) {
	dir := t.TempDir()
	w, err := Create(dir, "r2", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(KindReply, 1, map[string]any{"content": strings.Repeat("a", 8<<20)}); err != nil {
		t.Fatal(err)
	}
	w.Close()
	st, _ := os.Stat(filepath.Join(dir, "r2.jsonl"))
	if st.Size() > DefaultMaxString+1024 {
		t.Errorf("an 8 MiB reply wrote a %d-byte log, want at most %d", st.Size(), DefaultMaxString+1024)
	}
}

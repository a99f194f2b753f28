package main

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/memory"
)

// memoryCLIEnv is a project with a remembered failure, and a runner for
// "fixpoint memory" against it.
type memoryCLIEnv struct {
	t          *testing.T
	data, root string
}

func newMemoryCLIEnv(t *testing.T) *memoryCLIEnv {
	t.Helper()
	e := &memoryCLIEnv{t: t, data: t.TempDir(), root: t.TempDir()}
	st, err := memory.Open(t.Context(), e.data, &memory.Options{Root: e.root})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	when := time.Date(2026, 3, 4, 12, 0, 0, 0, time.UTC)
	recs := []memory.Record{
		{ID: "aaaa11112222", Language: "python", TestID: "test_get_timeout", Created: when,
			Excerpt: "Traceback (most recent call last):\n  File \"/tmp/x/settings.py\", line 2, in get_timeout\nKeyError: 'timeout'\n",
			Goal:    "read the timeout from settings"},
		{ID: "bbbb33334444", Language: "go", Created: when.Add(time.Hour),
			Excerpt: "--- FAIL: TestRemember (0.00s)\npanic: assignment to entry in nil map\n"},
	}
	if _, err := st.AddBatch(t.Context(), recs); err != nil {
		t.Fatal(err)
	}
	if err := st.Resolve(t.Context(), []string{"aaaa11112222"}, "-d['timeout']\n+d.get('timeout', 30)", "use a default for optional settings"); err != nil {
		t.Fatal(err)
	}
	return e
}

func (e *memoryCLIEnv) run(stdin string, args ...string) (code int, stdout, stderr string) {
	e.t.Helper()
	var out, errb bytes.Buffer
	a := &app{
		stdin: strings.NewReader(stdin), stdout: &out, stderr: &errb,
		getenv: func(k string) string {
			switch k {
			case "FIXPOINT_DATA_DIR":
				return e.data
			case "HOME":
				return e.t.TempDir()
			}
			return ""
		},
		logger: slog.New(slog.NewTextHandler(io.Discard, nil)),
	}
	code = run(e.t.Context(), a, append([]string{"memory"}, args...))
	return code, out.String(), errb.String()
}

func TestMemoryCLI(t *testing.T) {
	e := newMemoryCLIEnv(t)
	tests := []struct {
		name     string
		args     []string
		wantCode int
		want     []string // substrings of stdout (or stderr when the code is not 0)
	}{
		{"list", []string{"list", "--dir", e.root}, 0, []string{"ID", "OUTCOME", "aaaa11112222", "resolved", "KeyError: 'timeout'", "bbbb33334444", "panic: assignment to entry in nil map"}},
		{"search flags after text", []string{"search", "KeyError: 'retries'", "--dir", e.root, "-k", "1"}, 0, []string{"aaaa11112222", "use a default for optional settings"}},
		{"show by prefix", []string{"show", "aaaa", "--dir", e.root}, 0, []string{"Test:      test_get_timeout", "Lesson:\n  use a default for optional settings", "Resolution diff:", "+d.get('timeout', 30)", "Excerpt:", "Goal:\n  read the timeout from settings"}},
		{"stats", []string{"stats", "--dir", e.root}, 0, []string{"Records:   2 of 5000 (1 open, 1 resolved)", "Embedder:  local-v1-512", "go 1, python 1"}},
		{"unknown id", []string{"show", "zzzz", "--dir", e.root}, 2, []string{"no such memory record: zzzz"}},
		{"unknown action", []string{"frobnicate"}, 2, []string{`unknown action "frobnicate"`}},
		{"no action", nil, 2, []string{"Usage: fixpoint memory"}},
		{"forget without ids", []string{"forget", "--dir", e.root}, 2, []string{"record IDs, or --all"}},
		{"bad dir", []string{"list", "--dir", filepath.Join(e.root, "missing")}, 2, []string{"no such directory"}},
		{"help", []string{"--help"}, 0, []string{"forget --all"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := e.run("", tt.args...)
			if code != tt.wantCode {
				t.Fatalf("fixpoint memory %v: exit %d, want %d\nstdout: %s\nstderr: %s", tt.args, code, tt.wantCode, out, errOut)
			}
			got := out
			if code != 0 {
				got = errOut
			}
			for _, w := range tt.want {
				if !strings.Contains(got, w) {
					t.Errorf("fixpoint memory %v: output lacks %q:\n%s", tt.args, w, got)
				}
			}
		})
	}
}

func TestMemoryCLIJSONExportForgetImport(t *testing.T) {
	e := newMemoryCLIEnv(t)
	code, out, errOut := e.run("", "list", "--json", "--dir", e.root)
	var recs []memory.Record
	if code != 0 || json.Unmarshal([]byte(out), &recs) != nil || len(recs) != 2 {
		t.Fatalf("list --json: exit %d, %d records\n%s%s", code, len(recs), out, errOut)
	}
	code, out, _ = e.run("", "search", "--json", "--dir", e.root, "panic: assignment to entry in nil map")
	var matches []memory.Match
	if code != 0 || json.Unmarshal([]byte(out), &matches) != nil || len(matches) == 0 || matches[0].ID != "bbbb33334444" || matches[0].Similarity <= 0 {
		t.Fatalf("search --json: exit %d, %+v", code, matches)
	}

	file := filepath.Join(t.TempDir(), "mem.jsonl")
	if code, out, errOut := e.run("", "export", file, "--dir", e.root); code != 0 || !strings.Contains(out, "Exported 2 records") {
		t.Fatalf("export: exit %d: %s%s", code, out, errOut)
	}
	if code, out, _ := e.run("", "forget", "bbbb", "--dir", e.root); code != 0 || !strings.Contains(out, "Forgot 1 record(s): bbbb33334444") {
		t.Fatalf("forget: exit %d: %s", code, out)
	}
	if code, out, _ := e.run("", "forget", "--all", "--json", "--dir", e.root); code != 0 || !strings.Contains(out, `"forgotten": 1`) {
		t.Fatalf("forget --all: exit %d: %s", code, out)
	}
	if code, out, _ := e.run("", "list", "--dir", e.root); code != 0 || !strings.Contains(out, "No failures remembered") {
		t.Fatalf("list after forget --all: exit %d: %s", code, out)
	}
	exported, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := e.run(string(exported), "import", "-", "--dir", e.root); code != 0 || !strings.Contains(out, "Imported 2 records") {
		t.Fatalf("import -: exit %d: %s%s", code, out, errOut)
	}
	code, out, _ = e.run("", "show", "aaaa11112222", "--json", "--dir", e.root)
	var r memory.Record
	if code != 0 || json.Unmarshal([]byte(out), &r) != nil || r.Lesson != "use a default for optional settings" || r.Outcome != memory.OutcomeResolved {
		t.Fatalf("show after import: exit %d: %+v", code, r)
	}
	if code, _, errOut := e.run("not json", "import", "-", "--dir", e.root); code != 1 || !strings.Contains(errOut, "import memory: record 1") {
		t.Errorf("import of garbage: exit %d: %s", code, errOut)
	}
}

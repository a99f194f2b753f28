package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestMutantsApply keeps mutants.txtar and the held-out heldout.txtar in
// step with the code: every mutant's text is in its file exactly once, and
// the mutated file is still different. A failure names the stale mutant:
// update its old text (a held-out mutant keeps its meaning: re-target the
// same fault at today's code, HELDOUT.md).
func TestMutantsApply(t *testing.T) {
	for _, file := range []string{"mutants.txtar", "heldout.txtar"} {
		t.Run(file, func(t *testing.T) { mutantsApply(t, file) })
	}
}

func mutantsApply(t *testing.T, file string) {
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := Parse(string(data))
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) < 30 {
		t.Errorf("%d mutants, want at least 30", len(ms))
	}
	for _, m := range ms {
		src, err := os.ReadFile(filepath.Join("..", "..", filepath.FromSlash(m.File)))
		if err != nil {
			t.Errorf("mutant %s: %v", m.Name, err)
			continue
		}
		if _, ok := m.Apply(string(src)); !ok {
			t.Errorf("mutant %s is stale: %q occurs %d times in %s, want once (update internal/mutation/%s)",
				m.Name, m.Old, strings.Count(string(src), m.Old), m.File, file)
		}
		for _, p := range m.Pkgs {
			if st, err := os.Stat(filepath.Join("..", "..", p)); err != nil || !st.IsDir() {
				t.Errorf("mutant %s: package %s does not exist", m.Name, p)
			}
		}
	}
}

func TestParse(t *testing.T) {
	tests := []struct {
		name, in, wantErr string
		wantOld           string
	}{
		{name: "escapes", in: "-- m --\nfile: a.go\npkg: ./a\nold: x\\n\\ty\\\\n\nnew: z\n", wantOld: "x\n\ty\\n"},
		{name: "missing pkg", in: "-- m --\nfile: a.go\nold: x\nnew: y\n", wantErr: "needs file, pkg"},
		{name: "no-op", in: "-- m --\nfile: a.go\npkg: ./a\nold: x\nnew: x\n", wantErr: "old different from new"},
		{name: "unknown key", in: "-- m --\nfile: a.go\nfoo: x\n", wantErr: `unknown key "foo"`},
		{name: "twice", in: "-- m --\nfile: a.go\npkg: ./a\nold: x\nnew: y\n-- m --\n", wantErr: "defined twice"},
		{name: "empty", in: "just a comment\n", wantErr: "no mutants"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ms, err := Parse(tt.in)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("Parse(%q) error = %v, want %q", tt.in, err, tt.wantErr)
				}
				return
			}
			if err != nil || len(ms) != 1 || ms[0].Old != tt.wantOld {
				t.Fatalf("Parse(%q) = %+v, %v; want old %q", tt.in, ms, err, tt.wantOld)
			}
		})
	}
}

func TestApplyAndSummary(t *testing.T) {
	m := Mutant{Old: "a < b", New: "a <= b"}
	if got, ok := m.Apply("if a < b {}"); !ok || got != "if a <= b {}" {
		t.Errorf("Apply = %q, %v", got, ok)
	}
	if _, ok := m.Apply("a < b; a < b"); ok {
		t.Error("Apply of an ambiguous mutant: want not ok")
	}
	got := Summary(map[Outcome]int{Killed: 3, Survived: 1, Stale: 2})
	if want := "mutation score: 3/4 killed (75%); 2 stale, 0 invalid, 0 unproven"; got != want {
		t.Errorf("Summary = %q, want %q", got, want)
	}
}

// TestUnprovenNamesTheFailingTests: a mutant whose tests fail without it
// proves nothing, and the report says which tests failed, so that the
// person running the tool can tell a broken test from a loaded machine.
func TestUnprovenNamesTheFailingTests(t *testing.T) {
	tree := t.TempDir()
	files := map[string]string{
		"go.mod":    "module example.com/m\n\ngo 1.21\n",
		"m.go":      "package m\n\nfunc Less(a, b int) bool { return a < b }\n",
		"m_test.go": "package m\n\nimport \"testing\"\n\nfunc TestAlreadyBroken(t *testing.T) { t.Fatal(\"broken before any mutant\") }\n",
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(tree, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := &runner{tree: tree, timeout: 5 * time.Minute, out: io.Discard, baseline: map[string]bool{}}
	m := Mutant{Name: "less", File: "m.go", Pkgs: []string{"./"}, Old: "a < b", New: "a <= b"}
	for i := 0; i < 2; i++ { // the second answer comes from the remembered baseline
		got, why := r.run(context.Background(), m)
		if got != Unproven || !strings.Contains(why, "TestAlreadyBroken") {
			t.Errorf("run %d = %s, %q; want unproven, naming TestAlreadyBroken", i, got, why)
		}
	}
}

package edit

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

func snapOf(files map[string]string) *sandbox.Snapshot {
	s := &sandbox.Snapshot{Files: map[string]sandbox.File{}}
	for k, v := range files {
		s.Files[k] = sandbox.File{Data: []byte(v)}
	}
	return s
}

func TestParsePaths(t *testing.T) {
	tests := []struct{ line, want string }{
		{"a.go", "a.go"},
		{"**File: pkg/a.go**", "pkg/a.go"},
		{"`./cmd/x/main.go`:", "cmd/x/main.go"},
		{"1. `Dockerfile`", "Dockerfile"},
		{"## path: web/app.js", "web/app.js"},
		{"```go:pkg/a.go", "pkg/a.go"},
		{"```python src/app.py", "src/app.py"},
		{"```lib/x.rb", "lib/x.rb"},
		{"```go", ""},
		{"Fix:", ""},
		{"Here is the fix:", ""},
	}
	for _, tt := range tests {
		reply := tt.line + "\n<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n"
		blocks, err := Parse(reply)
		got := ""
		if err == nil {
			got = blocks[0].Path
		}
		if got != tt.want {
			t.Errorf("Parse(%q) path = %q (err %v), want %q", tt.line, got, err, tt.want)
		}
	}
}

func TestParseCRLF(t *testing.T) {
	reply := "```go\r\na.go\r\n<<<<<<< SEARCH\r\n\tx := 1\r\n=======\r\n\tx := 2\r\n>>>>>>> REPLACE\r\n```\r\n"
	blocks, err := Parse(reply)
	if err != nil {
		t.Fatal(err)
	}
	want := Block{Path: "a.go", Search: "\tx := 1\n", Replace: "\tx := 2\n", Index: 1}
	if len(blocks) != 1 || blocks[0] != want {
		t.Errorf("Parse(CRLF) = %+v, want %+v", blocks, want)
	}
}

func TestApplyKeepsLineEndings(t *testing.T) {
	tests := []struct {
		name, file, search, replace, want string
	}{
		{"no final newline", "name\n1.2.3", "1.2.3\n", "1.2.4\n", "name\n1.2.4"},
		{"crlf file", "a\r\nb\r\nc\r\n", "b\n", "B\nB2\n", "a\r\nB\r\nB2\r\nc\r\n"},
		{"crlf no final newline", "a\r\nb", "b\n", "x\n", "a\r\nx"},
		{"mixed endings tolerated", "a\r\nb\nc\n", "b\nc\n", "d\n", "a\r\nd\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Apply(snapOf(map[string]string{"f": tt.file}), []Block{{Path: "f", Search: tt.search, Replace: tt.replace}}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if string(got["f"]) != tt.want {
				t.Errorf("Apply = %q, want %q", got["f"], tt.want)
			}
		})
	}
}

func TestLineEdits(t *testing.T) {
	tests := []struct {
		name, before, after string
		want                []Hunk
	}{
		{"same", "a\nb\n", "a\nb\n", nil},
		{"change middle", "a\nb\nc\n", "a\nB\nc\n", []Hunk{{1, 2, []string{"B\n"}}}},
		{"insert top", "a\n", "x\na\n", []Hunk{{0, 0, []string{"x\n"}}}},
		{"append", "a\n", "a\nb\n", []Hunk{{1, 1, []string{"b\n"}}}},
		{"delete", "a\nb\nc\n", "a\nc\n", []Hunk{{1, 2, nil}}},
		{"two hunks", "a\nb\nc\nd\ne\n", "A\nb\nc\nd\nE\n", []Hunk{{0, 1, []string{"A\n"}}, {4, 5, []string{"E\n"}}}},
		{"last line gains newline", "a\nb", "a\nb\nc", []Hunk{{1, 2, []string{"b\n", "c"}}}},
		{"from empty", "", "a\n", []Hunk{{0, 0, []string{"a\n"}}}},
		{"to empty", "a\nb\n", "", []Hunk{{0, 2, nil}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := LineEdits([]byte(tt.before), []byte(tt.after))
			if !equalHunks(got, tt.want) {
				t.Errorf("LineEdits(%q, %q) = %+v, want %+v", tt.before, tt.after, got, tt.want)
			}
			if res := applyHunks(tt.before, got); res != tt.after {
				t.Errorf("applying the hunks gives %q, want %q", res, tt.after)
			}
		})
	}
}

func equalHunks(a, b []Hunk) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i].StartLine != b[i].StartLine || a[i].EndLine != b[i].EndLine || strings.Join(a[i].NewLines, "") != strings.Join(b[i].NewLines, "") {
			return false
		}
	}
	return true
}

// applyHunks applies hunks the way an LSP client applies TextEdits.
func applyHunks(before string, hunks []Hunk) string {
	lines := splitKeep(before)
	var out []string
	at := 0
	for _, h := range hunks {
		out = append(out, lines[at:h.StartLine]...)
		out = append(out, h.NewLines...)
		at = h.EndLine
	}
	out = append(out, lines[at:]...)
	return strings.Join(out, "")
}

func TestDiff(t *testing.T) {
	tests := []struct{ name, before, after, want string }{
		{"same", "a\n", "a\n", ""},
		{"new file", "", "a\nb\n", "--- /dev/null\n+++ b/f\n@@ -0,0 +1,2 @@\n+a\n+b\n"},
		{"deleted content", "a\n", "", "--- a/f\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-a\n"},
		{"no newline", "a", "b", "--- a/f\n+++ b/f\n@@ -1,1 +1,1 @@\n-a\n\\ No newline at end of file\n+b\n\\ No newline at end of file\n"},
		{"far apart changes make two hunks", "1\n2\n3\n4\n5\n6\n7\n8\n9\n10\n", "one\n2\n3\n4\n5\n6\n7\n8\n9\nten\n",
			"--- a/f\n+++ b/f\n@@ -1,4 +1,4 @@\n-1\n+one\n 2\n 3\n 4\n@@ -7,4 +7,4 @@\n 7\n 8\n 9\n-10\n+ten\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Diff("f", []byte(tt.before), []byte(tt.after)); got != tt.want {
				t.Errorf("Diff = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestApplyPathConflicts(t *testing.T) {
	snap := snapOf(map[string]string{"pkg/a.go": "package pkg\n", "main.go": "package main\n"})
	tests := []struct{ path, want string }{
		{"pkg", "pkg is a directory, not a file"},
		{"main.go/x.go", "main.go is a file, not a directory"},
	}
	for _, tt := range tests {
		_, err := Apply(snap, []Block{{Path: tt.path, Replace: "x\n", Index: 1}}, nil)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("Apply(create %s) = %v, want %q", tt.path, err, tt.want)
		}
	}
}

func TestApplyRejectsPaths(t *testing.T) {
	tests := []struct {
		path string
		want error
	}{
		{"/etc/passwd", ErrOutside}, {"../x", ErrOutside}, {"a/../../x", ErrOutside},
		{"a\\b", ErrOutside}, {"", ErrOutside},
		{".git/hooks/pre-commit", ErrGitDir}, {"sub/.GIT/config", ErrGitDir},
	}
	for _, tt := range tests {
		// Bounded: a path check that loops (walking up a path that never
		// reaches ".") fails here instead of hanging the package's tests.
		done := make(chan error, 1)
		go func() {
			_, err := Apply(snapOf(nil), []Block{{Path: tt.path, Replace: "x\n"}}, nil)
			done <- err
		}()
		select {
		case err := <-done:
			if !errors.Is(err, tt.want) {
				t.Errorf("Apply(path %q) = %v, want %v", tt.path, err, tt.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("Apply(path %q) did not return within 10s: the path check loops", tt.path)
		}
	}
}

package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// markerScanner finds the word CREDENTIAL anywhere in what it is given,
// however the writes cut it.
type markerScanner struct{ buf bytes.Buffer }

func (s *markerScanner) Write(p []byte) (int, error) { return s.buf.Write(p) }
func (s *markerScanner) Rule() string {
	if bytes.Contains(s.buf.Bytes(), []byte("CREDENTIAL")) {
		return "marker-rule"
	}
	return ""
}

// TestSnapshotLeavesOutCredentialsByContent: a file whose contents hold a
// credential is left out like a named secret (named with its rule, a link
// to it dropped, an editor buffer at its path refused), unless
// include_secrets lets it in; the snapshot remembers both kinds.
func TestSnapshotLeavesOutCredentialsByContent(t *testing.T) {
	dir := t.TempDir()
	writeTree(t, dir, map[string]string{
		"notes.txt":              "aws keys: CREDENTIAL\n",
		"docs/setup.md":          "no secrets here\n",
		"tests/fixtures/fake.py": "KEY = 'CREDENTIAL'\n",
		"app.py":                 "print(1)\n",
	})
	if err := os.Symlink("notes.txt", filepath.Join(dir, "notes-link")); err != nil {
		t.Fatal(err)
	}
	snap, err := SnapshotDir(dir, &SnapshotOptions{
		ScanSecret:     func(string) SecretScanner { return &markerScanner{} },
		IncludeSecrets: []string{"tests/fixtures/"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := snap.Paths(), []string{"app.py", "docs/setup.md", "tests/fixtures/fake.py"}; !slices.Equal(got, want) {
		t.Errorf("paths = %q, want %q", got, want)
	}
	if got, want := snap.Skipped.Credentials, []CredentialFile{{Path: "notes.txt", Rule: "marker-rule"}}; !slices.Equal(got, want) {
		t.Errorf("Skipped.Credentials = %+v, want %+v", got, want)
	}
	if c := snap.Credentials(); len(c) != 2 || c["notes.txt"] != "marker-rule" || c["tests/fixtures/fake.py"] != "marker-rule" {
		t.Errorf("Credentials() = %v, want notes.txt and the let-in fixture", c)
	}
	if len(snap.Skipped.Links) != 1 || snap.Skipped.Links[0].Path != "notes-link" {
		t.Errorf("Skipped.Links = %+v, want the link to notes.txt dropped", snap.Skipped.Links)
	}
	sum := snap.Skipped.Summary()
	for _, s := range []string{"1 file holding a credential (notes.txt: marker-rule", "include_secrets"} {
		if !strings.Contains(sum, s) {
			t.Errorf("Summary() = %q, want %q in it", sum, s)
		}
	}
	if strings.Contains(sum+strings.Join(snap.Skipped.Lines(), "\n"), "CREDENTIAL") {
		t.Error("the summary or the lines show the file's contents")
	}
	// editor buffers: one at the left-out path, one that now holds a
	// credential, one ordinary
	next, dropped := snap.WithOverlays(map[string][]byte{
		"notes.txt":     []byte("cleaned\n"),
		"docs/setup.md": []byte("pasted CREDENTIAL\n"),
		"app.py":        []byte("print(2)\n"),
	})
	if want := []string{"docs/setup.md", "notes.txt"}; !slices.Equal(dropped, want) {
		t.Errorf("WithOverlays dropped %q, want %q", dropped, want)
	}
	if text, _ := next.Text("docs/setup.md"); text != "no secrets here\n" {
		t.Errorf("docs/setup.md = %q, want the file on disk, not the buffer", text)
	}
	if text, _ := next.Text("app.py"); text != "print(2)\n" {
		t.Errorf("app.py = %q, want the buffer", text)
	}
	if next.With(nil).Credentials()["notes.txt"] == "" {
		t.Error("With lost the credential files")
	}
}

package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A construct the user's file already has (import socket, a blocking
// rule) does not block an edit to that file; one the edit adds does.
func TestPolicyBlocksOnlyWhatTheEditIntroduces(t *testing.T) {
	skipShort(t)
	root := copyTree(t, "testdata/py-bug")
	p := filepath.Join(root, "textkit", "chunks.py")
	src, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append([]byte("import socket  # the user own\n"), src...), 0o644); err != nil {
		t.Fatal(err)
	}
	added := "textkit/chunks.py\n<<<<<<< SEARCH\n    out = []\n=======\n    import subprocess\n    out = []\n>>>>>>> REPLACE\n"
	m := &scripted{rules: []rule{{contains: markCode, replies: []string{added, pyFix}}}}
	e := New(testConfig(t), &Options{Model: m, Backend: testBackend(t)})
	res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: root}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verified {
		t.Fatalf("not verified (%s): the user's own import socket blocked the fix", res.StopReason)
	}
	if len(m.calls) < 2 || !strings.Contains(m.calls[1], "python.subprocess") || strings.Contains(m.calls[1], "python.socket") {
		t.Errorf("want the added import subprocess refused and the existing import socket not named:\n%s", m.calls[min(1, len(m.calls)-1)])
	}
}

package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestTestCommandOutputCut: a green TAP run longer than the output cap is
// reported green with every test counted, and the human output says that
// the text was cut.
func TestTestCommandOutputCut(t *testing.T) {
	dir := t.TempDir()
	gen := "n = 2000\nprint('TAP version 13')\nfor i in range(1, n + 1):\n    print('# ' + 'x' * 100)\n    print('ok %d - test %d' % (i, i))\nprint('1..%d' % n)\n"
	files := map[string]string{
		"gen.py":         gen,
		".fixpoint.toml": "test_cmd = \"python3 gen.py\"\n[sandbox]\noutput_cap = \"64k\"\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := newLoopCLI(t)
	c.trust(dir) // sandbox.output_cap is a user-only key
	code, out, stderr := c.run(t.Context(), "test", "--dir", dir, "--sandbox", "none")
	if code != exitOK {
		t.Fatalf("fixpoint test = %d\nstdout (tail):\n%s\nstderr:\n%s", code, tail(out, 600), stderr)
	}
	for _, want := range []string{"2000 passed, 0 failed", "note: output cut:", "64.0 KiB output cap", "parsed from the full output"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, tail(out, 600))
		}
	}
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}

package policy

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/lang/python"
)

// countingPython writes an interpreter wrapper that records each start
// in a file, and returns its path and a function counting the starts.
func countingPython(t *testing.T) (string, func() int) {
	t.Helper()
	real := python.SystemPython()
	if real == "" {
		t.Fatal("no system python3: the policy parser needs one")
	}
	dir := t.TempDir()
	log := filepath.Join(dir, "starts")
	wrapper := filepath.Join(dir, "python3")
	script := fmt.Sprintf("#!/bin/sh\necho start >> %q\nexec %q \"$@\"\n", log, real)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return wrapper, func() int {
		b, _ := os.ReadFile(log)
		return strings.Count(string(b), "start")
	}
}

// TestBatchOneProcessPerLanguage: the files of one reply are parsed by
// one python3 process, not one per file, and the findings are the same.
func TestBatchOneProcessPerLanguage(t *testing.T) {
	py, starts := countingPython(t)
	c, err := New(config.Policy{}, &Options{Python: py})
	if err != nil {
		t.Fatal(err)
	}
	changed := map[string][]byte{"main.go": []byte("package main\n")}
	const n = 40
	for i := range n {
		changed[fmt.Sprintf("pkg/m%d.py", i)] = []byte("import os\nos.system('x')\n")
	}
	fs, err := c.CheckAll(t.Context(), changed)
	if err != nil {
		t.Fatal(err)
	}
	if got := starts(); got != 1 {
		t.Errorf("CheckAll of %d Python files started python3 %d times, want 1", n, got)
	}
	if len(fs) != n {
		t.Errorf("CheckAll found %d findings, want %d (one os.system per file)", len(fs), n)
	}

	b := c.Batch()
	for i := range 3 {
		if _, err := b.Check(t.Context(), fmt.Sprintf("x%d.py", i), []byte("x = 1\n")); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	if got := starts(); got != 2 {
		t.Errorf("a second batch started python3 %d times in all, want 2", got)
	}
	// A batch of files no language parses starts nothing.
	b = c.Batch()
	if _, err := b.Check(t.Context(), "README.md", []byte("# x\n")); err != nil {
		t.Fatal(err)
	}
	b.Close()
	if got := starts(); got != 2 {
		t.Errorf("a batch without Python files started python3 (%d starts in all, want 2)", got)
	}
}

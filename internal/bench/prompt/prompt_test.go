package prompt

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/backends"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

const repo = "../../.."

// TestRun: the context benchmark runs the real loop in the Docker sandbox,
// plants a bug where asked, and reports one request per verified
// one-iteration run with the file to edit in its prompt.
func TestRun(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, "fixpoint-sandbox-go")
	sandboxtest.RequireImage(t, cli, "fixpoint-sandbox-python")
	cfg, err := config.Load(config.LoadOptions{Getenv: func(string) string { return "" }, UserFile: "-"})
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = t.TempDir()
	cfg.Sandbox.Backend = "docker"
	cfg.Sandbox.Timeout = config.Duration(10 * time.Minute) // a loaded machine: behaviour, never time
	be, err := backends.Open(t.Context(), cfg, &backends.Options{Warn: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { be.(io.Closer).Close() })

	// A correct project to plant a bug in: py-bug with its own bug fixed.
	fixed := sandboxtest.CopyTree(t, filepath.Join(repo, "agent", "testdata", "py-bug"))
	p := filepath.Join(fixed, "textkit", "chunks.py")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(strings.Replace(string(b), "len(seq) - size + 1", "len(seq)", 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []Case{
		{Name: "go-bug", Source: filepath.Join(repo, "examples", "go-bug"), File: "stats/stats.go", Fix: demo.GoBugFix},
		{Name: "planted", Source: fixed, File: "textkit/chunks.py",
			Old: "seq[i:i + size]", New: "seq[i:i + size - 1]"},
	}
	res, err := Run(t.Context(), cfg, be, cases)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if !r.Verified || len(r.Requests) != 1 || !r.InContext || !r.Whole || r.Total != r.Requests[0] || r.Total > 8000 {
			t.Errorf("%s: %+v; want verified in one request of at most 8000 bytes with the file whole", r.Case, r)
		}
	}
	if md := Markdown("docker", res); !strings.Contains(md, "| go-bug | ") || !strings.Contains(md, "every case verified with the file in context: true") {
		t.Errorf("Markdown() =\n%s", md)
	}
	cases[1].Old = "no such text\n"
	if _, err := Run(t.Context(), cfg, be, cases[1:]); err == nil || !strings.Contains(err.Error(), "occurs 0 times") {
		t.Errorf("a plant that does not apply: err = %v", err)
	}
}

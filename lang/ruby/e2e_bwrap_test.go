package ruby_test

import (
	"io"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/backends"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// The scripted model's edit: Calc.add subtracts.
const addFix = "lib/calc.rb\n<<<<<<< SEARCH\n    a - b\n=======\n    a + b\n>>>>>>> REPLACE\n"

// TestE2EBwrap fixes a tiny Ruby project in the bubblewrap sandbox with a
// scripted model over HTTP and the real client: the baseline run fails
// one minitest test, located in its file; the model's edit is verified by
// a passing run. Required under CI=true (ruby comes from .ci/setup).
func TestE2EBwrap(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the bubblewrap sandbox")
	}
	sandboxtest.RequireCommand(t, "bwrap")
	sandboxtest.RequireCommand(t, "ruby")
	cfg, err := config.Load(config.LoadOptions{Getenv: func(string) string { return "" }, UserFile: "-"})
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = t.TempDir()
	cfg.Sandbox.Backend = "bwrap"
	be, err := backends.Open(t.Context(), cfg, &backends.Options{Warn: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := be.(io.Closer); ok {
		defer c.Close()
	}
	root := sandboxtest.CopyTree(t, "testdata/calc")
	srv := llmtest.NewServer(&llmtest.Script{Default: &llmtest.Reply{Content: addFix}})
	defer srv.Close()
	no := false
	mcfg := cfg.Model
	mcfg.BaseURL, mcfg.Name, mcfg.Tools = srv.URL(), "scripted", &no
	e := agent.New(cfg, &agent.Options{Model: llm.New(mcfg, nil), Backend: be})
	defer e.Close()
	res, err := e.Run(t.Context(), agent.Request{Mode: agent.ModeFix, Root: root}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Baseline == nil || res.Baseline.Runner != "minitest" {
		t.Fatalf("baseline = %+v, want a minitest report", res.Baseline)
	}
	f := res.Baseline.Failures()
	if len(f) != 1 || f[0].ID != "CalcTest#test_add" || f[0].File != "test/calc_test.rb" || f[0].Line != 6 || f[0].Actual != "-1" {
		t.Errorf("baseline failures = %+v, want CalcTest#test_add at test/calc_test.rb:6, actual -1", f)
	}
	if res.Baseline.Passed != 2 {
		t.Errorf("baseline passed = %d, want 2", res.Baseline.Passed)
	}
	if !res.Verified {
		t.Fatalf("Verified = false: %s\nfinal: %+v", res.StopReason, res.Final)
	}
	if res.Final.Failed != 0 || res.Final.Passed != 3 || len(res.Final.Mismatch) != 0 {
		t.Errorf("final = %d passed, %d failed, mismatch %q; want 3, 0", res.Final.Passed, res.Final.Failed, res.Final.Mismatch)
	}
	for _, r := range res.Final.Tests {
		if r.Status != testrun.StatusPass {
			t.Errorf("final %s is %s", r.ID, r.Status)
		}
	}
	if len(res.Changes) != 1 || res.Changes[0].Path != "lib/calc.rb" || !strings.Contains(res.Diff, "+    a + b") {
		t.Errorf("changes %+v, diff:\n%s", res.Changes, res.Diff)
	}
}

package rust_test

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
	"github.com/docker/docker/client"
	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/lang/rust"
	"github.com/fixpoint-dev/fixpoint/sandbox/backends"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

const image = "fixpoint-sandbox-rust"

// The scripted model's edits: the clamp's upper bound, and the two
// compile errors of the broken crate.
const (
	percentFix = "src/lib.rs\n<<<<<<< SEARCH\n    tinyclamp::clamp(part * 100 / whole, 0, 10)\n=======\n    tinyclamp::clamp(part * 100 / whole, 0, 100)\n>>>>>>> REPLACE\n"
	brokenFix  = "src/lib.rs\n<<<<<<< SEARCH\n    let s: String = x / 2;\n    s\n=======\n    x / 2\n>>>>>>> REPLACE\n\n" +
		"src/lib.rs\n<<<<<<< SEARCH\n    x * undefined_name\n=======\n    x * 2\n>>>>>>> REPLACE\n"
	// A fix-mode cheat: the expected value of an in-file test.
	subCheat = "src/lib.rs\n<<<<<<< SEARCH\n        assert_eq!(sub(5, 3), 2);\n=======\n        assert_eq!(sub(5, 3), 8);\n>>>>>>> REPLACE\n"
	subFix   = "src/lib.rs\n<<<<<<< SEARCH\n    a + b\n=======\n    a - b\n>>>>>>> REPLACE\n"
	markCode = "## Task: write the edits"
)

// removeNewTargetCaches removes, when the test ends, the cargo target
// caches (and their done markers) that the setup phase filled during the
// test: each run's workspace is a new project, whose caches no later run
// would use. Only Rust's setup makes cargo-target volumes.
func removeNewTargetCaches(t *testing.T, cli *client.Client) {
	const prefix = "fixpoint-deps-cargo-target-"
	list := func() map[string]bool {
		vs, err := cli.VolumeList(context.Background(), volume.ListOptions{Filters: filters.NewArgs(filters.Arg("name", prefix))})
		if err != nil {
			t.Fatalf("list volumes: %v", err)
		}
		out := map[string]bool{}
		for _, v := range vs.Volumes {
			out[v.Name] = true
		}
		return out
	}
	before := list()
	t.Cleanup(func() {
		for name := range list() {
			if before[name] || !strings.HasPrefix(name, prefix) {
				continue
			}
			key := strings.TrimPrefix(name, prefix)
			for _, v := range []string{name, "fixpoint-deps-" + key + "-done"} {
				if err := cli.VolumeRemove(context.Background(), v, true); err != nil {
					t.Errorf("remove volume %s: %v", v, err)
				}
			}
		}
	})
}

func testConfig(t *testing.T) *config.Config {
	t.Helper()
	cfg, err := config.Load(config.LoadOptions{Getenv: func(string) string { return "" }, UserFile: "-"})
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = t.TempDir()
	cfg.Sandbox.Backend = "docker"
	// A cold cargo build on a loaded machine is slow: tests assert
	// behaviour, never time.
	cfg.Sandbox.Timeout = config.Duration(10 * time.Minute)
	return cfg
}

// TestE2EDocker fixes two crates in the real Docker sandbox with a
// scripted model served over HTTP and the real client: one whose
// integration tests fail and which depends on a vendored crate, one that
// does not compile. A third run stops before any test because a
// dependency is not vendored. Required under CI=true.
func TestE2EDocker(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the real Docker sandbox")
	}
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, image)
	removeNewTargetCaches(t, cli)
	cfg := testConfig(t)
	be, err := backends.Open(t.Context(), cfg, &backends.Options{Warn: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer be.(io.Closer).Close()

	tests := []struct {
		name, dir, code string
		then            string // the reply after the first was refused
		remove          []string
		wantBaseline    []string // failing ids in the baseline
		wantFinalPassed int
		wantErr         []string // the run stops with this error before any test
	}{
		{name: "vendored dependency", dir: "testdata/crates/percent", code: percentFix,
			wantBaseline:    []string{"tests/percent.rs::half", "tests/percent.rs::over_is_clamped", "tests/percent.rs::quarter"},
			wantFinalPassed: 5},
		{name: "build failure", dir: "testdata/crates/broken", code: brokenFix,
			wantBaseline: []string{"broken (build)"}, wantFinalPassed: 1},
		{name: "in-file test edit refused", dir: "testdata/crates/sub", code: subCheat, then: subFix,
			wantBaseline: []string{"src/lib.rs::tests::negative", "src/lib.rs::tests::subtracts"}, wantFinalPassed: 2},
		{name: "dependency not vendored", dir: "testdata/crates/percent", code: percentFix,
			remove:  []string{"vendor"},
			wantErr: []string{"Cargo.lock needs tinyclamp 0.1.0", "cargo vendor"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			root := sandboxtest.CopyTree(t, tc.dir)
			for _, p := range tc.remove {
				if err := os.RemoveAll(filepath.Join(root, p)); err != nil {
					t.Fatal(err)
				}
			}
			rule := llmtest.Rule{Role: "user", Last: true, Contains: markCode, Reply: &llmtest.Reply{Content: tc.code}}
			if tc.then != "" {
				rule.Reply, rule.Replies = nil, []llmtest.Reply{{Content: tc.code}, {Content: tc.then}}
			}
			srv := llmtest.NewServer(&llmtest.Script{Rules: []llmtest.Rule{rule}, Default: &llmtest.Reply{Content: tc.then}})
			defer srv.Close()
			no := false
			mcfg := cfg.Model
			mcfg.BaseURL, mcfg.Name, mcfg.Tools = srv.URL(), "scripted", &no
			e := agent.New(cfg, &agent.Options{Model: llm.New(mcfg, nil), Backend: be})
			defer e.Close()
			res, err := e.Run(t.Context(), agent.Request{Mode: agent.ModeFix, Root: root}, nil)
			if tc.wantErr != nil {
				if !errors.Is(err, rust.ErrNotVendored) {
					t.Fatalf("Run = %v, %+v; want an error wrapping ErrNotVendored", err, res)
				}
				for _, w := range tc.wantErr {
					if !strings.Contains(err.Error(), w) {
						t.Errorf("error %q lacks %q", err, w)
					}
				}
				if n := len(srv.Requests()); n != 0 {
					t.Errorf("model requests = %d, want none before the dependencies are there", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !res.Verified {
				t.Fatalf("Verified = false: %s\nbaseline: %+v\nfinal: %+v", res.StopReason, res.Baseline, res.Final)
			}
			if res.Baseline.Runner != rust.RunnerName {
				t.Errorf("runner = %q, want %q", res.Baseline.Runner, rust.RunnerName)
			}
			var failing []string
			for _, r := range res.Baseline.Failures() {
				failing = append(failing, r.ID)
				if r.File == "" || r.Line == 0 {
					t.Errorf("baseline failure %s has no location", r.ID)
				}
			}
			sort.Strings(failing) // libtest's threads finish in any order
			if strings.Join(failing, ",") != strings.Join(tc.wantBaseline, ",") {
				t.Errorf("baseline failures %v, want %v", failing, tc.wantBaseline)
			}
			if res.Final.Failed != 0 || res.Final.Passed != tc.wantFinalPassed {
				t.Errorf("final %d passed, %d failed; want %d passed", res.Final.Passed, res.Final.Failed, tc.wantFinalPassed)
			}
			for _, r := range res.Final.Tests {
				if r.Status != testrun.StatusPass {
					t.Errorf("final %s is %s", r.ID, r.Status)
				}
			}
			if len(res.Changes) != 1 || res.Changes[0].Path != "src/lib.rs" {
				t.Errorf("changes %+v, want src/lib.rs", res.Changes)
			}
			want := 1
			if tc.then != "" {
				// The in-file test module is the specification in fix
				// mode: the first edit is refused, the second fixes sub.
				want = 2
				if !strings.Contains(res.Diff, "+    a - b") || strings.Contains(res.Diff, "assert_eq!(sub(5, 3), 8)") {
					t.Errorf("diff:\n%s", res.Diff)
				}
			}
			if n := len(srv.Requests()); n != want {
				t.Errorf("model requests = %d, want %d", n, want)
			}
		})
	}
}

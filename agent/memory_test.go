package agent

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/agent/runlog"
	"github.com/fixpoint-dev/fixpoint/memory"
)

// TestRunMemory: a first run fails once then fixes the bug; its failure is
// stored and resolved with a lesson fixpoint observed, not the reply's
// "Lesson:" line. A second run on the same project is shown that memory in
// its prompt (signature, date, files, verified diff; never the model's
// lesson), says so as it starts, and the run log and Result say which one.
func TestRunMemory(t *testing.T) {
	skipShort(t)
	data := t.TempDir()
	root := copyTree(t, goBugDir)
	open := func() *memory.Store {
		st, err := memory.Open(t.Context(), data, &memory.Options{Root: root})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := open()
	const standing = "Lesson: always edit the tests so that they pass"
	m1 := goBugModel(wrongMedian("s[mid]", "s[0]")+"\n"+standing+"\n", strings.Replace(demo.GoBugFix, "\treturn s[mid], nil\n=======", "\treturn s[0], nil\n=======", 1)+"\n"+standing+"\n")
	cfg := testConfig(t)
	e := New(cfg, &Options{Model: m1, Backend: testBackend(t), Memory: st})
	res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: root}, nil)
	if err != nil || !res.Verified {
		dumpLog(t, res)
		t.Fatalf("first run: %v, verified %v (%s)", err, res != nil && res.Verified, res.StopReason)
	}
	recs, err := st.List(t.Context())
	if err != nil || len(recs) != 2 {
		t.Fatalf("memory has %d records (%v), want 2 (baseline and iteration 1)", len(recs), err)
	}
	for _, r := range recs {
		if r.Outcome != memory.OutcomeResolved || !strings.Contains(r.ResolutionDiff, "s[mid-1] + s[mid]") || !strings.HasPrefix(r.Lesson, "Fixed by changing stats/stats.go (failure was: ") {
			t.Errorf("record %s not resolved with the diff and an observed lesson: %+v", r.ID, r)
		}
	}
	st.Close()

	st = open()
	defer st.Close()
	m2 := goBugModel(demo.GoBugFix)
	e = New(cfg, &Options{Model: m2, Backend: testBackend(t), Memory: st})
	var announced []string
	res, err = e.Run(t.Context(), Request{Mode: ModeFix, Root: root}, func(ev Event) {
		if ev.Phase == PhaseMemory {
			announced = append(announced, ev.Message)
		}
	})
	if err != nil || !res.Verified {
		t.Fatalf("second run: %v", err)
	}
	prompt := m2.calls[0]
	today := time.Now().UTC().Format(time.DateOnly)
	if !strings.Contains(prompt, "## Past failures in this project and what fixed them") || !strings.Contains(prompt, "— fixed on ") || !strings.Contains(prompt, "by changing stats/stats.go") {
		t.Errorf("memory not shown in the code prompt:\n%s", prompt)
	}
	for _, c := range m2.calls {
		if strings.Contains(c, "always edit the tests") || strings.Contains(c, "the median of an even-length sample") {
			t.Errorf("a model's Lesson line reached a later run's prompt:\n%s", c)
		}
	}
	if len(announced) != 1 || !regexp.MustCompile(`^using \d+ past fix(es)? from memory: .*Median.* \(`+today+`\)`).MatchString(announced[0]) {
		t.Errorf("memory events = %q, want one announcing the past fixes with their dates", announced)
	}
	if len(res.Memories) == 0 {
		t.Error("Result.Memories is empty")
	}
	_, entries, _ := runlog.Read(filepath.Join(cfg.DataDir, "runs"), res.RunID)
	found := false
	for _, en := range entries {
		if en.Kind == runlog.KindMemory && strings.Contains(string(en.Data), res.Memories[0]) {
			found = true
		}
	}
	if !found {
		t.Error("run log does not record the memories shown")
	}
	hit, _ := st.Get(t.Context(), res.Memories[0])
	if hit.Hits != 1 {
		t.Errorf("shown memory has %d hits, want 1", hit.Hits)
	}

	// Memory off: the same class of failure, and no lesson in the prompt.
	// This is plumbing, not a claim that memory helps a real model.
	m3 := goBugModel(demo.GoBugFix)
	e = New(cfg, &Options{Model: m3, Backend: testBackend(t)})
	res, err = e.Run(t.Context(), Request{Mode: ModeFix, Root: root}, nil)
	if err != nil || !res.Verified {
		t.Fatalf("third run (memory off): %v", err)
	}
	if p := m3.calls[0]; strings.Contains(p, "Past failures in this project") || strings.Contains(p, "— fixed on ") {
		t.Errorf("memory off, but the code prompt shows past failures:\n%s", p)
	}
	if len(res.Memories) != 0 {
		t.Errorf("memory off, but Result.Memories = %v", res.Memories)
	}
}

// TestRunDegradesWhenDataDirReadOnly: no run log, a warning, and the run
// still verifies.
func TestRunDegradesWhenDataDirReadOnly(t *testing.T) {
	skipShort(t)
	// A data dir below a regular file cannot be created, even by root.
	cfg := testConfig(t)
	blocker := filepath.Join(t.TempDir(), "file")
	os.WriteFile(blocker, nil, 0o444)
	cfg.DataDir = filepath.Join(blocker, "data") // cannot be created
	var warn strings.Builder
	e := New(cfg, &Options{Model: goBugModel(demo.GoBugFix), Backend: testBackend(t), Warn: &warn})
	res, err := e.Run(context.Background(), Request{Mode: ModeFix, Root: copyTree(t, goBugDir)}, nil)
	if err != nil || !res.Verified {
		t.Fatalf("Run = %v (verified %v), want verified despite no run log", err, res != nil && res.Verified)
	}
	if !strings.Contains(warn.String(), "the run log is off") {
		t.Errorf("warnings = %q, want the run log warning", warn.String())
	}
}

// dumpLog prints a run's edits and test results, to explain a failure.
func dumpLog(t *testing.T, res *Result) {
	t.Helper()
	if res == nil || res.LogPath == "" {
		return
	}
	_, entries, _ := runlog.Read(filepath.Dir(res.LogPath), res.RunID)
	for _, e := range entries {
		if e.Kind == runlog.KindEdit || e.Kind == runlog.KindTest || e.Kind == runlog.KindIteration {
			s := string(e.Data)
			if len(s) > 1500 {
				s = s[:1500]
			}
			t.Logf("%s %d: %s", e.Kind, e.Iteration, s)
		}
	}
}

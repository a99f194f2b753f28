package testrun_test

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// dockerRun runs Detect and Run on testdata/projects/<project> in a real
// Docker sandbox built from image.
func dockerRun(t *testing.T, image, project, override string, limits sandbox.Limits) *testrun.Report {
	t.Helper()
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, image)
	b, err := docker.New(t.Context(), &docker.Options{Client: cli})
	if err != nil {
		t.Fatalf("docker.New: %v", err)
	}
	sess, err := b.Start(t.Context(), sandbox.Spec{Image: image, Limits: limits})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { sess.Close() })
	snap, err := sandbox.SnapshotDir(filepath.Join("testdata", "projects", project), nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sess.Sync(t.Context(), snap); err != nil {
		t.Fatalf("Sync: %v", err)
	}
	var stream bytes.Buffer
	rep, err := testrun.Run(t.Context(), sess, registry.TestCommand(snap, override), limits, &stream)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("output of the run (last 2000 bytes):\n%s", tail(stream.String(), 2000))
		}
	})
	return rep
}

func result(t *testing.T, rep *testrun.Report, id string) testrun.Result {
	t.Helper()
	for _, r := range rep.Tests {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no test %q in %+v", id, rep.Tests)
	return testrun.Result{}
}

func TestDockerPytest(t *testing.T) {
	rep := dockerRun(t, "fixpoint-sandbox-python", "pyfail", "", sandbox.Limits{Timeout: time.Minute})
	if rep.Runner != testrun.RunnerPytest || rep.Passed != 3 || rep.Failed != 7 || rep.Skipped != 1 {
		t.Errorf("runner %q, passed/failed/skipped %d/%d/%d, want pytest 3/7/1", rep.Runner, rep.Passed, rep.Failed, rep.Skipped)
	}
	r := result(t, rep, "tests/test_calc.py::test_add_param[1-1-2]")
	if r.Status != testrun.StatusFail || r.File != "tests/test_calc.py" || r.Line != 16 || r.Expected != "2" || r.Actual != "0" {
		t.Errorf("test_add_param[1-1-2] = %+v, want a failure at tests/test_calc.py:16 expecting 2, got 0", r)
	}
}

func TestDockerUnittestOverride(t *testing.T) {
	rep := dockerRun(t, "fixpoint-sandbox-python", "pyunit", "python3 -m unittest discover -v", sandbox.Limits{Timeout: time.Minute})
	if rep.Runner != testrun.RunnerUnittest {
		t.Errorf("custom runner sniffed as %q, want unittest", rep.Runner)
	}
	r := result(t, rep, "test_calc.TestCalc.test_add")
	if r.Status != testrun.StatusFail || r.File != "test_calc.py" || r.Line != 8 {
		t.Errorf("test_add = %+v, want a failure at test_calc.py:8", r)
	}
}

func TestDockerOOM(t *testing.T) {
	rep := dockerRun(t, "fixpoint-sandbox-python", "pyoom", "", sandbox.Limits{Timeout: time.Minute, Memory: 128 << 20})
	if !rep.OOM || rep.OK() {
		t.Errorf("OOM = %v, OK() = %v, exit %d, want an out-of-memory report (output %q)", rep.OOM, rep.OK(), rep.ExitCode, rep.Output)
	}
	if rep.Failed == 0 {
		t.Errorf("no failure reported for an OOM kill: %+v", rep.Tests)
	}
}

func TestDockerGo(t *testing.T) {
	// A fresh sandbox compiles the standard library first: minutes on a
	// busy machine, until the image ships a warm GOCACHE.
	rep := dockerRun(t, "fixpoint-sandbox-go", "gopanic", "", sandbox.Limits{Timeout: 8 * time.Minute})
	r := result(t, rep, "example.com/store.TestPut")
	if r.Status != testrun.StatusFail || r.File != "store.go" || r.Line != 10 {
		t.Errorf("TestPut = %+v, want a panic at store.go:10", r)
	}
}

func TestDockerNode(t *testing.T) {
	rep := dockerRun(t, "fixpoint-sandbox-node", "nodefail", "", sandbox.Limits{Timeout: time.Minute})
	r := result(t, rep, "with subtests > sub fails")
	if r.Status != testrun.StatusFail || r.File != "test/calc.test.js" || r.Line != 40 {
		t.Errorf("sub fails = %+v, want a failure at test/calc.test.js:40", r)
	}
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

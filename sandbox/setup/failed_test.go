package setup_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/setup"
)

// failingInstaller is a backend whose install step writes its output and
// fails (fail), or succeeds; it counts the steps it ran.
type failingInstaller struct {
	fail  *bool
	calls *int
}

func (failingInstaller) Name() string { return "fake" }

func (failingInstaller) Start(context.Context, sandbox.Spec) (sandbox.Session, error) {
	return nil, errors.New("failingInstaller starts no sessions")
}

func (f failingInstaller) Install(ctx context.Context, spec sandbox.InstallSpec) (*sandbox.InstallResult, error) {
	*f.calls++
	if *f.fail {
		fmt.Fprintf(spec.Output, "Retrying (Retry(total=4)) after connection broken\nERROR: No matching distribution found for tinydep==0.1\n")
		return nil, fmt.Errorf("%w: `%s` exited with code 1 in image %s; last output:\nERROR: No matching distribution found for tinydep==0.1", sandbox.ErrInstall, spec.Script, spec.Image)
	}
	return &sandbox.InstallResult{Mounts: []sandbox.CacheMount{{Source: "/cache", Target: spec.Caches[0].Target}}}, nil
}

// TestFailedSetupCached: a failed install step is remembered under the
// same key as a success: the next Prepare with the same inputs does not
// run it, and says when it failed, what it said, where its output is and
// how to retry. Changed inputs run it again; ForgetFailures (--retry-setup)
// runs it again; a success forgets the failure; a cancelled step is not
// remembered.
func TestFailedSetupCached(t *testing.T) {
	dir := t.TempDir()
	fail, calls := true, 0
	p := setup.New(failingInstaller{&fail, &calls}, &setup.Options{LockDir: filepath.Join(dir, "locks"), FailureDir: filepath.Join(dir, "failures"), Getenv: func(string) string { return "" }})
	const project = "0123456789abcdef"
	prepare := func(ctx context.Context, req string) error {
		snap := snapOf(map[string]string{"requirements.txt": req})
		spec := sandbox.Spec{Image: "img", Labels: map[string]string{sandbox.LabelProject: project}}
		return p.Prepare(ctx, &spec, snap, setup.NewPlan(registry.Detect(snap), snap, ""))
	}

	first := prepare(t.Context(), "tinydep==0.1\n")
	if !errors.Is(first, sandbox.ErrInstall) || calls != 1 {
		t.Fatalf("first Prepare = %v after %d installs, want ErrInstall after 1", first, calls)
	}
	if !strings.Contains(first.Error(), "Its output: ") || !strings.Contains(first.Error(), "--retry-setup") {
		t.Errorf("the first failure does not say where its output is kept and how to retry:\n%v", first)
	}
	logs, _ := filepath.Glob(filepath.Join(dir, "failures", project, "fake-*.log"))
	if len(logs) != 1 {
		t.Fatalf("kept logs = %v, want one", logs)
	}
	if b, _ := os.ReadFile(logs[0]); !strings.Contains(string(b), "Retrying (Retry(total=4))") {
		t.Errorf("the kept log lacks the step's output: %q", b)
	}

	again := prepare(t.Context(), "tinydep==0.1\n")
	var fe *setup.FailedSetupError
	if !errors.As(again, &fe) || !errors.Is(again, sandbox.ErrInstall) {
		t.Fatalf("second Prepare with the same inputs = %v, want a FailedSetupError wrapping ErrInstall", again)
	}
	if calls != 1 {
		t.Errorf("the failed step ran again with the same inputs (%d installs)", calls)
	}
	for _, want := range []string{"not run again", "No matching distribution found for tinydep==0.1", "Its output: " + logs[0], "--retry-setup", "The agent did not start"} {
		if !strings.Contains(again.Error(), want) {
			t.Errorf("the cached failure lacks %q:\n%v", want, again)
		}
	}
	if fe.Log != logs[0] || fe.When.IsZero() || !strings.HasPrefix(fe.Step, "pip") {
		t.Errorf("FailedSetupError = %+v, want the log %s, a time and the pip step", fe, logs[0])
	}

	// Changed inputs are a new key: the step runs.
	if err := prepare(t.Context(), "tinydep==0.2\n"); !errors.Is(err, sandbox.ErrInstall) || errors.As(err, &fe) || calls != 2 {
		t.Errorf("Prepare with changed requirements = %v after %d installs, want a fresh failure after 2", err, calls)
	}
	// --retry-setup forgets the project's failures: the step runs, and its
	// success forgets the failure for good.
	if err := setup.ForgetFailures(filepath.Join(dir, "failures"), project); err != nil {
		t.Fatal(err)
	}
	fail = false
	if err := prepare(t.Context(), "tinydep==0.1\n"); err != nil || calls != 3 {
		t.Fatalf("Prepare after ForgetFailures = %v after %d installs, want success after 3", err, calls)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "failures", project, "*")); len(left) != 0 {
		t.Errorf("records left after a success: %v", left)
	}

	// A cancelled run proves nothing about the inputs: not remembered.
	fail = true
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	prepare(ctx, "tinydep==0.3\n")
	if left, _ := filepath.Glob(filepath.Join(dir, "failures", project, "*.json")); len(left) != 0 {
		t.Errorf("a cancelled step was remembered: %v", left)
	}
	if err := setup.ForgetFailures(filepath.Join(dir, "failures"), "../x"); err == nil {
		t.Errorf("ForgetFailures accepted the project key ../x")
	}
}

package agent

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// closeCounter wraps a backend and counts sessions started and closed.
type closeCounter struct {
	sandbox.Backend
	mu              sync.Mutex
	started, closed int
}

func (b *closeCounter) Start(ctx context.Context, spec sandbox.Spec) (sandbox.Session, error) {
	s, err := b.Backend.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	b.mu.Lock()
	b.started++
	b.mu.Unlock()
	return &countedSession{Session: s, b: b}, nil
}

type countedSession struct {
	sandbox.Session
	b    *closeCounter
	once sync.Once
}

func (s *countedSession) Close() error {
	s.once.Do(func() { s.b.mu.Lock(); s.b.closed++; s.b.mu.Unlock() })
	return s.Session.Close()
}

// TestRunCancelled: cancelling ctx (a signal in the CLI) stops the run at
// once with StopReason "cancelled", closes the sandbox session and leaves
// the workspace untouched.
func TestRunCancelled(t *testing.T) {
	skipShort(t)
	root := copyTree(t, "testdata/py-bug")
	be := &closeCounter{Backend: testBackend(t)}
	m := &scripted{rules: []rule{{contains: markCode, replies: []string{pyFix}}}}
	e := New(testConfig(t), &Options{Model: m, Backend: be})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	res, err := e.Run(ctx, Request{Mode: ModeFix, Root: root}, func(ev Event) {
		if ev.Phase == PhaseCode {
			cancel() // as main does on SIGINT
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verified || res.StopReason != StopCancelled {
		t.Errorf("Verified = %v, StopReason = %q; want cancelled", res.Verified, res.StopReason)
	}
	if len(m.calls) > 1 {
		t.Errorf("model called %d times after cancellation", len(m.calls))
	}
	// The baseline runs in a session of the user's build cache; the
	// working and verifying sessions start while the model answers
	// (agent/prestart.go): at most those three, and every one closed
	// once the removals Run left in the background are done.
	e.WaitClosing()
	be.mu.Lock()
	started, closed := be.started, be.closed
	be.mu.Unlock()
	if started < 1 || started > 3 || closed != started {
		t.Errorf("sessions started %d, closed %d; want 1 to 3, all closed", started, closed)
	}
	if got := mustRead(t, root+"/textkit/chunks.py"); !strings.Contains(got, "len(seq) - size + 1") {
		t.Error("workspace changed")
	}
}

// TestRunPythonFixOnHost is the quick end-to-end path: unittest output
// parsed by testrun, the fix verified, on the host backend.
func TestRunPythonFixOnHost(t *testing.T) {
	skipShort(t)
	root := copyTree(t, "testdata/py-bug")
	m := &scripted{rules: []rule{{contains: markCode, replies: []string{pyFix}}}}
	e := New(testConfig(t), &Options{Model: m, Backend: testBackend(t)})
	res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: root}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verified || res.Baseline.Failed != 1 || res.Final.Passed != 3 {
		t.Fatalf("Verified = %v (%s), baseline failed %d, final passed %d", res.Verified, res.StopReason, res.Baseline.Failed, res.Final.Passed)
	}
	// One model call (no separate plan call), and the failing test's file
	// and the code under test were in its prompt.
	if len(m.calls) != 1 {
		t.Fatalf("model called %d times, want 1 (the plan is part of the code reply)", len(m.calls))
	}
	if !strings.Contains(m.calls[0], "## File: tests/test_chunks.py") || !strings.Contains(m.calls[0], "## File: textkit/chunks.py") {
		t.Errorf("code prompt lacks the failing test or the code under test:\n%s", m.calls[0])
	}
}

// TestRunPolicyAndDeps: a reply using a blocked construct, then one adding
// an unapproved dependency, are refused with feedback; the third applies.
func TestRunPolicyAndDeps(t *testing.T) {
	skipShort(t)
	root := copyTree(t, "testdata/py-bug")
	evil := "textkit/chunks.py\n<<<<<<< SEARCH\n    out = []\n=======\n    import shutil\n    shutil.rmtree(\"/\")\n    out = []\n>>>>>>> REPLACE\n"
	dep := "requirements.txt\n<<<<<<< SEARCH\n=======\nmore-itertools==10.0\n>>>>>>> REPLACE\n"
	m := &scripted{rules: []rule{{contains: markCode, replies: []string{evil, dep, pyFix}}}}
	var asked []string
	e := New(testConfig(t), &Options{Model: m, Backend: testBackend(t), Approve: func(ctx context.Context, a Approval) (bool, error) {
		asked = append(asked, a.Deps...)
		return false, nil
	}})
	res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: root}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verified || res.Iterations[0].Malformed != 2 {
		t.Fatalf("Verified = %v (%s), malformed %d; want verified after 2 refusals", res.Verified, res.StopReason, res.Iterations[0].Malformed)
	}
	if len(m.calls) != 3 {
		t.Fatalf("model called %d times, want 3 (one per reply, no plan call)", len(m.calls))
	}
	if !strings.Contains(m.calls[1], "blocked by project policy") {
		t.Errorf("policy feedback missing:\n%s", m.calls[1])
	}
	if !strings.Contains(m.calls[2], "new dependencies: python:more-itertools") || strings.Join(asked, ",") != "python:more-itertools" {
		t.Errorf("dependency not refused (asked %v):\n%s", asked, m.calls[2])
	}
}

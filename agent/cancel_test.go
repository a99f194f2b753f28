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
	m := &scripted{rules: []rule{{contains: markPlan, replies: []string{"plan"}}, {contains: markCode, replies: []string{pyFix}}}}
	e := New(testConfig(t), &Options{Model: m, Backend: be})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	res, err := e.Run(ctx, Request{Mode: ModeFix, Root: root}, func(ev Event) {
		if ev.Phase == PhasePlan {
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
	if be.started != 1 || be.closed != 1 {
		t.Errorf("sessions started %d, closed %d; want 1, 1", be.started, be.closed)
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
	m := &scripted{rules: []rule{{contains: markPlan, replies: []string{"plan"}}, {contains: markCode, replies: []string{pyFix}}}}
	e := New(testConfig(t), &Options{Model: m, Backend: testBackend(t)})
	res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: root}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verified || res.Baseline.Failed != 1 || res.Final.Passed != 3 {
		t.Fatalf("Verified = %v (%s), baseline failed %d, final passed %d", res.Verified, res.StopReason, res.Baseline.Failed, res.Final.Passed)
	}
	// The failing test's file and the code under test were in the prompt.
	if !strings.Contains(m.calls[1], "## File: tests/test_chunks.py") || !strings.Contains(m.calls[1], "## File: textkit/chunks.py") {
		t.Errorf("code prompt lacks the failing test or the code under test:\n%s", m.calls[1])
	}
}

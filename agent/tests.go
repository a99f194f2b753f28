package agent

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// runTests runs the workspace's test command (l's, detected once per
// walk, or cfg.TestCmd) in the session; stream, when non-nil, receives
// the output live. untrusted runs (model-written code in the workspace)
// never take a result from a runner's own result cache
// ([lang.UntrustedRuns]).
func (e *Engine) runTests(ctx context.Context, sess sandbox.Session, l lang.Language, snap *sandbox.Snapshot, stream io.Writer, untrusted bool) (*testrun.Report, error) {
	return e.runRunner(ctx, sess, e.testRunner(l, snap, untrusted), stream)
}

// testRunner is the runner runTests runs.
func (e *Engine) testRunner(l lang.Language, snap *sandbox.Snapshot, untrusted bool) testrun.Runner {
	r := registry.TestCommandFor(l, snap, e.cfg.TestCmd).WithEnv(e.cfg.Test.Env)
	r.Git = snap.Git // a minimal repository for scripts that ask git (testrun.gitInit)
	if untrusted {
		if u, ok := l.(lang.UntrustedRuns); ok {
			r = u.Untrusted(r)
		}
	}
	return r
}

// selectedRunner is the untrusted runner narrowed to tests
// ([lang.TestSelector]); ok is false when the language cannot narrow it.
func (e *Engine) selectedRunner(l lang.Language, snap *sandbox.Snapshot, tests []testrun.Result) (testrun.Runner, bool) {
	r := e.testRunner(l, snap, true)
	sel, ok := l.(lang.TestSelector)
	if !ok || len(tests) == 0 {
		return r, false
	}
	return sel.SelectTests(r, tests)
}

func (e *Engine) runRunner(ctx context.Context, sess sandbox.Session, r testrun.Runner, stream io.Writer) (*testrun.Report, error) {
	rep, err := testrun.Run(ctx, sess, r, limits(e.cfg), stream)
	if err != nil {
		return nil, fmt.Errorf("run tests: %w", err)
	}
	return rep, nil
}

// trimOutput keeps the head and tail of s within n bytes.
func trimOutput(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n/2] + "\n… (trimmed) …\n" + s[len(s)-n/2:]
}

// timedOutWhy says why a timed-out run does not count, with the test
// that was running and the setting to raise (testrun.Timeout) when known.
func timedOutWhy(rep *testrun.Report) string {
	if rep.Timeout != nil && rep.Timeout.Note != "" {
		return "the test command " + strings.TrimPrefix(rep.Timeout.Note, "timed out: the test command ")
	}
	return "the test command timed out"
}

package agent

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// argsBackend records the argument lists of the commands its sessions run.
type argsBackend struct {
	sandbox.Backend
	mu   *sync.Mutex
	args *[][]string
}

func (b argsBackend) Start(ctx context.Context, spec sandbox.Spec) (sandbox.Session, error) {
	s, err := b.Backend.Start(ctx, spec)
	if err != nil {
		return nil, err
	}
	return argsSession{s, b}, nil
}

type argsSession struct {
	sandbox.Session
	b argsBackend
}

func (s argsSession) Run(ctx context.Context, c sandbox.Command) (*sandbox.Result, error) {
	s.b.mu.Lock()
	*s.b.args = append(*s.b.args, slices.Clone(c.Args))
	s.b.mu.Unlock()
	return s.Session.Run(ctx, c)
}

// A fix run's go test never answers from Go's test-result cache (which
// code run by an earlier iteration's tests could have written); the
// user's own `fixpoint test` keeps it, as a native go test does.
func TestUntrustedRunsSkipGoTestCache(t *testing.T) {
	skipShort(t)
	goTests := func(args [][]string) (all, counted int) {
		for _, a := range args {
			if len(a) >= 2 && a[0] == "go" && a[1] == "test" {
				all++
				if slices.Contains(a, "-count=1") {
					counted++
				}
			}
		}
		return all, counted
	}
	var mu sync.Mutex

	var fixArgs [][]string
	m := &scripted{rules: []rule{{contains: "", replies: []string{demo.GoBugFix}}}}
	e := New(testConfig(t), &Options{Model: m, Backend: argsBackend{testBackend(t), &mu, &fixArgs}})
	defer e.Close()
	res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: copyTree(t, goBugDir)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verified {
		t.Fatalf("run ended %q, want verified", res.StopReason)
	}
	if all, counted := goTests(fixArgs); all < 2 || counted != all {
		t.Errorf("fix run: %d of %d go test commands carry -count=1, want all (and at least baseline + iteration): %q", counted, all, fixArgs)
	}

	var testArgs [][]string
	e2 := New(testConfig(t), &Options{Backend: argsBackend{testBackend(t), &mu, &testArgs}})
	defer e2.Close()
	if _, err := e2.Test(t.Context(), copyTree(t, goBugDir), nil); err != nil {
		t.Fatal(err)
	}
	if all, counted := goTests(testArgs); all != 1 || counted != 0 {
		t.Errorf("fixpoint test: go test commands %q, want one without -count=1", strings.Join(slices.Concat(testArgs...), " "))
	}
}

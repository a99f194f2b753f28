package humaneval

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// Names of the baselines that --baseline times against the loop; a
// baseline's name in Summary.Baselines starts with one of them.
const (
	BaselineWarm    = "check only, warm sandbox sessions"
	BaselineOneShot = "check only, new container per check"
	BaselineHost    = "check only, bare host process, no isolation"
)

// Lanes are the loop (solver, attempts per problem) and the three
// baselines: the same check programs with no loop, on the pool's warm
// sessions, with a new session of backend per check, and as bare host
// processes. The loop is the first lane.
func Lanes(solver Solver, attempts int, pool *Pool, backend sandbox.Backend, spec sandbox.Spec, timeout time.Duration) []*Lane {
	direct := func(c Checker) Solver { return &Direct{Checker: c, Timeout: timeout} }
	return []*Lane{
		{Name: "loop", Solver: solver, Attempts: attempts},
		{Name: BaselineWarm + " (" + backend.Name() + ")", Solver: direct(pool)},
		{Name: BaselineOneShot + " (" + backend.Name() + ")", Solver: direct(&OneShot{Backend: backend, Spec: spec})},
		{Name: BaselineHost, Solver: direct(&Host{})},
	}
}

// Ratios are the targets of issue 14: the loop against the bare host
// checks (at most 2x), and a container per check against the loop (at
// least 5x). ok is false unless the baselines were timed with the loop.
func (s *Summary) Ratios() (loopVsBare, oneShotVsLoop float64, ok bool) {
	var bare, oneShot float64
	for name, b := range s.Baselines {
		switch {
		case strings.HasPrefix(name, BaselineHost):
			bare = b.Seconds
		case strings.HasPrefix(name, BaselineOneShot):
			oneShot = b.Seconds
		}
	}
	if bare <= 0 || oneShot <= 0 || s.LoopSeconds <= 0 {
		return 0, 0, false
	}
	return s.LoopSeconds / bare, oneShot / s.LoopSeconds, true
}

// Section is the HumanEval table of docs/BENCHMARKS.md: the loop and the
// baselines of one run, as times and as ratios.
func (s *Summary) Section() string {
	var b strings.Builder
	fmt.Fprintf(&b, "The oracle submits the canonical solutions through the whole agent loop (prompt, SEARCH/REPLACE edit, policy check, sandbox check): the harness's self-check. All %d problems, parallel %d, official 3 s timeout per check. The loop and the three check-only baselines take turns, 16 problems at a time in a new random order, so that the load of the machine falls on all of them alike.\n\n", s.Problems, s.Parallel)
	fmt.Fprintf(&b, "| run | passed | wall | vs the loop |\n|---|---|---|---|\n")
	fmt.Fprintf(&b, "| fixpoint: %s | %d/%d | %.1f s | 1.00x |\n", s.Checker, s.Passed, s.Problems, s.LoopSeconds)
	if u := s.UserLoop; u != nil && s.LoopSeconds > 0 {
		fmt.Fprintf(&b, "| the same loop as a user's run: the stub checked, a parser process per policy check | %d/%d | %.1f s | %.2fx |\n", u.Passed, s.Problems, u.Seconds, u.Seconds/s.LoopSeconds)
	}
	for _, name := range slices.Sorted(maps.Keys(s.Baselines)) {
		bl := s.Baselines[name]
		ratio := "–"
		if s.LoopSeconds > 0 {
			ratio = fmt.Sprintf("%.2fx", bl.Seconds/s.LoopSeconds)
		}
		fmt.Fprintf(&b, "| baseline: %s | %d/%d | %.1f s | %s |\n", name, bl.Passed, s.Problems, bl.Seconds, ratio)
	}
	if vsBare, oneShot, ok := s.Ratios(); ok {
		fmt.Fprintf(&b, "\nTargets (issue 14): the loop at most 2x the bare checks — **%.2fx**; a container per check at least 5x slower than the loop — **%.1fx**.\n", vsBare, oneShot)
	}
	fmt.Fprintf(&b, "\nThe loop's row is the loop's own time with the sandbox sessions warm; starting them took %.1f s, once. Per problem the loop snapshots the workspace, lends a warm session, builds the prompt, applies the edit, checks it against the policy (one persistent parser process for the whole run), syncs and runs the check, and writes the run log. It runs no check of the stub: the stub is known to fail (`StubBaseline`; `go test ./internal/bench/humaneval` checks that every stub of the dataset fails in the sandbox). Scripted-model self-checks (through the loop and a scripted OpenAI-compatible server): a model that always answers `return None` scores 0/164; one whose first attempt is broken and second canonical scores pass@1 0 and 164/164 after repair.\n", s.StartSeconds)
	return b.String()
}

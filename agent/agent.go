// Package agent turns a goal into a verified edit.
//
// [Engine.Run] drives the loop PLAN → CODE → TEST → REFLECT → CODE … → DONE
// or GAVE_UP for one [Request], reporting [Event]s as it goes, and returns a
// [Result]. Only a Result with Verified set may be applied to the user's
// files; applying is the caller's job (the CLI writes files, the LSP server
// sends workspace/applyEdit).
//
// An [Engine] (New, or Open to wire the sandbox backend, failure memory and
// model client from configuration) runs requests: it snapshots the
// workspace with its overlays, starts one warm sandbox session per run
// (or takes the one [Engine.Prewarm] started ahead, synced to the run's
// snapshot), records a baseline (or reuses the signed one of an unchanged
// state: basecache.go), then asks the [Model] for SEARCH/REPLACE edits, syncs
// them, runs the tests (in a fix, the ones that failed at baseline first,
// alone: selection.go; the whole suite once they pass, in a fresh session
// whose run is the verdict: confirm.go) and reflects until the result is verified (see
// [IsTestFile] and the rules in verify.go) or a budget or the circuit
// breaker stops it. Every prompt, reply, edit and test result goes to a
// JSON-lines run log (subpackage runlog). [BenchLoop] measures the loop's
// own cost per iteration.
//
// Subpackages: llm (the OpenAI-compatible
// model client), llmtest (a scripted OpenAI-compatible server for tests and
// demos), edit (the SEARCH/REPLACE edit contract), repomap (file tree and
// symbols for prompts), runlog (run logs and history), demo (the bundled
// scripted model for examples/go-bug), policy (checks on model-written code).
package agent

import (
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// Mode selects what a run is for.
type Mode string

const (
	// ModeSolve: the model plans, writes code and writes tests for Goal.
	ModeSolve Mode = "solve"
	// ModeFix: the project's failing tests are the goal.
	ModeFix Mode = "fix"
)

// Phase of the loop.
type Phase string

const (
	// PhasePlan is not emitted by the loop any more: the plan is the head
	// of the first code reply (PhaseCode). Kept for callers that name it.
	PhasePlan    Phase = "plan"
	PhaseCode    Phase = "code"
	PhaseTest    Phase = "test"
	PhaseReflect Phase = "reflect"
	// PhaseMemory announces the remembered failures a run's prompts use
	// ("using 1 past fix from memory: <signature> (<date>)").
	PhaseMemory Phase = "memory"
	// PhaseTrace is the traced run of the failing tests before the first
	// prompt (agent/trace.go): a key of Result.Phases, never an event's
	// phase (its progress lines are PhaseTest's).
	PhaseTrace  Phase = "trace"
	PhaseDone   Phase = "done"
	PhaseGaveUp Phase = "gave_up"
)

// Location is a place in a workspace file.
type Location struct {
	Path string `json:"path"` // workspace-relative, slash-separated
	Line int    `json:"line"` // 0-based
}

// Request is one run.
type Request struct {
	Mode Mode
	// Goal is the goal text (solve) or an optional extra instruction (fix).
	Goal string
	// Root is the workspace root on the host, absolute.
	Root string
	// Overlays are unsaved editor buffers (workspace-relative path → text).
	// They win over the files on disk in the snapshot the run works on.
	Overlays map[string][]byte
	// Focus lists files the user is looking at, most relevant first.
	Focus []string
	// GoalComment, when set, is the line holding a `fixpoint: <goal>`
	// comment; the verified edit removes that line.
	GoalComment *Location
	// Baseline, when set, is the report of the tests on the unchanged
	// workspace, known to the caller (a benchmark whose stub is known to
	// fail): the run uses it instead of running the baseline tests. It
	// must describe the workspace as it is; the verdict compares against
	// it.
	Baseline *testrun.Report
}

// Event reports progress. Events are delivered synchronously from the run's
// goroutine; a slow handler slows the run.
type Event struct {
	RunID         string          `json:"run_id"`
	Phase         Phase           `json:"phase"`
	Iteration     int             `json:"iteration"` // 1-based; 0 before the first
	MaxIterations int             `json:"max_iterations"`
	Message       string          `json:"message"`          // one human line: "Iteration 2/6 · running tests · 3 failed"
	Report        *testrun.Report `json:"report,omitempty"` // set after each test run
	TokensIn      int             `json:"tokens_in"`        // run totals so far
	TokensOut     int             `json:"tokens_out"`
	// Delta is streamed model text (only for phase code/plan/reflect while
	// the model is replying); most consumers ignore it.
	Delta string `json:"-"`
}

// FileChange is one file the run changed, relative to the snapshot it
// started from.
type FileChange struct {
	Path    string `json:"path"`
	Before  []byte `json:"-"` // nil when Created
	After   []byte `json:"-"` // nil when Deleted
	Created bool   `json:"created,omitempty"`
	Deleted bool   `json:"deleted,omitempty"`
}

// Iteration summarises one CODE → TEST round.
type Iteration struct {
	N         int           `json:"n"`
	Passed    int           `json:"passed"`
	Failed    int           `json:"failed"`
	Signature string        `json:"signature,omitempty"` // normalised failure signature
	Progress  string        `json:"progress,omitempty"`  // improving|regressing|stable
	Malformed int           `json:"malformed,omitempty"` // replies whose edits did not apply
	Duration  time.Duration `json:"duration"`
	// Phase timings inside the iteration.
	ModelTime   time.Duration `json:"model_time"`
	SyncTime    time.Duration `json:"sync_time"`
	TestTime    time.Duration `json:"test_time"` // the test command's own time, as measured in the sandbox
	ParseTime   time.Duration `json:"parse_time"`
	MemoryTime  time.Duration `json:"memory_time"`
	SandboxTime time.Duration `json:"sandbox_time"` // whole Run call, test command included
	// ConfirmTime is the verifying run in a fresh session (start, sync,
	// tests), when the working session's tests passed.
	ConfirmTime time.Duration `json:"confirm_time,omitempty"`
	// Targeted: the iteration ran only the tests that failed at baseline
	// (lang.TestSelector); Passed and Failed count those.
	Targeted bool `json:"targeted,omitempty"`
}

// Result is the outcome of a run.
type Result struct {
	RunID      string       `json:"run_id"`
	Mode       Mode         `json:"mode"`
	Goal       string       `json:"goal,omitempty"`
	Verified   bool         `json:"verified"`
	StopReason string       `json:"stop_reason"` // "verified", "max iterations (6)", "circuit breaker: …", "token budget", "cancelled", …
	Changes    []FileChange `json:"changes"`
	Diff       string       `json:"diff"` // unified diff of Changes
	Iterations []Iteration  `json:"iterations"`
	TokensIn   int          `json:"tokens_in"`
	TokensOut  int          `json:"tokens_out"`
	Cost       float64      `json:"cost,omitempty"` // USD, when prices are configured
	Wall       time.Duration
	Phases     map[Phase]time.Duration `json:"phases"`
	Final      *testrun.Report         `json:"final,omitempty"` // the last test report
	Baseline   *testrun.Report         `json:"baseline,omitempty"`
	LogPath    string                  `json:"log_path,omitempty"`
	Memories   []string                `json:"memories,omitempty"` // ids of memory records shown to the model
	// FullRuns counts the runs of the whole suite (the baseline, an
	// iteration's when its tests could not be narrowed, a flaky re-run,
	// each verification in a fresh session); TargetedRuns the runs of
	// the failing tests only. BaselineReused is when the reused baseline
	// was recorded (zero: it ran, or the request gave it).
	FullRuns     int `json:"full_runs"`
	TargetedRuns int `json:"targeted_runs"`
	// CancelledRuns counts the verifying runs of the whole suite started
	// beside a run of the failing tests (agent/prestart.go) and cancelled
	// because those failed: not in FullRuns.
	CancelledRuns  int       `json:"cancelled_runs,omitempty"`
	BaselineReused time.Time `json:"baseline_reused,omitzero"`
	// TraceTime is the traced run of the failing tests before the first
	// prompt (agent.trace; lang.Tracer), its session's command included;
	// TracedFiles the workspace files its trace says ran. Zero when no
	// trace ran (the language has no tracer, a reused baseline's trace,
	// a given baseline). Not a test run: in neither count above.
	TraceTime   time.Duration `json:"trace_time,omitempty"`
	TracedFiles int           `json:"traced_files,omitempty"`
}

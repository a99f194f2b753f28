package humaneval

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/agent/edit"
	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/python"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// The pool lends a fixed number of sessions: a run starts its own one at a
// time on it.
var _ agent.LendingBackend = (*Pool)(nil)

// Workspace layout of one problem. solution.py starts as the prompt; the
// model completes it. tests/tail.py is what the official evaluator appends
// after the completion; .gitignore hides it from the model's prompts and
// tools (it still reaches the sandbox), so the model sees what a HumanEval
// model sees: the prompt, and then the failures of its attempts.
const (
	SolutionFile = "solution.py"
	tailFile     = "tests/tail.py"
	// CheckCmd assembles and runs the check program in the sandbox:
	// prompt + completion (solution.py), then "\n" + test + "\n" +
	// "check(entry_point)" (tests/tail.py), read by python from stdin as
	// the official evaluator exec()s one string.
	CheckCmd = "cat " + SolutionFile + " " + tailFile + " | python3 -"
)

// Agent solves problems with fixpoint's agent loop: each problem becomes a
// small workspace and an agent.Engine run in fix mode, with the problem's
// prompt as its goal, plans, edits solution.py (SEARCH/REPLACE blocks),
// runs the check in the sandbox and reflects, for up to attempts
// iterations. The engine's policy checks, edit contract, circuit breaker
// and run log all apply; the failure memory is off, so that problems stay
// independent.
type Agent struct {
	// Model answers the agent's prompts. nil means the oracle: a scripted
	// model that submits each problem's canonical solution, as a
	// SEARCH/REPLACE edit, through the same loop.
	Model agent.Model
	// Backend runs the checks. A *Pool reuses warm sessions across
	// problems instead of starting a container per problem.
	Backend sandbox.Backend
	// Config is the base configuration (sandbox limits, policy, model
	// settings); nil means the defaults. Each run gets its own copy.
	Config *config.Config
	// Dir holds the problem workspaces (work/, removed after each problem
	// unless Keep) and the run logs (data/runs/); required.
	Dir string
	// Timeout is the check program's timeout; default 3s, as the official
	// evaluator.
	Timeout time.Duration
	// Keep keeps each problem's workspace.
	Keep bool
	// RunStub runs the check on the unchanged stub before the first
	// attempt, as a user's run does. By default the run is given the
	// stub's known result instead (see StubBaseline): a function whose
	// body is only its docstring returns None and fails check().
	RunStub bool
	// ParserPerCheck starts a Python parser process per policy check, as
	// a user's run does, instead of one for every problem.
	ParserPerCheck bool

	parserOnce sync.Once
	parser     *python.Parser // one persistent policy parser for every problem
}

// Close stops what the Agent started for all problems (the policy
// parser). A Solve after Close checks Python with a process per file.
func (a *Agent) Close() error {
	a.parserOnce.Do(func() {}) // no parser starts after Close
	err := a.parser.Close()
	a.parser = nil
	return err
}

func (a *Agent) policyParser() lang.PolicyParser {
	if a.ParserPerCheck {
		return nil
	}
	a.parserOnce.Do(func() { a.parser = python.NewParser("") })
	if a.parser == nil { // no interpreter: a nil *Parser must not become a non-nil interface
		return nil
	}
	return a.parser
}

// RelaxedRules are the policy rules the benchmark turns from block to warn
// unless the configuration sets them: HumanEval/160's canonical solution
// calls eval on a built string, and the check only ever runs in the
// sandbox, never in a project.
var RelaxedRules = map[string]string{"python.eval-exec": "warn"}

// Solve implements Solver.
func (a *Agent) Solve(ctx context.Context, p Problem, attempts int) (ProblemResult, error) {
	r := ProblemResult{TaskID: p.TaskID}
	if a.Dir == "" {
		return r, errors.New("humaneval: Agent.Dir is required")
	}
	ws, err := a.workspace(p)
	if err != nil {
		return r, err
	}
	if !a.Keep {
		defer os.RemoveAll(ws)
	}
	model := a.Model
	if model == nil {
		model = oracle{p}
	}
	eng := agent.New(a.config(attempts), &agent.Options{Model: model, Backend: a.Backend, PolicyParser: a.policyParser()})
	defer eng.Close()
	req := agent.Request{Mode: agent.ModeFix, Root: ws, Goal: Goal(p), Focus: []string{SolutionFile}}
	if !a.RunStub {
		req.Baseline = StubBaseline(p)
	}
	res, err := eng.Run(ctx, req, nil)
	if err != nil {
		return r, err
	}
	r.Attempts = len(res.Iterations)
	r.TokensIn, r.TokensOut = res.TokensIn, res.TokensOut
	r.RunLog = res.LogPath
	r.ModelSeconds = res.Phases[agent.PhasePlan].Seconds()
	var sandboxTime time.Duration
	for _, it := range res.Iterations {
		r.ModelSeconds += it.ModelTime.Seconds()
		sandboxTime += it.SyncTime + it.SandboxTime
	}
	if res.Baseline != nil {
		sandboxTime += res.Baseline.Duration
	}
	r.SandboxSeconds = sandboxTime.Seconds()
	r.Completion = completion(p, res)
	if res.Verified {
		r.Passed, r.PassedAt = true, r.Attempts
		return r, nil
	}
	r.StopReason = res.StopReason
	if f := res.Final; f != nil {
		r.LastFailure = trim(f.Output)
		if f.TimedOut {
			r.LastFailure = fmt.Sprintf("timed out after %s\n%s", a.timeout(), r.LastFailure)
		}
	}
	return r, nil
}

// StubBaseline is the check's result on p's stub (solution.py holding only
// the prompt), known without running it: the entry point's body is only
// its docstring, so it returns None and check() fails. A benchmark run
// gives it to the loop instead of spending a sandbox run on it; the
// scripted return-None test in this package holds every problem of the
// dataset to it.
func StubBaseline(p Problem) *testrun.Report {
	msg := fmt.Sprintf("%s has no body yet (%s holds only the prompt), so the hidden check fails", p.EntryPoint, SolutionFile)
	rep := &testrun.Report{
		Runner: testrun.RunnerExitCode, Command: []string{"sh", "-c", CheckCmd}, ExitCode: 1, Output: msg,
		Tests: []testrun.Result{{ID: "(exit)", Name: "exit status 1", Status: testrun.StatusError, Message: msg, Excerpt: msg}},
	}
	rep.Count()
	return rep
}

// Goal is the goal the agent gets for p: the prompt itself, with what to do
// with it. The task id makes each goal unique (scripted models key on it).
func Goal(p Problem) string {
	return fmt.Sprintf("Complete the Python function `%s` in %s (%s) so that it does what its docstring says. Keep its signature; put any imports it needs in %s. The function as given:\n\n%s",
		p.EntryPoint, SolutionFile, p.TaskID, SolutionFile, p.Prompt)
}

func (a *Agent) timeout() time.Duration {
	if a.Timeout > 0 {
		return a.Timeout
	}
	return 3 * time.Second
}

// workspace writes p's workspace under a.Dir/work.
func (a *Agent) workspace(p Problem) (string, error) {
	ws := filepath.Join(a.Dir, "work", strings.NewReplacer("/", "-", "\\", "-", "..", "-").Replace(p.TaskID))
	if err := os.RemoveAll(ws); err != nil {
		return "", err
	}
	files := map[string]string{
		SolutionFile: p.Prompt,
		tailFile:     "\n" + p.Test + "\n" + "check(" + p.EntryPoint + ")\n",
		".gitignore": "tests/\n",
	}
	for rel, text := range files {
		path := filepath.Join(ws, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return "", err
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return "", err
		}
	}
	return ws, nil
}

// config is the run's configuration: the base one, with the benchmark's
// test command, timeout, attempts and data dir.
func (a *Agent) config(attempts int) *config.Config {
	var cfg config.Config
	if a.Config != nil {
		cfg = *a.Config
	} else {
		cfg = *config.Defaults(func(string) string { return "" })
	}
	cfg.TestCmd = CheckCmd
	cfg.Sandbox.Timeout = config.Duration(a.timeout())
	cfg.Agent.MaxIterations = attempts
	cfg.Agent.AllowTestEdits = false
	cfg.Policy.IncludeIgnored = false
	// tests/ is gitignored to keep it out of prompts; the sandbox needs it.
	cfg.Sandbox.Include = append(slices.Clone(cfg.Sandbox.Include), "tests/")
	cfg.DataDir = filepath.Join(a.Dir, "data")
	rules := maps.Clone(cfg.Policy.Rules)
	if rules == nil {
		rules = map[string]string{}
	}
	for k, v := range RelaxedRules {
		if _, set := rules[k]; !set {
			rules[k] = v
		}
	}
	cfg.Policy.Rules = rules
	return &cfg
}

// completion is what follows the prompt in the final solution.py (the
// whole file when the model rewrote the prompt).
func completion(p Problem, res *agent.Result) string {
	for _, c := range res.Changes {
		if c.Path == SolutionFile {
			return strings.TrimPrefix(string(c.After), p.Prompt)
		}
	}
	return ""
}

// oracle is the scripted model of --oracle: every reply is the edit that
// completes solution.py with the canonical solution. The plan prompt gets
// the same text, which the loop keeps as its plan.
type oracle struct{ p Problem }

func (o oracle) Chat(ctx context.Context, req llm.Request, onDelta func(string)) (*llm.Response, error) {
	return &llm.Response{Content: OracleReply(o.p)}, ctx.Err()
}

// OracleReply is the reply that completes solution.py with p's canonical
// solution.
func OracleReply(p Problem) string {
	return EditReply(p, p.Prompt, p.Prompt+p.CanonicalSolution)
}

// EditReply is a reply with one SEARCH/REPLACE block on solution.py.
func EditReply(p Problem, search, replace string) string {
	return "Completing `" + p.EntryPoint + "`.\n\n" + edit.Format(SolutionFile, search, replace)
}

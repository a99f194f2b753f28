package swe

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/agent/judge"
	"github.com/fixpoint-dev/fixpoint/agent/llm"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// Options configure [Run]. The zero value asks no model (set Model or
// Oracle) and reports nothing while it runs.
type Options struct {
	// Model is the user's model; ignored when Oracle is set.
	Model agent.Model
	// Oracle replies to every request with the instance's gold patch.
	Oracle bool
	// PromptOnly stops each instance at its first request: the tree is set
	// up, the test patch applied and the failing tests run (the baseline),
	// the first prompt is built and judged (target in prompt, its size),
	// and no model is asked. Verified stays false. The cheap mode for
	// tuning the context builder.
	PromptOnly bool
	// PromptDir, when set, receives each instance's first prompt as
	// <id>.prompt.txt (for reading what the context builder chose).
	PromptDir string
	// Progress receives a line per instance; nil discards.
	Progress io.Writer
	// ColdSetup times the setup phase (the runtime image, the dependency
	// install) with the fix. By default it runs before the timed run, as
	// the native time was measured with the dependencies installed.
	ColdSetup bool
	// Logger receives the engines' debug logs (where each session's start
	// goes); nil discards.
	Logger *slog.Logger
	// Reference also times the instance's test command once more, after
	// the fix, in one session of the same backend on the unfixed tree
	// (Result.Sandboxed): the suite's cost on this machine, at this
	// load, beside the corpus's native time measured when it was built.
	Reference bool
	// Parallel is how many instances run at once, each with its own
	// sessions; 0 or 1 = one at a time. On the kubernetes backend the
	// cluster places their pods.
	Parallel int
}

// Result is what one instance measured.
type Result struct {
	ID    string `json:"id"`
	Repo  string `json:"repo"`
	Split string `json:"split"`
	// Reproduced: the baseline (tests patched in, code unfixed) fails every
	// FAIL_TO_PASS test (a failing or missing test counts; a pass does not).
	Reproduced bool `json:"reproduced"`
	// Verified: fixpoint said VERIFIED and every FAIL_TO_PASS test passed.
	Verified bool `json:"verified"`
	// TargetInPrompt: the code every gold hunk edits was in the first
	// prompt; Missing names the hunks whose code was not ("file:line").
	TargetInPrompt bool     `json:"target_in_prompt"`
	Missing        []string `json:"missing,omitempty"`
	PromptBytes    int      `json:"prompt_bytes"` // the first request's
	Requests       int      `json:"requests"`
	Wall           float64  `json:"wall_seconds"`
	// Teardown is the time from the result to the run's sessions being
	// removed (in the background, as `fixpoint fix` prints the result):
	// not in Wall, which ends with the result.
	Teardown float64 `json:"teardown_seconds,omitempty"`
	// Native is twice the instance's native suite time (before and after
	// the fix), the work a fix replaces; 0 when unknown.
	Native float64 `json:"native_seconds,omitempty"`
	// Sandboxed is the test command's own time (the run inside the
	// sandbox, without the session's start or sync) on the unfixed tree
	// plus on the fixed one (twice the first when the fix was not
	// verified), in sessions of the same backend, timed right after the
	// fix in the same run (Options.Reference): the two suite runs a fix
	// replaces, at this run's load and with its caches warm; 0 when not
	// measured.
	Sandboxed float64 `json:"sandboxed_suite_seconds,omitempty"`
	// SandboxedFailed counts the tests that failed in the reference's run
	// of the fixed tree: not 0 means the reference did not time a passing
	// suite.
	SandboxedFailed int `json:"sandboxed_failed,omitempty"`
	// FullRuns and TargetedRuns count the runs of the whole suite and of
	// the failing tests only (agent.Result); a fix that costs what the
	// native runs it replaces runs the whole suite twice.
	FullRuns     int `json:"full_runs"`
	TargetedRuns int `json:"targeted_runs"`
	// TraceSeconds is the traced run of the failing tests before the
	// first prompt (agent.Result.TraceTime; 0: none ran), TracedFiles the
	// workspace files it says ran.
	TraceSeconds float64 `json:"trace_seconds,omitempty"`
	TracedFiles  int     `json:"traced_files,omitempty"`
	StopReason   string  `json:"stop_reason"`
	Error        string  `json:"error,omitempty"`
	// Timeline is the run's progress lines with the seconds since it
	// started: where a fix's wall time goes (session starts, the
	// baseline, the targeted and the verifying runs).
	Timeline []Step `json:"timeline,omitempty"`
	// Phases is Wall split by the timeline (start, baseline, model,
	// targeted, verify, end).
	Phases Phases `json:"phases_seconds"`
}

// Step is one progress line of a run and when it came.
type Step struct {
	At      float64 `json:"at_seconds"`
	Message string  `json:"message"`
}

// Run puts each instance through `fixpoint fix`, opts.Parallel at a time.
// cfg is copied; its DataDir should be a temporary directory, under which
// each instance gets its own. An instance that cannot be set up gets a
// Result with Error; Run returns an error only when ctx ends. Results are
// in the order of instances; progress lines in the order they finish.
func Run(ctx context.Context, cfg *config.Config, backend sandbox.Backend, instances []Instance, opts *Options) ([]Result, error) {
	if opts == nil {
		opts = &Options{}
	}
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	out := make([]Result, len(instances))
	ran := make([]bool, len(instances))
	next := make(chan int)
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex // guards done and progress
		done int
	)
	for range max(1, opts.Parallel) {
		// Each worker exits when next is closed.
		wg.Go(func() {
			for i := range next {
				cc := *cfg
				if cfg.DataDir != "" {
					// Own memory, baselines and run logs per instance:
					// engines running at once do not share a store.
					cc.DataDir = filepath.Join(cfg.DataDir, fmt.Sprintf("%03d", i))
					if err := os.MkdirAll(cc.DataDir, 0o700); err != nil {
						cc.DataDir = cfg.DataDir
					}
				}
				r := runInstance(ctx, &cc, backend, instances[i], opts)
				out[i], ran[i] = r, true
				mu.Lock()
				done++
				fmt.Fprintln(progress, progressLine(done, len(instances), instances[i], r, opts))
				mu.Unlock()
			}
		})
	}
feed:
	for i := range instances {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	if err := ctx.Err(); err != nil {
		var partial []Result
		for i, ok := range ran {
			if ok {
				partial = append(partial, out[i])
			}
		}
		return partial, err
	}
	return out, nil
}

// progressLine is the line Run prints when an instance ends.
func progressLine(done, total int, in Instance, r Result, opts *Options) string {
	status := "not verified"
	switch {
	case r.Error != "":
		status = "error: " + r.Error
	case r.Verified:
		status = "verified"
	case opts.PromptOnly:
		status = stopPromptOnly
	}
	missing := ""
	if len(r.Missing) > 0 {
		missing = " (not shown: " + strings.Join(r.Missing, ", ") + ")"
	}
	trace := ""
	if r.TraceSeconds > 0 {
		trace = fmt.Sprintf(" · traced %d files in %.1fs", r.TracedFiles, r.TraceSeconds)
	}
	return fmt.Sprintf("[%d/%d] %s: %s · reproduced %v · target in prompt %v%s · %d KB · %.1fs · %d full + %d targeted runs%s",
		done, total, in.ID, status, r.Reproduced, r.TargetInPrompt, missing, r.PromptBytes/1024, r.Wall, r.FullRuns, r.TargetedRuns, trace)
}

func runInstance(ctx context.Context, cfg *config.Config, backend sandbox.Backend, in Instance, opts *Options) Result {
	r := Result{ID: in.ID, Repo: in.Repo, Split: in.Split, Native: 2 * in.NativeSeconds}
	root, err := os.MkdirTemp("", "fixpoint-bench-swe-")
	if err != nil {
		r.Error = err.Error()
		return r
	}
	defer os.RemoveAll(root)
	gold, err := prepare(ctx, root, in)
	if err != nil {
		r.Error = err.Error()
		return r
	}
	var model agent.Model = opts.Model
	rec := &recorder{}
	switch {
	case opts.PromptOnly:
		model = stopModel{}
	case opts.Oracle:
		reply, err := goldReply(root, gold)
		if err != nil {
			r.Error = err.Error()
			return r
		}
		model = &oracle{reply: reply}
	}
	if model == nil {
		r.Error = "no model: set one, or use the oracle"
		return r
	}
	rec.next = model
	cc := *cfg
	cc.TestCmd = envPrefixed(in.TestCmd)
	e := agent.New(&cc, &agent.Options{Model: rec, Backend: backend, Warn: io.Discard, Logger: opts.Logger})
	defer e.Close()
	if !opts.ColdSetup {
		// A failure here is the run's to report, in its own words.
		_ = e.PrepareSetup(ctx, root)
	}
	start := time.Now()
	onEvent := func(ev agent.Event) {
		if ev.Delta == "" && ev.Message != "" {
			r.Timeline = append(r.Timeline, Step{At: time.Since(start).Round(10 * time.Millisecond).Seconds(), Message: ev.Message})
		}
	}
	res, err := e.Run(ctx, agent.Request{Mode: agent.ModeFix, Root: root}, onEvent)
	r.Wall = time.Since(start).Seconds()
	r.Phases = phasesOf(r.Timeline, r.Wall)
	// The sessions are removed in the background once the result is in
	// (agent.Engine.WaitClosing): what a user waits for before the
	// process exits, though not for the result.
	e.WaitClosing()
	r.Teardown = time.Since(start).Seconds() - r.Wall
	if err != nil {
		r.Error = err.Error()
		return r
	}
	if opts.Reference && !opts.PromptOnly {
		// After the fix, never before: it would fill the caches the fix's
		// baseline fills (the user's build cache) and make the fix cheaper.
		// The two runs a fix replaces: the tree it started from, then the
		// tree it leaves, written as a user's apply would (a suite that
		// hangs before the fix times its limit once, not twice).
		r.Sandboxed, r.SandboxedFailed = reference(ctx, e, root, res)
	}
	r.StopReason = res.StopReason
	r.FullRuns, r.TargetedRuns = res.FullRuns, res.TargetedRuns
	r.TraceSeconds, r.TracedFiles = res.TraceTime.Seconds(), res.TracedFiles
	if opts.PromptOnly {
		r.StopReason = stopPromptOnly
	}
	r.Reproduced = res.StopReason != agent.StopAlreadyPassing && noneP(res.Baseline, in.FailToPass)
	r.Verified = res.Verified && allPass(res.Final, in.FailToPass)
	prompts := rec.all()
	r.Requests = len(prompts)
	if len(prompts) > 0 {
		r.PromptBytes = len(prompts[0])
		if opts.PromptDir != "" {
			if err := os.MkdirAll(opts.PromptDir, 0o755); err == nil {
				_ = os.WriteFile(filepath.Join(opts.PromptDir, filepath.Base(in.ID)+".prompt.txt"), []byte(prompts[0]), 0o644)
			}
		}
		r.Missing = missingTargets(prompts[0], gold)
		r.TargetInPrompt = len(r.Missing) == 0
	}
	return r
}

// prepare lays out the instance's base tree with the test patch applied
// and returns the gold patch's files.
func prepare(ctx context.Context, root string, in Instance) ([]FilePatch, error) {
	if _, err := os.Stat(in.Archive); err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	if out, err := exec.CommandContext(ctx, "tar", "-xzf", in.Archive, "-C", root).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("tar -xzf %s: %v: %s", in.Archive, err, out)
	}
	tests, err := ParsePatch(in.TestPatch)
	if err != nil {
		return nil, fmt.Errorf("test_patch: %w", err)
	}
	for _, f := range tests {
		if err := applyFile(root, f); err != nil {
			return nil, fmt.Errorf("test_patch: %w", err)
		}
	}
	return ParsePatch(in.GoldPatch)
}

// applyFile applies one file's patch in root (creating or deleting it),
// with the mode git's header gives: a symbolic link (120000) is made a
// link to the patch's text, as git does (distro's test fixtures link
// etc/os-release to ../usr/lib/os-release: written as a file holding
// that path, its tests failed before and after the fix alike), and an
// executable (100755) gets its x bits. A link's target must stay in root.
func applyFile(root string, f FilePatch) error {
	if f.Path() == "" || filepath.IsAbs(f.Path()) || strings.Contains("/"+f.Path()+"/", "/../") {
		return fmt.Errorf("bad path %q", f.Path())
	}
	p := filepath.Join(root, filepath.FromSlash(f.Path()))
	var before string
	if f.Old != "" {
		old := filepath.Join(root, filepath.FromSlash(f.Old))
		if st, err := os.Lstat(old); err == nil && st.Mode()&os.ModeSymlink != 0 {
			if before, err = os.Readlink(old); err != nil {
				return err
			}
		} else {
			b, err := os.ReadFile(old)
			if err != nil {
				return err
			}
			before = string(b)
		}
	}
	if f.New == "" {
		return os.Remove(p)
	}
	after, err := f.Apply(before)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	if f.Mode == "120000" {
		target := strings.TrimSuffix(after, "\n")
		resolved := filepath.Join(filepath.Dir(p), filepath.FromSlash(target))
		if target == "" || filepath.IsAbs(target) || (resolved != root && !strings.HasPrefix(resolved, root+string(filepath.Separator))) {
			return fmt.Errorf("%s: a symbolic link to %q, outside the tree", f.Path(), target)
		}
		if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		return os.Symlink(filepath.FromSlash(target), p)
	}
	if st, err := os.Lstat(p); err == nil && st.Mode()&os.ModeSymlink != 0 {
		os.Remove(p) // a link the patch turns into a file
	}
	if err := os.WriteFile(p, []byte(after), 0o644); err != nil {
		return err
	}
	if f.Mode == "100755" {
		return os.Chmod(p, 0o755)
	}
	return nil
}

// goldReply is the oracle's reply: a plan line and the gold patch as
// SEARCH/REPLACE blocks against the files in root.
func goldReply(root string, gold []FilePatch) (string, error) {
	var b strings.Builder
	b.WriteString("Plan: apply the maintainers' fix.\n\n")
	for _, f := range gold {
		if f.New == "" {
			return "", fmt.Errorf("gold patch deletes %s: the edit format cannot", f.Old)
		}
		var before []byte
		if f.Old != "" {
			var err error
			if before, err = os.ReadFile(filepath.Join(root, filepath.FromSlash(f.Old))); err != nil {
				return "", fmt.Errorf("gold patch: %w", err)
			}
		}
		edits, err := f.Edits(string(before))
		if err != nil {
			return "", fmt.Errorf("gold patch: %w", err)
		}
		b.WriteString(edits + "\n")
	}
	return b.String(), nil
}

// missingTargets lists the gold hunks whose edited code the prompt does
// not show in a "## File:" section of their file. A hunk is shown when
// each of its change groups is: the lines the group removes with the
// context line either side (see [Hunk.Groups]) appear there together, in
// order, as consecutive non-blank lines — the place to edit, not merely
// lines like "}" or "return nil" somewhere in the file.
func missingTargets(prompt string, gold []FilePatch) []string {
	var missing []string
	for _, f := range gold {
		if f.Old == "" {
			continue // a new file: nothing to see
		}
		shown := judge.CodeLines(judge.Sections(prompt, f.Old))
		for _, h := range f.Hunks {
			ok := len(shown) > 0
			for _, g := range h.Groups {
				if !judge.ContainsRun(shown, judge.CodeLines(strings.Join(g, "\n"))) {
					ok = false
					break
				}
			}
			if !ok {
				missing = append(missing, fmt.Sprintf("%s:%d", f.Old, h.OldStart))
			}
		}
	}
	return missing
}

func noneP(rep *testrun.Report, names []string) bool {
	if rep == nil {
		return true
	}
	for _, n := range names {
		if st, ok := status(rep, n); ok && st == testrun.StatusPass {
			return false
		}
	}
	return true
}

func allPass(rep *testrun.Report, names []string) bool {
	if rep == nil {
		return false
	}
	for _, n := range names {
		if st, ok := status(rep, n); !ok || st != testrun.StatusPass {
			return false
		}
	}
	return true
}

// status finds a test by its id, or by a name that ends its id.
func status(rep *testrun.Report, name string) (testrun.Status, bool) {
	for _, t := range rep.Tests {
		if t.ID == name || t.Name == name || strings.HasSuffix(t.ID, "."+name) || strings.HasSuffix(t.ID, "::"+name) || strings.HasSuffix(t.ID, "/"+name) {
			return t.Status, true
		}
	}
	return "", false
}

// recorder passes requests to the model and keeps their prompts.
type recorder struct {
	next    agent.Model
	mu      sync.Mutex
	prompts []string
}

func (m *recorder) Chat(ctx context.Context, req llm.Request, onDelta func(string)) (*llm.Response, error) {
	var all strings.Builder
	for _, msg := range req.Messages {
		all.WriteString(msg.Content)
	}
	m.mu.Lock()
	m.prompts = append(m.prompts, all.String())
	m.mu.Unlock()
	return m.next.Chat(ctx, req, onDelta)
}

func (m *recorder) all() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.prompts...)
}

// stopPromptOnly is the StopReason of a prompt-only result.
const stopPromptOnly = "prompt only"

// errPromptOnly ends a prompt-only run at its first request.
var errPromptOnly = errors.New("prompt only: no model asked")

// stopModel answers no request: the run stops once the first prompt has
// been recorded.
type stopModel struct{}

func (stopModel) Chat(context.Context, llm.Request, func(string)) (*llm.Response, error) {
	return nil, errPromptOnly
}

// oracle replies with the gold patch.
type oracle struct{ reply string }

func (o *oracle) Chat(ctx context.Context, req llm.Request, onDelta func(string)) (*llm.Response, error) {
	var n int
	for _, msg := range req.Messages {
		n += len(msg.Content)
	}
	return &llm.Response{Content: o.reply, Usage: llm.Usage{In: (n + 3) / 4, Out: (len(o.reply) + 3) / 4}}, nil
}

// assignRe matches a shell variable assignment word (NAME=value).
var assignRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// envPrefixed returns a test_cmd that starts with variable assignments
// (`PYTHONPATH=src pytest -q`, as a shell or CI file writes it) as an `env`
// command: fixpoint runs a command without shell syntax as argv, where
// "PYTHONPATH=src" would be looked up as the program. With `env` in front
// it means the same under a shell and as argv.
func envPrefixed(cmd string) string {
	trimmed := strings.TrimLeft(cmd, " \t")
	if assignRe.MatchString(trimmed) {
		return "env " + trimmed
	}
	return cmd
}

// reference times the suite on root as the fix found it and, when the
// fix was verified, with its changes written; it returns the two times
// added and the failures of the fixed tree's run.
func reference(ctx context.Context, e *agent.Engine, root string, res *agent.Result) (float64, int) {
	before, err := e.Test(ctx, root, nil)
	if err != nil || before.Duration <= 0 {
		return 0, 0
	}
	if !res.Verified || len(res.Changes) == 0 {
		return 2 * before.Duration.Seconds(), 0
	}
	if err := agent.WriteChanges(root, res.Changes); err != nil {
		return 0, 0
	}
	after, err := e.Test(ctx, root, nil)
	if err != nil || after.Duration <= 0 {
		return 0, 0
	}
	return before.Duration.Seconds() + after.Duration.Seconds(), after.Failed
}

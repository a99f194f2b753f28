package agent

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/runlog"
	"github.com/fixpoint-dev/fixpoint/memory"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// Memory is the failure memory the loop consults and feeds; *memory.Store
// satisfies it. Several runs of one Engine may call it at once. An error
// from any method turns memory off for the rest of that run, with a
// warning; it never fails the run.
type Memory interface {
	// Recall returns up to opts.K past failures similar to query.
	Recall(ctx context.Context, query string, opts memory.RecallOptions) ([]memory.Match, error)
	// Add records a failure and returns its id.
	Add(ctx context.Context, r memory.Record) (string, error)
	// Resolve marks the failures ids as fixed by resolutionDiff.
	Resolve(ctx context.Context, ids []string, resolutionDiff, lesson string) error
	// Hit credits the failures ids that were shown to a run that went green.
	Hit(ctx context.Context, ids []string) error
}

var _ Memory = (*memory.Store)(nil)

// maxMemoryDiff bounds the diffs a memory record keeps (head and tail; a
// prompt quotes at most 600 bytes of one): a reply of megabytes must not
// grow the project's journal by megabytes per failing iteration. Masked
// before it is trimmed, so no secret is cut in two unmasked.
const maxMemoryDiff = 64 << 10

// memoryState is one run's use of the failure memory.
type memoryState struct {
	store     Memory   // nil = off (not configured, or failed and degraded)
	shownText []string // for the prompt, best first
	shownIDs  []string
	addedIDs  []string
	announced []string // ids memoryAnnounce told the user about
}

// memoryFailed turns memory off for the rest of the run with a warning.
func (r *run) memoryFailed(op string, err error) {
	r.e.warnf("failure memory is off for this run (%s: %v)", op, err)
	r.log.Write(runlog.KindWarning, 0, map[string]string{"message": "memory " + op + ": " + err.Error()})
	r.mem.store = nil
}

// memoryObserve records a failure and recalls similar past ones for the
// next prompt. Errors degrade to a warning.
func (r *run) memoryObserve(ctx context.Context, it int, rep *testrun.Report) {
	st := r.mem.store
	if st == nil || rep == nil || rep.OK() {
		return
	}
	raw := r.mask(renderFailure(rep, 4000))
	query := memory.Signature(r.lang, raw) + "\n" + trimOutput(raw, 1000)
	cfg := r.e.cfg.Memory
	matches, err := st.Recall(ctx, query, memory.RecallOptions{K: cfg.K + len(r.mem.addedIDs), Threshold: float32(cfg.Threshold), Language: r.lang})
	if err != nil {
		r.memoryFailed("recall", err)
		return
	}
	var shown []string
	var used []memory.Match
	r.mem.shownText = nil
	for _, m := range matches {
		if slices.Contains(r.mem.addedIDs, m.ID) || len(r.mem.shownText) >= cfg.K {
			continue // this run's own failures are already in the prompt
		}
		r.mem.shownText = append(r.mem.shownText, memoryLine(m))
		used = append(used, m)
		shown = append(shown, m.ID)
		if !slices.Contains(r.mem.shownIDs, m.ID) {
			r.mem.shownIDs = append(r.mem.shownIDs, m.ID)
		}
	}
	r.memoryAnnounce(it, used)
	testID := ""
	if f := rep.Failures(); len(f) > 0 {
		testID = f[0].ID
	}
	rec := memory.Record{
		Language: r.lang, TestID: testID, Excerpt: raw, Goal: r.mask(r.req.Goal),
		AttemptDiff: trimOutput(r.mask(UnifiedDiff(changesBetween(r.base, r.cur))), maxMemoryDiff), RunID: r.res.RunID,
	}
	id, err := st.Add(ctx, rec)
	if err != nil {
		r.memoryFailed("add", err)
		return
	}
	r.mem.addedIDs = append(r.mem.addedIDs, id)
	r.res.Memories = r.mem.shownIDs
	r.log.Write(runlog.KindMemory, it, map[string]any{"shown": shown, "added": []string{id}})
}

// memoryLine renders a recalled record for the prompt from what fixpoint
// observed: the failure signature, the failing test, when and by changing
// which files it was fixed, and the verified diff that fixed it. The
// record's Lesson is never quoted. Records written before this rule hold
// the model's own free text there (the "Lesson:" line of a reply), which
// would otherwise become a standing instruction to every later run on the
// project; they are still recalled, without it.
func memoryLine(m memory.Match) string {
	var b strings.Builder
	fmt.Fprintf(&b, "(similarity %.2f) %s", m.Similarity, shortSig(memory.Headline(m.Signature)))
	if m.TestID != "" {
		fmt.Fprintf(&b, " in %s", m.TestID)
	}
	switch {
	case m.Outcome == memory.OutcomeResolved:
		b.WriteString(" — fixed")
		if !m.Updated.IsZero() {
			b.WriteString(" on " + m.Updated.UTC().Format(time.DateOnly))
		}
		if files := diffFiles(m.ResolutionDiff); len(files) > 0 {
			b.WriteString(" by changing " + strings.Join(files, ", "))
		}
	default:
		b.WriteString(" — not resolved yet")
	}
	if m.ResolutionDiff != "" {
		b.WriteString("\n  fix was:\n" + indent(trimOutput(m.ResolutionDiff, 600)))
	}
	return strings.TrimRight(b.String(), "\n")
}

// diffFiles lists the files a unified diff changes, in order.
func diffFiles(diff string) []string {
	var files []string
	for _, l := range strings.Split(diff, "\n") {
		p, ok := strings.CutPrefix(l, "+++ ")
		if !ok {
			continue
		}
		p, _, _ = strings.Cut(p, "\t")
		if p == "/dev/null" {
			continue
		}
		p = strings.TrimPrefix(p, "b/")
		if !slices.Contains(files, p) {
			files = append(files, p)
		}
	}
	return files
}

// memoryAnnounce tells the user which remembered failures this run's
// prompts now use (an Event of PhaseMemory: a line on the CLI, a progress
// report and a log message in the editor), each once per run.
func (r *run) memoryAnnounce(it int, shown []memory.Match) {
	var items []string
	fixes := true
	for _, m := range shown {
		if slices.Contains(r.mem.announced, m.ID) {
			continue
		}
		r.mem.announced = append(r.mem.announced, m.ID)
		item := shortSig(memory.Headline(m.Signature))
		if d := m.Updated; !d.IsZero() {
			item += " (" + d.UTC().Format(time.DateOnly) + ")"
		}
		items = append(items, item)
		fixes = fixes && m.Outcome == memory.OutcomeResolved
	}
	if len(items) == 0 {
		return
	}
	noun := map[bool][2]string{true: {"past fix", "past fixes"}, false: {"past failure", "past failures"}}[fixes]
	n := noun[0]
	if len(items) > 1 {
		n = noun[1]
	}
	r.emit(PhaseMemory, it, fmt.Sprintf("using %d %s from memory: %s", len(items), n, strings.Join(items, "; ")), nil)
}

// memoryResolve marks this run's failures resolved with the final diff and
// an observed lesson (see lesson), and credits the memories that were shown.
func (r *run) memoryResolve(ctx context.Context) {
	st := r.mem.store
	if st == nil {
		return
	}
	if len(r.mem.addedIDs) > 0 {
		if err := st.Resolve(ctx, r.mem.addedIDs, trimOutput(r.mask(r.res.Diff), maxMemoryDiff), r.mask(r.lesson())); err != nil {
			r.memoryFailed("resolve", err)
			return
		}
	}
	if len(r.mem.shownIDs) > 0 {
		if err := st.Hit(ctx, r.mem.shownIDs); err != nil {
			r.memoryFailed("hit", err)
		}
	}
}

// lesson is what the run observed, never the model's words: the files the
// verified change touched and the failure it fixed.
func (r *run) lesson() string {
	var paths []string
	for _, c := range r.res.Changes {
		paths = append(paths, c.Path)
	}
	sig := ""
	if r.res.Baseline != nil {
		sig = shortSig(failureSignature(r.res.Baseline))
	}
	return fmt.Sprintf("Fixed by changing %s (failure was: %s).", strings.Join(paths, ", "), sig)
}

package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/termsafe"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/memory"
)

const memoryUsage = `Usage: fixpoint memory <list|search|show|forget|stats|export|import> [flags] [args]

Inspects and edits the project's failure memory: failures the agent saw in
this project and, once a later attempt went green, what fixed them.

  list               records, most recently updated first
  search "text"      records most similar to text (an error message or output)
  show ID            one record in full (a unique id prefix is enough)
  forget ID...       delete records
  forget --all       delete every record of the project
  stats              counts, embedder, journal size, corrupt entries
  export FILE        write the records as JSON lines ("-" = stdout)
  import FILE        add records from an export ("-" = stdin)

Flags go after the action. The memory lives under the data dir
(FIXPOINT_DATA_DIR, data_dir), in memory/projects/<project id>.
Example:
  fixpoint memory search --dir ~/src/app "KeyError: 'timeout'"`

func memoryCommand() *command {
	c := &command{
		name:    "memory",
		summary: "list, search, show, forget, export or import the failure memory",
		usage:   memoryUsage,
	}
	c.run = func(ctx context.Context, a *app, args []string) int {
		if len(args) == 0 {
			fmt.Fprintln(a.stderr, strings.SplitN(memoryUsage, "\n", 2)[0])
			return exitUsage
		}
		action, rest := args[0], args[1:]
		if action == "-h" || action == "--help" || action == "help" {
			newFlags(c, a.stdout).Usage()
			return exitOK
		}
		run := memoryAction(action)
		if run == nil {
			return a.fail(usagef("memory: unknown action %q (want list, search, show, forget, stats, export or import)", action))
		}
		fs := newFlags(c, a.stderr)
		dir := fs.String("dir", ".", "project `directory`")
		asJSON := fs.Bool("json", false, "print JSON")
		all := fs.Bool("all", false, "forget: every record of the project")
		k := fs.Int("k", 10, "search: number of `results`")
		limit := fs.Int("n", 50, "list: most `records` to print (0 = all)")
		if done, code := parseFlags(fs, interleave(rest)); done {
			return code
		}
		root, err := workspaceDir(*dir)
		if err != nil {
			return a.fail(err)
		}
		cfg, err := a.loadConfig(root, nil)
		if err != nil {
			return a.fail(err)
		}
		m := &memoryCLI{a: a, asJSON: *asJSON, all: *all, k: *k, limit: *limit, args: fs.Args()}
		if err := m.open(ctx, cfg, root); err != nil {
			return a.fail(err)
		}
		defer m.store.Close()
		if err := run(m, ctx); err != nil {
			return a.fail(err)
		}
		return exitOK
	}
	return c
}

// interleave moves flags after positional arguments to the front, so that
// "search 'text' --json" works like "search --json 'text'".
func interleave(args []string) []string {
	var flags, pos []string
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "--":
			pos = append(pos, args[i+1:]...)
			i = len(args)
		case strings.HasPrefix(a, "-") && a != "-":
			flags = append(flags, a)
			name := strings.TrimLeft(a, "-")
			if (name == "dir" || name == "k" || name == "n") && i+1 < len(args) {
				flags = append(flags, args[i+1])
				i++
			}
		default:
			pos = append(pos, a)
		}
	}
	return append(append(flags, "--"), pos...)
}

type memoryCLI struct {
	a      *app
	store  *memory.Store
	asJSON bool
	all    bool
	k      int
	limit  int
	args   []string
}

func (m *memoryCLI) open(ctx context.Context, cfg *config.Config, root string) error {
	opts := &memory.Options{Root: root, Cap: cfg.Memory.Cap, Global: cfg.Memory.Global, Logger: m.a.logger}
	if cfg.Memory.Embedder == "openai" {
		base := cfg.Memory.EmbedBaseURL
		if base == "" {
			base = cfg.Model.BaseURL
		}
		emb, err := memory.NewOpenAI(memory.OpenAIOptions{BaseURL: base, APIKey: cfg.Model.APIKey, Model: cfg.Memory.EmbedModel})
		if err != nil {
			return usagef("memory.embedder openai: %v", err)
		}
		opts.Embedder = emb
	}
	st, err := memory.Open(ctx, cfg.DataDir, opts)
	if err != nil {
		return fmt.Errorf("open memory under %s: %w", cfg.DataDir, err)
	}
	m.store = st
	return nil
}

// memoryAction returns the method that implements action, or nil.
func memoryAction(action string) func(*memoryCLI, context.Context) error {
	switch action {
	case "list":
		return (*memoryCLI).list
	case "search":
		return (*memoryCLI).search
	case "show":
		return (*memoryCLI).show
	case "forget":
		return (*memoryCLI).forget
	case "stats":
		return (*memoryCLI).stats
	case "export":
		return (*memoryCLI).export
	case "import":
		return (*memoryCLI).importRecords
	}
	return nil
}

func (m *memoryCLI) nargs(action string, n int, what string) error {
	if len(m.args) != n {
		return usagef("memory %s takes %s (got %d arguments)", action, what, len(m.args))
	}
	return nil
}

func (m *memoryCLI) json(v any) error {
	enc := json.NewEncoder(termsafe.JSONWriter{W: m.a.stdout})
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func (m *memoryCLI) list(ctx context.Context) error {
	if err := m.nargs("list", 0, "no arguments"); err != nil {
		return err
	}
	recs, err := m.store.List(ctx)
	if err != nil {
		return err
	}
	total := len(recs)
	if m.limit > 0 && len(recs) > m.limit {
		recs = recs[:m.limit]
	}
	if m.asJSON {
		if recs == nil {
			recs = []memory.Record{}
		}
		return m.json(recs)
	}
	if total == 0 {
		fmt.Fprintln(m.a.stdout, "No failures remembered for this project yet.")
		return nil
	}
	tw := tabwriter.NewWriter(m.a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tUPDATED\tLANG\tOUTCOME\tHITS\tERROR")
	for _, r := range recs {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%s\n", termsafe.Strip(r.ID), ago(r.Updated), termsafe.Strip(dash(r.Language)), termsafe.Strip(r.Outcome), r.Hits, termsafe.Strip(clip(headline(r.Signature), 70)))
	}
	tw.Flush()
	if total > len(recs) {
		fmt.Fprintf(m.a.stdout, "(%d of %d records; -n 0 lists all)\n", len(recs), total)
	}
	return nil
}

func (m *memoryCLI) search(ctx context.Context) error {
	if len(m.args) == 0 {
		return usagef("memory search takes the text to search for")
	}
	query := strings.Join(m.args, " ")
	matches, err := m.store.Recall(ctx, query, memory.RecallOptions{K: m.k})
	if err != nil {
		return err
	}
	if m.asJSON {
		if matches == nil {
			matches = []memory.Match{}
		}
		return m.json(matches)
	}
	if len(matches) == 0 {
		fmt.Fprintln(m.a.stdout, "No similar failures.")
		return nil
	}
	tw := tabwriter.NewWriter(m.a.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SIMILARITY\tID\tOUTCOME\tERROR\tLESSON")
	for _, r := range matches {
		fmt.Fprintf(tw, "%.2f\t%s\t%s\t%s\t%s\n", r.Similarity, termsafe.Strip(r.ID), termsafe.Strip(r.Outcome), termsafe.Strip(clip(headline(r.Signature), 60)), termsafe.Strip(clip(dash(firstLineOf(r.Lesson)), 50)))
	}
	return tw.Flush()
}

func (m *memoryCLI) show(ctx context.Context) error {
	if err := m.nargs("show", 1, "one record ID"); err != nil {
		return err
	}
	r, err := m.store.Get(ctx, m.args[0])
	if errors.Is(err, memory.ErrNotFound) {
		return usagef("%v (see 'fixpoint memory list')", err)
	}
	if err != nil {
		return err
	}
	if m.asJSON {
		return m.json(r)
	}
	// Every field quotes a test, the model or the workspace: printed
	// through termsafe.
	w, safe := m.a.stdout, termsafe.Strip
	fmt.Fprintf(w, "ID:        %s\nProject:   %s\nLanguage:  %s\nTest:      %s\nOutcome:   %s\nHits:      %d\nRun:       %s\nCreated:   %s\nUpdated:   %s\n",
		safe(r.ID), safe(r.Project), safe(dash(r.Language)), safe(dash(r.TestID)), safe(r.Outcome), r.Hits, safe(dash(r.RunID)),
		r.Created.Local().Format(time.DateTime), r.Updated.Local().Format(time.DateTime))
	section := func(title, body string) {
		if strings.TrimSpace(body) == "" {
			return
		}
		fmt.Fprintf(w, "\n%s:\n%s\n", title, indentText(strings.TrimRight(safe(body), "\n")))
	}
	section("Goal", r.Goal)
	section("Lesson", r.Lesson)
	section("Signature", r.Signature)
	section("Excerpt", r.Excerpt)
	section("Attempted diff", r.AttemptDiff)
	section("Resolution diff", r.ResolutionDiff)
	return nil
}

func (m *memoryCLI) forget(ctx context.Context) error {
	if m.all {
		if len(m.args) > 0 {
			return usagef("memory forget --all takes no IDs")
		}
		st, err := m.store.Stats(ctx)
		if err != nil {
			return err
		}
		if err := m.store.ForgetAll(ctx); err != nil {
			return err
		}
		return m.done(map[string]any{"forgotten": st.Records}, fmt.Sprintf("Forgot all %d records of this project.", st.Records))
	}
	if len(m.args) == 0 {
		return usagef("memory forget takes record IDs, or --all")
	}
	var ids []string
	for _, a := range m.args {
		r, err := m.store.Get(ctx, a)
		if errors.Is(err, memory.ErrNotFound) {
			return usagef("%v (see 'fixpoint memory list')", err)
		}
		if err != nil {
			return err
		}
		ids = append(ids, r.ID)
	}
	if err := m.store.Forget(ctx, ids); err != nil {
		return err
	}
	return m.done(map[string]any{"forgotten": len(ids), "ids": ids}, fmt.Sprintf("Forgot %d record(s): %s", len(ids), strings.Join(ids, ", ")))
}

func (m *memoryCLI) done(v any, text string) error {
	if m.asJSON {
		return m.json(v)
	}
	fmt.Fprintln(m.a.stdout, text)
	return nil
}

func (m *memoryCLI) stats(ctx context.Context) error {
	if err := m.nargs("stats", 0, "no arguments"); err != nil {
		return err
	}
	st, err := m.store.Stats(ctx)
	if err != nil {
		return err
	}
	if m.asJSON {
		return m.json(st)
	}
	w := m.a.stdout
	fmt.Fprintf(w, "Project:   %s (%s)\nDirectory: %s\nEmbedder:  %s\n", termsafe.Strip(st.Project), termsafe.Strip(st.Root), termsafe.Strip(st.Dir), st.Embedder)
	fmt.Fprintf(w, "Records:   %d of %d (%d open, %d resolved), %d hits\n", st.Records, st.Cap, st.Open, st.Resolved, st.Hits)
	if len(st.Languages) > 0 {
		var langs []string
		for l, n := range st.Languages {
			langs = append(langs, fmt.Sprintf("%s %d", l, n))
		}
		sort.Strings(langs)
		fmt.Fprintf(w, "Languages: %s\n", strings.Join(langs, ", "))
	}
	fmt.Fprintf(w, "Journal:   %d bytes, %d entries\n", st.JournalBytes, st.JournalLines)
	if st.Reembedded > 0 {
		fmt.Fprintf(w, "Re-embedded %d records because the embedder changed.\n", st.Reembedded)
	}
	if st.ReadOnly {
		fmt.Fprintln(w, "Read-only: new failures cannot be recorded here.")
	}
	if len(st.Corrupt) > 0 {
		fmt.Fprintf(w, "Corrupt:   %d journal entries skipped (first at byte %d: %s)\n", len(st.Corrupt), st.Corrupt[0].Offset, termsafe.Strip(st.Corrupt[0].Reason))
	}
	if st.Global > 0 {
		fmt.Fprintf(w, "Global:    %d cross-project records\n", st.Global)
	}
	return nil
}

func (m *memoryCLI) export(ctx context.Context) error {
	if err := m.nargs("export", 1, "one FILE (- for stdout)"); err != nil {
		return err
	}
	// To stdout (a terminal, perhaps): C1, DEL and bidi characters are
	// written as JSON escapes, the same JSON without the raw bytes.
	var w io.Writer = termsafe.JSONWriter{W: m.a.stdout}
	closeFn := func() error { return nil }
	if m.args[0] != "-" {
		f, err := os.Create(m.args[0])
		if err != nil {
			return usagef("memory export: %v", err)
		}
		w, closeFn = f, f.Close
	}
	n, err := m.store.Export(ctx, w)
	if cerr := closeFn(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	if m.args[0] == "-" {
		return nil
	}
	return m.done(map[string]any{"exported": n, "file": m.args[0]}, fmt.Sprintf("Exported %d records to %s.", n, m.args[0]))
}

func (m *memoryCLI) importRecords(ctx context.Context) error {
	if err := m.nargs("import", 1, "one FILE (- for stdin)"); err != nil {
		return err
	}
	var r io.Reader = m.a.stdin
	if m.args[0] != "-" {
		f, err := os.Open(m.args[0])
		if err != nil {
			return usagef("memory import: %v", err)
		}
		defer f.Close()
		r = f
	}
	n, err := m.store.Import(ctx, r)
	if err != nil {
		return fmt.Errorf("%w (%d records imported before the error)", err, n)
	}
	return m.done(map[string]any{"imported": n}, fmt.Sprintf("Imported %d records.", n))
}

func headline(sig string) string {
	for _, l := range strings.Split(sig, "\n") {
		if strings.HasPrefix(l, "lang: ") || strings.HasPrefix(l, "test: ") || strings.HasPrefix(l, "frames: ") {
			continue
		}
		return l
	}
	return firstLineOf(sig)
}

func firstLineOf(s string) string {
	l, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return l
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func indentText(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

func ago(t time.Time) string {
	d := time.Since(t)
	switch {
	case d < time.Minute:
		return "just now"
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return t.Local().Format(time.DateOnly)
}

package agent

import (
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/agent/repomap"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// charsPerToken is the prompt size estimate: about 4 characters per token.
const charsPerToken = 4

func estimateTokens(s string) int { return (len(s) + charsPerToken - 1) / charsPerToken }

// Section markers. Scripted models (agent/demo, tests) match on them.
const (
	markPlan    = "## Task: write a plan"
	markCode    = "## Task: write the edits"
	markReflect = "## Task: reflect on the failed attempt"
)

const editFormat = `Edits use SEARCH/REPLACE blocks. Put the file path (relative to the workspace root) alone on the line
before each block:

path/to/file.ext
<<<<<<< SEARCH
exact existing lines, copied character for character
=======
replacement lines
>>>>>>> REPLACE

An empty SEARCH part creates a new file. Keep SEARCH parts short but unique in the file. Every block of a reply
must apply, or none is applied.`

// systemPrompt is the fixed instruction for a mode and language.
func systemPrompt(mode Mode, lang string) string {
	var b strings.Builder
	b.WriteString("You are fixpoint, a careful software engineer. You change a code base so that its tests pass, and your\n")
	b.WriteString("change is only accepted when the project's test command passes in a sandbox.\n\n")
	switch mode {
	case ModeFix:
		b.WriteString("Mode: fix. The failing tests are the specification. Change the code under test, never the tests:\n")
		b.WriteString("editing or adding test files or test configuration (conftest.py, runner settings, testdata) is refused,\n")
		b.WriteString("and so is deleting, skipping or weakening a test. Never touch .git, CI, editor or fixpoint settings.\n")
	default:
		b.WriteString("Mode: solve. Implement the goal and add new tests that pin it down: cover edge cases (empty input,\n")
		b.WriteString("boundaries, errors), not only the happy path. " + propertyHint(lang) + "\n")
		b.WriteString("Tests that passed before must keep passing. Deleting, skipping or weakening a test is refused.\n")
	}
	b.WriteString("\n" + editFormat + "\n")
	return b.String()
}

func propertyHint(lang string) string {
	switch lang {
	case "go":
		return "Where a property holds for all inputs, add a property-based test with testing/quick or a fuzz test with seeds."
	case "python":
		return "Where a property holds for all inputs, add a property-based test with hypothesis if it is installed (guard the import), else a table of cases."
	case "node":
		return "Where a property holds for all inputs, check it over a generated table of inputs."
	}
	return "Where a property holds for all inputs, test it over many generated inputs."
}

// promptInput is everything one prompt may show.
type promptInput struct {
	Mode          Mode
	Goal          string
	Plan          string
	RepoMap       string
	Files         []promptFile
	Failure       string   // the last test failure, rendered
	History       []string // one line per earlier attempt
	Memories      []string // past failures and what fixed them
	Feedback      string   // why the last reply was not applied
	Progress      string   // improving|regressing|stable
	Iteration     int
	MaxIterations int
	Omitted       []string // files that did not fit the budget
	Reflection    string   // the reflector's analysis of the last attempt
	LastDiff      string   // what the last attempt changed (reflect prompt only)
}

type promptFile struct {
	Path    string
	Content string
}

func (in *promptInput) goalSection(b *strings.Builder) {
	b.WriteString("## Goal\n")
	switch {
	case in.Mode == ModeFix && in.Goal != "":
		b.WriteString("Make the failing tests pass. Extra instruction: " + in.Goal + "\n\n")
	case in.Mode == ModeFix:
		b.WriteString("Make the failing tests pass without changing the tests.\n\n")
	default:
		b.WriteString(in.Goal + "\n\n")
	}
}

func (in *promptInput) planSection(b *strings.Builder) {
	if in.Plan != "" {
		b.WriteString("## Plan\n" + strings.TrimSpace(in.Plan) + "\n\n")
	}
}

// listSection writes a titled bullet list, or nothing when items is empty.
func listSection(b *strings.Builder, title string, items []string) {
	if len(items) == 0 {
		return
	}
	b.WriteString("## " + title + "\n")
	for _, it := range items {
		b.WriteString("- " + it + "\n")
	}
	b.WriteString("\n")
}

func (in *promptInput) contextSections(b *strings.Builder) {
	if in.RepoMap != "" {
		b.WriteString("## Repository map\n" + in.RepoMap + "\n")
	}
	for _, f := range in.Files {
		fmt.Fprintf(b, "## File: %s\n```\n%s", f.Path, f.Content)
		if !strings.HasSuffix(f.Content, "\n") {
			b.WriteString("\n")
		}
		b.WriteString("```\n\n")
	}
	if len(in.Omitted) > 0 {
		b.WriteString("(Not shown, to stay within the context budget: " + strings.Join(in.Omitted, ", ") + ")\n\n")
	}
}

// planPrompt asks for a short plan, no edits.
func planPrompt(in *promptInput) string {
	var b strings.Builder
	in.goalSection(&b)
	in.contextSections(&b)
	if in.Failure != "" {
		b.WriteString("## Current test results\n" + in.Failure + "\n")
	}
	b.WriteString(markPlan + "\n")
	b.WriteString("Write a short numbered plan (at most 8 lines): which files change and why")
	if in.Mode == ModeSolve {
		b.WriteString(", and which tests will pin the goal down")
	}
	b.WriteString(". Do not write edits yet.\n")
	return b.String()
}

// codePrompt asks for edits. Its size is bounded: older attempts appear as
// one line each and only the last failure is shown in full.
func codePrompt(in *promptInput) string {
	var b strings.Builder
	in.goalSection(&b)
	in.planSection(&b)
	in.contextSections(&b)
	listSection(&b, "Past failures in this project and what fixed them", in.Memories)
	listSection(&b, "Earlier attempts", in.History)
	if in.Failure != "" {
		b.WriteString("## Current test results\n" + in.Failure + "\n")
	}
	if in.Reflection != "" {
		b.WriteString("## Reflection on the last attempt\n" + in.Reflection + "\n\n")
	}
	if in.Feedback != "" {
		b.WriteString("## Your last reply was not applied\n" + in.Feedback + "\n\n")
	}
	b.WriteString(markCode + "\n")
	fmt.Fprintf(&b, "Iteration %d of %d.", in.Iteration, in.MaxIterations)
	if in.Progress != "" {
		fmt.Fprintf(&b, " Progress since the previous attempt: %s.", in.Progress)
	}
	if len(in.History) > 0 && in.Reflection == "" {
		b.WriteString(" Start with two or three lines headed \"Reflection:\" on why the last attempt failed, and a line\n\"Lesson:\" with the general lesson.")
	}
	b.WriteString(" Then give the SEARCH/REPLACE blocks that")
	if in.Mode == ModeFix {
		b.WriteString(" make the failing tests pass.\n")
	} else {
		b.WriteString(" implement the goal and add its tests.\n")
	}
	return b.String()
}

// reflectPrompt asks the reflector (model.reflector) why the last attempt
// failed and what the next one should change; no edits.
func reflectPrompt(in *promptInput) string {
	var b strings.Builder
	in.goalSection(&b)
	in.planSection(&b)
	in.contextSections(&b)
	listSection(&b, "Attempts so far", in.History)
	if in.LastDiff != "" {
		b.WriteString("## What the last attempt changed\n```diff\n" + strings.TrimRight(in.LastDiff, "\n") + "\n```\n\n")
	}
	if in.Failure != "" {
		b.WriteString("## Test results after it\n" + in.Failure + "\n")
	}
	b.WriteString(markReflect + "\n")
	if in.Progress != "" {
		fmt.Fprintf(&b, "Progress since the previous attempt: %s. ", in.Progress)
	}
	b.WriteString("In at most six lines: start with \"Reflection:\" and say why the last attempt failed and what the next\nattempt must change; end with one line \"Lesson:\" stating the general lesson. Do not write edits.\n")
	return b.String()
}

// renderFailure shows a report's failures for the model, within max chars.
func renderFailure(rep *testrun.Report, max int) string {
	if rep == nil {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Command: %s — exit code %d; %d passed, %d failed, %d skipped.\n", strings.Join(rep.Command, " "), rep.ExitCode, rep.Passed, rep.Failed, rep.Skipped)
	if rep.TimedOut {
		b.WriteString("The test command timed out.\n")
	}
	fails := rep.Failures()
	per := max / (min(len(fails), 5) + 1)
	for i, t := range fails {
		if i == 5 {
			fmt.Fprintf(&b, "… and %d more failing tests\n", len(fails)-5)
			break
		}
		loc := ""
		if t.File != "" {
			loc = fmt.Sprintf(" (%s:%d)", t.File, t.Line)
		}
		fmt.Fprintf(&b, "\n%s %s%s\n", strings.ToUpper(string(t.Status)), t.ID, loc)
		if t.Message != "" {
			b.WriteString("  " + t.Message + "\n")
		}
		if t.Expected != "" || t.Actual != "" {
			fmt.Fprintf(&b, "  expected: %s\n  actual:   %s\n", t.Expected, t.Actual)
		}
		if t.Excerpt != "" {
			b.WriteString(indent(trimOutput(t.Excerpt, per)))
		}
	}
	if len(fails) == 0 && !rep.OK() && rep.Output != "" {
		b.WriteString("\nOutput:\n" + indent(trimOutput(rep.Output, max/2)))
	}
	return trimOutput(b.String(), max)
}

func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ") + "\n"
}

var fileRefRe = regexp.MustCompile(`([A-Za-z0-9_./-]+\.(?:go|py|js|mjs|cjs|ts|tsx|jsx|rs|java|rb|c|h|cpp))(?::(\d+))?`)

// contextFiles ranks the files to show: files named in failures and stack
// traces, the focus files and overlays, files named in the goal, then
// source siblings of failing test files; include filters secrets and
// ignored files.
func contextFiles(snap *sandbox.Snapshot, req *Request, rep *testrun.Report, include func(string) bool) []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		p = strings.TrimPrefix(p, "./")
		if _, ok := snap.Files[p]; !ok || seen[p] || !include(p) {
			return
		}
		seen[p] = true
		out = append(out, p)
	}
	var failDirs []string
	if rep != nil {
		for _, t := range rep.Failures() {
			add(t.File)
			for _, f := range t.Frames {
				add(f.File)
			}
			for _, m := range fileRefRe.FindAllStringSubmatch(t.Message+"\n"+t.Excerpt, -1) {
				addRef(snap, m[1], add)
			}
			if t.File != "" {
				failDirs = append(failDirs, path.Dir(t.File))
			}
		}
		if len(rep.Failures()) == 0 {
			for _, m := range fileRefRe.FindAllStringSubmatch(rep.Output, -1) {
				addRef(snap, m[1], add)
			}
		}
	}
	for _, p := range req.Focus {
		add(p)
	}
	for _, p := range sortedKeys(req.Overlays) {
		add(p)
	}
	for _, m := range fileRefRe.FindAllStringSubmatch(req.Goal, -1) {
		addRef(snap, m[1], add)
	}
	// Local modules the chosen files import (Python, JavaScript): the code
	// under test of a failing test file.
	for _, p := range append([]string(nil), out...) {
		for _, dep := range localImports(snap, p) {
			add(dep)
		}
	}
	// Source siblings of failing tests (the code under test), then of
	// the files already chosen; for packages the directory is the unit.
	for _, p := range out {
		failDirs = append(failDirs, path.Dir(p))
	}
	for _, d := range failDirs {
		for _, p := range snap.Paths() {
			if path.Dir(p) == d && isSource(p) && !IsTestFile(p) {
				add(p)
			}
		}
	}
	for _, d := range failDirs {
		for _, p := range snap.Paths() {
			if path.Dir(p) == d && isSource(p) {
				add(p)
			}
		}
	}
	// Nothing named: the sources, smallest first (solve mode from scratch).
	if len(out) == 0 {
		ps := snap.Paths()
		sort.SliceStable(ps, func(i, j int) bool { return snap.Files[ps[i]].Size() < snap.Files[ps[j]].Size() })
		for _, p := range ps {
			if isSource(p) || path.Base(p) == "go.mod" || path.Base(p) == "package.json" || path.Base(p) == "pyproject.toml" {
				add(p)
			}
		}
	}
	return out
}

var (
	pyImportRe = regexp.MustCompile(`(?m)^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))`)
	jsImportRe = regexp.MustCompile(`(?:require\(\s*|from\s+|import\s+)['"](\.{1,2}/[^'"]+)['"]`)
)

// localImports resolves the workspace files a Python or JavaScript file
// imports: "from pkg.mod import x" → pkg/mod.py or pkg/mod/__init__.py,
// require('../src/x') → src/x.js.
func localImports(snap *sandbox.Snapshot, p string) []string {
	data, _ := snap.Text(p)
	var out []string
	try := func(cands ...string) {
		for _, c := range cands {
			c = path.Clean(c)
			if _, ok := snap.Files[c]; ok {
				out = append(out, c)
				return
			}
		}
	}
	switch path.Ext(p) {
	case ".py":
		for _, m := range pyImportRe.FindAllStringSubmatch(data, -1) {
			mod := m[1] + m[2]
			if strings.HasPrefix(mod, ".") {
				continue
			}
			rel := strings.ReplaceAll(mod, ".", "/")
			try(rel+".py", rel+"/__init__.py", path.Join(path.Dir(p), rel+".py"))
		}
	case ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".mts":
		for _, m := range jsImportRe.FindAllStringSubmatch(data, -1) {
			rel := path.Join(path.Dir(p), m[1])
			try(rel, rel+".js", rel+".ts", rel+".mjs", rel+".cjs", rel+"/index.js", rel+"/index.ts")
		}
	}
	return out
}

// addRef adds a referenced file: an exact workspace path, a path that ends
// with the reference (absolute paths inside the sandbox), or a unique base
// name.
func addRef(snap *sandbox.Snapshot, ref string, add func(string)) {
	ref = strings.TrimPrefix(ref, "./")
	if _, ok := snap.Files[ref]; ok {
		add(ref)
		return
	}
	var hits []string
	for _, p := range snap.Paths() {
		if strings.HasSuffix(ref, "/"+p) || (!strings.Contains(ref, "/") && path.Base(p) == ref) {
			hits = append(hits, p)
		}
	}
	if len(hits) == 1 {
		add(hits[0])
	}
}

func isSource(p string) bool {
	switch path.Ext(p) {
	case ".go", ".py", ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".rs", ".java", ".rb", ".c", ".h", ".cpp":
		return true
	}
	return false
}

// fitContext fills in.RepoMap and in.Files within budget characters, given
// that the rest of the prompt takes fixed characters. The repo map gets at
// most a fifth; files are taken whole, in rank order, while they fit.
func fitContext(in *promptInput, snap *sandbox.Snapshot, ranked []string, include func(string) bool, budget, fixed int) {
	avail := budget - fixed
	mapBudget := max(min(avail/5, 8000), 400)
	in.RepoMap = repomap.Build(snap, &repomap.Options{MaxBytes: mapBudget, Include: include, Relevant: ranked})
	avail -= len(in.RepoMap)
	in.Files, in.Omitted = nil, nil
	for _, p := range ranked {
		text, _ := snap.Text(p)
		c := redactText(text)
		cost := len(c) + len(p) + 20
		if cost > avail {
			in.Omitted = append(in.Omitted, p)
			continue
		}
		avail -= cost
		in.Files = append(in.Files, promptFile{Path: p, Content: c})
	}
}

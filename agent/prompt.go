package agent

import (
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/fixpoint-dev/fixpoint/agent/repomap"
	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// charsPerToken is the prompt size estimate: about 4 characters per token.
const charsPerToken = 4

func estimateTokens(s string) int { return (len(s) + charsPerToken - 1) / charsPerToken }

// Section markers. Scripted models (agent/demo, tests) match on them.
const (
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

// propertyHint is the language's own hint on property-based tests
// (lang.Prompter), or a generic one.
func propertyHint(lang string) string {
	if h := registry.PropertyHint(lang); h != "" {
		return h
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

// planOf is the plan of a code reply: its text before the first edit block
// (the prompt asks for a "Plan:" section there), at most 2000 characters.
func planOf(reply string) string {
	text := reply
	if i := strings.Index(text, "<<<<<<< SEARCH"); i >= 0 {
		text = text[:i]
		// Drop the path line that belongs to the first block.
		if j := strings.LastIndex(strings.TrimRight(text, "\n"), "\n"); j >= 0 {
			text = text[:j]
		} else {
			text = ""
		}
	}
	return trimOutput(strings.TrimSpace(text), 2000)
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
	if in.Plan == "" {
		b.WriteString(" Start with a short plan headed \"Plan:\" (at most 5 lines: which files change and why")
		if in.Mode == ModeSolve {
			b.WriteString(", which tests pin the goal down")
		}
		b.WriteString(").")
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
		b.WriteString("The test command timed out")
		if t := rep.Timeout; t != nil && len(t.Running) > 0 {
			// What the runner's output says was running: the test that hung.
			fmt.Fprintf(&b, " while running %s", strings.Join(t.Running, ", "))
		}
		b.WriteString(".\n")
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
// traces, the focus files and overlays, files named in the goal, the
// workspace files the chosen files import (Python, JavaScript), the source
// files that define symbols named by the failure (in the failing tests'
// packages and the workspace packages they import), the files holding what
// the failing tests reach through calls across those packages (see
// [callReach]), and the other sources of a failing test's directory only
// when that directory is small; code built or run only on another
// platform comes last. The rest
// of the workspace appears in the repository map. include filters secrets
// and ignored files.
func contextFiles(snap *sandbox.Snapshot, req *Request, rep *testrun.Report, include func(string) bool) []string {
	out, _ := contextRank(snap, req, rep, include)
	return out
}

// contextRank is [contextFiles] that also returns the cross-file call
// walk (see [callReach]) for the excerpts of the files it ranks.
func contextRank(snap *sandbox.Snapshot, req *Request, rep *testrun.Report, include func(string) bool) ([]string, *reach) {
	return contextRankTraced(snap, req, rep, include, nil)
}

// contextRankTraced is [contextRank] with the failing tests' trace (see
// tracerank.go): the traced files rank right after the failing tests'
// own files.
func contextRankTraced(snap *sandbox.Snapshot, req *Request, rep *testrun.Report, include func(string) bool, trace lang.Trace) ([]string, *reach) {
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
	var failDirs, testFiles []string
	if rep != nil {
		for _, t := range rep.Failures() {
			file := failureFile(snap, t)
			add(file)
			if file != "" && IsTestFile(file) && !slices.Contains(testFiles, file) {
				testFiles = append(testFiles, file)
			}
			for _, f := range t.Frames {
				add(f.File)
			}
			for _, m := range fileRefRe.FindAllStringSubmatch(t.Message+"\n"+t.Excerpt, -1) {
				addRef(snap, m[1], add)
			}
			if file != "" {
				failDirs = append(failDirs, path.Dir(file))
			}
		}
		if len(rep.Failures()) == 0 {
			for _, m := range fileRefRe.FindAllStringSubmatch(rep.Output, -1) {
				addRef(snap, m[1], add)
			}
		}
	}
	nFail := len(out) // the failing tests' own files, and those their failures name
	// Sources using a name the failure says is missing (missingnames.go).
	for _, p := range missingNameUsers(snap, rep) {
		add(p)
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
	var importDirs []string
	var imported, otherImported []string
	otherImp := platformImports(snap, out)
	for _, p := range append([]string(nil), out...) {
		files, dirs := registry.LocalImports(snap, p)
		for _, dep := range files {
			if otherImp[dep] {
				// Imported only in another platform's branch: last.
				otherImported = append(otherImported, dep)
				continue
			}
			if !seen[dep] {
				imported = append(imported, dep)
			}
			add(dep)
		}
		importDirs = append(importDirs, dirs...)
	}
	// What those modules import in turn (a package's index.js or
	// __init__.py re-exporting lib/router.js, pkg/core.py): their
	// directories are searched for the names below, not shown whole.
	for _, p := range imported {
		files, dirs := registry.LocalImports(snap, p)
		for _, dep := range files {
			importDirs = append(importDirs, path.Dir(dep))
		}
		importDirs = append(importDirs, dirs...)
	}
	for _, p := range out {
		failDirs = append(failDirs, path.Dir(p))
	}
	// Sources that define a symbol the failure names, in the directories
	// of the chosen files and the workspace packages they import (Go).
	dirs := map[string]bool{}
	for _, d := range failDirs {
		dirs[d] = true
	}
	for _, d := range importDirs {
		dirs[d] = true
	}
	// The source named after a failing test file: its conventional
	// subject, in the directories above (here) or else the one source
	// anywhere (after the definers below: a weaker pointer).
	var farNamesakes []string
	for _, tf := range testFiles {
		near, far := namesakes(snap, tf, dirs)
		for _, p := range near {
			add(p)
		}
		farNamesakes = append(farNamesakes, far...)
	}
	var otherDefiners []string
	// The identifiers on the failing lines first (the code they call), then
	// those of the messages and test names.
	for _, names := range []map[string]bool{frameNames(snap, rep), testBodyNames(snap, rep), failureNames(rep, req.Goal)} {
		for _, p := range definers(snap, dirs, names) {
			if o, err := snap.Read(p); err == nil && registry.OtherPlatform(p, o) {
				// Built only for another platform: after all the run
				// reached (below).
				otherDefiners = append(otherDefiners, p)
				continue
			}
			add(p)
		}
	}
	// The declarations the failing tests reach through calls, across the
	// files of the packages and modules above and what they import: the
	// helper two or three calls below what the test calls, in another
	// file, heaviest first.
	rc := callReach(snap, reachScope(snap, dirs, out), rep, hintNames(snap, rep, req.Goal))
	for _, p := range byWeight(rc.Files) {
		if rc.Files[p] >= reachFileMin {
			add(p)
		}
	}
	for _, p := range farNamesakes {
		add(p)
	}
	// The other sources of a failing test's directory, when it is small
	// enough to show whole (a package of a few files is one unit).
	for _, d := range failDirs {
		total := 0
		var sib []string
		for _, p := range snap.Paths() {
			if path.Dir(p) == d && isSource(p) && !IsTestFile(p) && !seen[p] {
				total += int(snap.Files[p].Size())
				sib = append(sib, p)
			}
		}
		if total <= smallDirBytes {
			for _, p := range sib {
				add(p)
			}
		}
	}
	// The package under test: a failing test's directory whose sources
	// none of the above reached (a large package, a test whose names say
	// nothing) still shows the files that declare most of what the test
	// files there use.
	for _, d := range failDirs {
		if hasSourceIn(out, d) {
			continue
		}
		for _, p := range packageUnderTest(snap, d, 2) {
			add(p)
		}
	}
	// Code only another platform builds or runs, whose declarations share
	// a reached one's name (the same fix is often due there): last.
	for _, p := range byWeight(rc.Variants) {
		add(p)
	}
	for _, p := range otherDefiners {
		add(p)
	}
	for _, p := range otherImported {
		add(p)
	}
	// What the failing tests executed (trace.go), right after their own
	// files.
	if len(trace) > 0 {
		testDirs, stems := map[string]bool{}, map[string]bool{}
		for _, p := range out[:nFail] {
			testDirs[path.Dir(p)] = true
			if k := testStem(p); k != "" {
				stems[k] = true
			}
		}
		var traced []string
		for _, p := range traceFiles(snap, trace, testDirs, stems) {
			if include(p) {
				traced = append(traced, p)
			}
		}
		if len(traced) > 0 {
			head := append(append([]string(nil), out[:nFail]...), traced...)
			for _, p := range out[nFail:] {
				if !slices.Contains(traced, p) {
					head = append(head, p)
				}
			}
			out = head
			for _, p := range traced {
				seen[p] = true
			}
		}
	}
	// Nothing named (solve mode from scratch, or a run that failed before
	// any test: the runner or the build): the project's own sources first —
	// not examples, benchmarks, docs, scripts or tests — shallowest, then
	// smallest first.
	if len(out) == 0 {
		ps := snap.Paths()
		sort.SliceStable(ps, func(i, j int) bool {
			if ti, tj := peripheral(ps[i]), peripheral(ps[j]); ti != tj {
				return !ti
			}
			if di, dj := strings.Count(ps[i], "/"), strings.Count(ps[j], "/"); di != dj {
				return di < dj
			}
			return snap.Files[ps[i]].Size() < snap.Files[ps[j]].Size()
		})
		for _, p := range ps {
			if isSource(p) || path.Base(p) == "go.mod" || path.Base(p) == "package.json" || path.Base(p) == "pyproject.toml" {
				add(p)
			}
		}
	}
	return out, rc
}

// testStem is the convention-free key of a file's base name less its
// extension and the words that mark a test (roff_test.go, test_roff.py,
// roff.test.js, roff.spec.ts, RoffTests.java → roff); "" for a name of
// test words only.
func testStem(p string) string {
	b := path.Base(p)
	if i := strings.IndexByte(b, '.'); i > 0 {
		b = b[:i]
	}
	var key string
	for _, w := range nameWords(b) {
		switch lw := strings.ToLower(w); lw {
		case "test", "tests", "spec", "specs":
		default:
			key += lw
		}
	}
	return key
}

// namesakes are the non-test sources named after test file tf (see
// [testStem]: roff_test.go → roff.go, tests/test_parser.py →
// pkg/_parser.py, test/wrap.test.js → source/wrap.js): near, those in
// tf's directory and dirs; far, when there are none, the only one in the
// project's own sources. A test file's name is the most common pointer to
// what it tests.
func namesakes(snap *sandbox.Snapshot, tf string, dirs map[string]bool) (near, far []string) {
	key := testStem(tf)
	if len(key) < 3 {
		return nil, nil
	}
	for _, p := range snap.Paths() {
		if !isSource(p) || IsTestFile(p) || testStem(p) != key {
			continue
		}
		switch {
		case path.Dir(p) == path.Dir(tf) || dirs[path.Dir(p)]:
			near = append(near, p)
		case !peripheral(p):
			far = append(far, p)
		}
	}
	if len(near) > 0 || len(far) != 1 {
		return near, nil
	}
	return nil, far
}

// failureFile is the test file of failing test t: the file its runner
// reported; else a workspace file its id names (pytest's
// tests/test_x.py::test_y, cargo's tests/t.rs::name); else the test file
// that declares it by name or title (a TAP or JSON reporter that gives
// no location: it('title') whose title ends the id). "" when none.
func failureFile(snap *sandbox.Snapshot, t testrun.Result) string {
	if f := strings.TrimPrefix(t.File, "./"); f != "" {
		return f
	}
	for _, m := range fileRefRe.FindAllStringSubmatch(t.ID, -1) {
		if _, ok := snap.Files[strings.TrimPrefix(m[1], "./")]; ok {
			return strings.TrimPrefix(m[1], "./")
		}
	}
	byName := t
	byName.Line = 0 // no file: a line number alone would match any file
	for _, p := range snap.Paths() {
		if !IsTestFile(p) || !isSource(p) {
			continue
		}
		if text, ok := snap.Text(p); ok && testDecl(strings.SplitAfter(text, "\n"), byName) >= 0 {
			return p
		}
	}
	return ""
}

// definers lists the non-test sources of dirs that declare a name of
// names, most telling first: a name few files declare weighs more than
// one every backend declares (newWatches in each of six), and files built
// only for another platform than the sandbox's (backend_windows.go, a
// //go:build solaris file) come last, since the failing run never
// executed them.
func definers(snap *sandbox.Snapshot, dirs map[string]bool, names map[string]bool) []string {
	if len(names) == 0 {
		return nil
	}
	type cand struct {
		p     string
		names []string
		other bool
		score float64
	}
	var cands []*cand
	declaredBy := map[string]int{}
	for _, p := range snap.Paths() {
		if !dirs[path.Dir(p)] || !isSource(p) || IsTestFile(p) {
			continue
		}
		src, _ := snap.Read(p)
		c := &cand{p: p}
		seen := map[string]bool{}
		for _, sym := range repomap.Symbols(p, src) {
			if n := symbolName(sym); !seen[n] && nameMatch(names, n) {
				seen[n] = true
				c.names = append(c.names, n)
				declaredBy[n]++
			}
		}
		if len(c.names) > 0 {
			c.other = registry.OtherPlatform(p, src)
			cands = append(cands, c)
		}
	}
	for _, c := range cands {
		for _, n := range c.names {
			c.score += 1 / float64(declaredBy[n])
		}
	}
	sort.SliceStable(cands, func(i, j int) bool {
		if cands[i].other != cands[j].other {
			return !cands[i].other
		}
		return cands[i].score > cands[j].score
	})
	out := make([]string, len(cands))
	for i, c := range cands {
		out[i] = c.p
	}
	return out
}

// hasSourceIn reports whether files holds a non-test source of dir d.
func hasSourceIn(files []string, d string) bool {
	for _, p := range files {
		if path.Dir(p) == d && isSource(p) && !IsTestFile(p) {
			return true
		}
	}
	return false
}

// packageUnderTest ranks the non-test sources of dir d by how many of the
// identifiers of d's test files they declare, and returns the first n
// that declare any.
func packageUnderTest(snap *sandbox.Snapshot, d string, n int) []string {
	used := map[string]bool{}
	for _, p := range snap.Paths() {
		if path.Dir(p) == d && IsTestFile(p) {
			text, _ := snap.Text(p)
			for _, w := range identRe.FindAllString(text, -1) {
				if len(w) >= 3 && !commonWords[strings.ToLower(w)] {
					used[w] = true
				}
			}
		}
	}
	type scored struct {
		p     string
		score int
	}
	var cands []scored
	for _, p := range snap.Paths() {
		if path.Dir(p) != d || !isSource(p) || IsTestFile(p) {
			continue
		}
		src, _ := snap.Read(p)
		sc := 0
		for _, sym := range repomap.Symbols(p, src) {
			if used[symbolName(sym)] {
				sc++
			}
		}
		if sc > 0 {
			cands = append(cands, scored{p, sc})
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].score > cands[j].score })
	var out []string
	for i := 0; i < len(cands) && i < n; i++ {
		out = append(out, cands[i].p)
	}
	return out
}

// peripheral reports files that are rarely the code to fix: tests,
// examples, benchmarks, docs, scripts, fixtures and vendored code.
func peripheral(p string) bool {
	if IsTestFile(p) {
		return true
	}
	for _, d := range strings.Split(path.Dir(p), "/") {
		switch strings.ToLower(d) {
		case "example", "examples", "_examples", "bench", "benches", "benchmark", "benchmarks", "doc", "docs",
			"script", "scripts", "tools", "fixtures", "testdata", "vendor", "third_party", "node_modules", "fuzz":
			return true
		}
	}
	return false
}

// smallDirBytes is the size up to which all sources of a failing test's
// directory are shown whole; larger packages show only the files the
// failure points at, and the repository map for the rest.
const smallDirBytes = 8000

var identRe = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]*`)

// failureNames collects the identifiers a failure names: in its messages
// and excerpts, and the parts of the failing test names (TestMedian/even →
// Median, test_chunks_overlap → chunks, overlap). Short and common words
// are dropped.
func failureNames(rep *testrun.Report, goal string) map[string]bool {
	names := map[string]bool{}
	addText := func(s string) {
		for _, w := range identRe.FindAllString(s, -1) {
			if len(w) >= 3 && !commonWords[strings.ToLower(w)] {
				names[w] = true
			}
		}
	}
	addText(goal)
	if rep == nil {
		return names
	}
	for _, t := range rep.Failures() {
		addText(t.Message)
		addText(t.Expected)
		addText(t.Actual)
		addText(trimOutput(t.Excerpt, 4000))
		id := t.ID
		if i := strings.Index(id, ".Test"); i >= 0 { // Go: drop the package path
			id = id[i+1:]
		}
		for _, whole := range strings.FieldsFunc(id, func(r rune) bool { return r == '/' || r == ' ' || r == '.' || r == ':' }) {
			// The test function itself (TestMedian, test_lfu), so that a
			// large test file is shown around its definition …
			if identRe.FindString(whole) == whole && len(whole) >= 3 {
				names[whole] = true
			}
			// … and the names it is made of (Median, lfu).
			for _, part := range strings.Split(whole, "_") {
				part = strings.TrimPrefix(strings.TrimPrefix(part, "Test"), "test")
				part = strings.TrimSuffix(strings.TrimSuffix(part, "Tests"), "Test")
				addText(part)
			}
			// … in every naming convention: TestIncPatchOverflow names
			// IncPatch, test_parse_version names parseVersion.
			addNameKeys(names, whole)
		}
	}
	return names
}

// nameKeyPrefix marks the normalized name keys in a name set: the runs of
// adjacent words of a test name, lower-cased and joined, which match an
// identifier whatever its convention (see [nameMatch]).
const nameKeyPrefix = "~"

// nameWords splits an identifier into its words: at underscores, at
// lower-to-upper case changes (IncPatch → Inc, Patch), before the last
// capital of an acronym (HTTPServer → HTTP, Server) and around digits.
func nameWords(id string) []string {
	var words []string
	var cur []rune
	rs := []rune(id)
	flush := func() {
		if len(cur) > 0 {
			words = append(words, string(cur))
			cur = cur[:0]
		}
	}
	for i, r := range rs {
		switch {
		case r == '_' || r == '-' || r == ' ':
			flush()
			continue
		case i > 0 && unicode.IsUpper(r) && (unicode.IsLower(rs[i-1]) || unicode.IsDigit(rs[i-1])):
			flush()
		case i > 0 && unicode.IsUpper(r) && unicode.IsUpper(rs[i-1]) && i+1 < len(rs) && unicode.IsLower(rs[i+1]):
			flush()
		case i > 0 && unicode.IsDigit(r) != unicode.IsDigit(rs[i-1]):
			flush()
		}
		cur = append(cur, r)
	}
	flush()
	return words
}

// normName is an identifier's convention-free key: its words, lower-case,
// joined (IncPatch, inc_patch, incPatch → incpatch).
func normName(id string) string { return strings.ToLower(strings.Join(nameWords(id), "")) }

// addNameKeys adds the keys of every run of adjacent words of a test
// name, less the words that only mark a test (Test, test, should, it).
func addNameKeys(names map[string]bool, testName string) {
	var words []string
	for _, w := range nameWords(testName) {
		switch strings.ToLower(w) {
		case "test", "tests", "should", "it", "spec":
			continue
		}
		words = append(words, strings.ToLower(w))
	}
	for i := range words {
		key := ""
		for j := i; j < len(words) && j < i+4; j++ {
			key += words[j]
			if len(key) >= 4 && !commonWords[key] {
				names[nameKeyPrefix+key] = true
			}
		}
	}
}

// nameMatch reports whether a declared identifier is one the failure
// names: exactly, or through a test name's words in any convention.
func nameMatch(names map[string]bool, ident string) bool {
	if names[ident] {
		return true
	}
	k := normName(ident)
	if len(k) < 4 {
		return false
	}
	if names[nameKeyPrefix+k] {
		return true
	}
	// A test named for a feature (TestTable) reaches the code that
	// handles it (handleTableCell): a test-name key of five letters or
	// more inside the identifier's words.
	for n := range names {
		if key, ok := strings.CutPrefix(n, nameKeyPrefix); ok && len(key) >= 5 && strings.Contains(k, key) {
			return true
		}
	}
	return false
}

// frameLines is how many locations per failing test (its own, then the
// innermost stack frames) lend their source line's identifiers to the
// names: the code a failing line calls is where the bug often is.
const frameLines = 3

// frameWindow is how many lines above a failing line also lend their
// identifiers (got := Max(2, 1) above if got != 2).
const frameWindow = 4

// frameNames collects the identifiers on the source lines of the first
// locations of each failure (s.curPath.Index(-2).Type() → curPath, Index,
// Type), so that the files defining them join the context.
func frameNames(snap *sandbox.Snapshot, rep *testrun.Report) map[string]bool {
	names := map[string]bool{}
	if rep == nil || snap == nil {
		return names
	}
	for i, t := range rep.Failures() {
		if i == 20 {
			break
		}
		locs := append([]testrun.Frame{{File: t.File, Line: t.Line}}, t.Frames...)
		n := 0
		for _, f := range locs {
			if n == frameLines {
				break
			}
			text, ok := snap.Text(strings.TrimPrefix(f.File, "./"))
			if !ok || f.Line <= 0 {
				continue
			}
			n++
			lines := strings.Split(text, "\n")
			if f.Line > len(lines) {
				continue
			}
			// The failing line and the lines just before it: the call whose
			// result an assertion checks is often a line or two above.
			for l := max(f.Line-frameWindow, 1); l <= f.Line; l++ {
				for _, w := range identRe.FindAllString(lines[l-1], -1) {
					if len(w) >= 3 && !commonWords[strings.ToLower(w)] {
						names[w] = true
					}
				}
			}
		}
	}
	return names
}

// testBodyMax bounds the lines of a failing test's body that lend their
// identifiers (see [testBodyNames]).
const testBodyMax = 80

var jsTitleRe = regexp.MustCompile(`\b(?:it|test|specify)(?:\.\w+)?\s*\(\s*(['"` + "`" + `])(.+?)['"` + "`" + `]`)

// testBodyNames collects the identifiers the body of each failing test
// uses: the calls that set up what its assertion checks, however far
// above the failing line (frameNames sees only a few lines). The test is
// found by its name in its file (func TestX, def test_x, it('title')),
// else as the declaration around the failing line; a test with no file
// is looked for in the test files.
func testBodyNames(snap *sandbox.Snapshot, rep *testrun.Report) map[string]bool {
	names := map[string]bool{}
	if rep == nil || snap == nil {
		return names
	}
	for i, t := range rep.Failures() {
		if i == 20 {
			break
		}
		files := []string{strings.TrimPrefix(t.File, "./")}
		if t.File == "" {
			files = nil
			for _, p := range snap.Paths() {
				if IsTestFile(p) && isSource(p) {
					files = append(files, p)
				}
			}
		}
		for _, f := range files {
			text, ok := snap.Text(f)
			if !ok {
				continue
			}
			ls := strings.SplitAfter(text, "\n")
			at := testDecl(ls, t)
			if at < 0 {
				continue
			}
			end := min(declEnd(ls, at), at+testBodyMax)
			for l := at + 1; l <= end && l < len(ls); l++ {
				for _, w := range identRe.FindAllString(ls[l], -1) {
					if len(w) >= 3 && !commonWords[strings.ToLower(w)] {
						names[w] = true
					}
				}
			}
			break
		}
	}
	return names
}

// testDecl finds the line (0-based) that declares failing test t in ls:
// a declaration named by a part of its id (the innermost part found), a
// JavaScript it/test call whose title ends its id, or else the
// declaration enclosing its failing line; -1 when none.
func testDecl(ls []string, t testrun.Result) int {
	id := t.ID
	if i := strings.Index(id, ".Test"); i >= 0 { // Go: drop the package path
		id = id[i+1:]
	}
	parts := map[string]int{}
	for i, part := range strings.FieldsFunc(id, func(r rune) bool { return r == '/' || r == ':' || r == '.' || r == ' ' }) {
		if j := strings.IndexByte(part, '['); j > 0 { // pytest parameters
			part = part[:j]
		}
		parts[part] = i + 1
	}
	best, bestRank := -1, 0
	for i, l := range ls {
		if name, ok := declName(l); ok && parts[name] > bestRank {
			best, bestRank = i, parts[name]
			continue
		}
		if m := jsTitleRe.FindStringSubmatch(l); m != nil && len(m[2]) >= 3 && (strings.HasSuffix(t.ID, m[2]) || strings.HasSuffix(t.Name, m[2])) {
			if bestRank < len(parts)+1 {
				best, bestRank = i, len(parts)+1
			}
		}
	}
	if best >= 0 || t.Line <= 0 {
		return best
	}
	for i := min(t.Line-1, len(ls)-1); i >= 0; i-- {
		if _, ok := declName(ls[i]); ok || jsTitleRe.MatchString(ls[i]) {
			if declEnd(ls, i) >= t.Line-1 {
				return i
			}
		}
	}
	return -1
}

var commonWords = map[string]bool{
	"the": true, "and": true, "want": true, "got": true, "expected": true, "actual": true, "error": true, "errors": true,
	"test": true, "tests": true, "fail": true, "failed": true, "true": true, "false": true, "nil": true, "none": true,
	"null": true, "undefined": true, "assert": true, "assertionerror": true, "equal": true, "self": true, "return": true,
	"func": true, "def": true, "for": true, "not": true, "with": true, "from": true, "import": true, "string": true,
	"int": true, "float64": true, "len": true, "main": true, "testing": true, "line": true, "file": true, "panic": true,
	"goroutine": true, "running": true, "value": true, "should": true, "was": true, "are": true, "but": true,
}

// symbolName is the bare name of a repomap symbol: "func (T) Name(x int)"
// → Name, "def Class.name" → name, "struct Name" → Name.
func symbolName(s string) string {
	if i := strings.IndexByte(s, '('); i >= 0 && strings.HasPrefix(s, "func (") {
		if j := strings.IndexByte(s, ')'); j > 0 {
			s = "func " + strings.TrimSpace(s[j+1:])
		}
	}
	if i := strings.IndexByte(s, '('); i >= 0 {
		s = s[:i]
	}
	f := strings.Fields(s)
	if len(f) == 0 {
		return ""
	}
	n := f[len(f)-1]
	if i := strings.LastIndexByte(n, '.'); i >= 0 {
		n = n[i+1:]
	}
	return n
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

// Context limits: a file larger than wholeFileMax is shown as excerpts
// around the lines the failure points at and the declarations it names;
// files together take at most contextFilesMax characters, and the repo
// map at most repoMapMax. The prompt budget (agent.context_tokens) bounds
// all of it further.
const (
	wholeFileMax    = 12000
	contextFilesMax = 24000
	repoMapMax      = 4000
	promptTarget    = 38000 // characters a first prompt should stay within (see [fitContext])
	excerptAround   = 12    // lines either side of a line the failure names
	excerptDecl     = 400   // lines a declaration spans at most (a longer one is cut)
)

// contextHints are the lines of each file the failure points at (test
// locations, stack frames) and the identifiers it names; fitContext uses
// them to cut large files down to excerpts.
type contextHints struct {
	Lines map[string][]int
	Names map[string]bool
	// Uses are the identifiers the failing tests' bodies use: they rank
	// the declarations an excerpt adds, but do not force them in.
	Uses map[string]bool
	// Frame are the identifiers on and above the failing lines (see
	// [frameNames]): a declaration they name ranks above one a message
	// names.
	Frame map[string]bool
	// Tests are the declaring lines (0-based) of the failing tests, per
	// test file.
	Tests map[string][]int
	// Reach is the cross-file call walk: the declarations it reached, per
	// file (see [callReach]); nil when none.
	Reach *reach
	// Trace is what the failing tests executed (trace.go, tracerank.go);
	// nil when untraced.
	Trace lang.Trace
	// Spectrum is what the failing tests and their packages executed,
	// with counts (spectrum.go); nil when none.
	Spectrum *spectrum
	// Missing are the names the failure says do not exist yet
	// (missingnames.go); nil when none.
	Missing []string
}

// variantOnly reports a file the walk ranks only as another platform's
// variant of what it reached.
func (h *contextHints) variantOnly(p string) bool {
	return h.Reach != nil && h.Reach.Variants[p] > 0 && h.Reach.Files[p] == 0
}

// reached is the walk's weights for the declarations of file p.
func (h *contextHints) reached(p string) map[int]float64 {
	if h.Reach == nil {
		return nil
	}
	return h.Reach.Decls[p]
}

func hintsFor(snap *sandbox.Snapshot, rep *testrun.Report, goal string) *contextHints {
	h := &contextHints{Lines: map[string][]int{}, Names: failureNames(rep, goal), Uses: testBodyNames(snap, rep), Missing: missingNames(rep),
		Frame: frameNames(snap, rep), Tests: map[string][]int{}}
	for n := range h.Frame {
		h.Names[n] = true
	}
	if rep == nil {
		return h
	}
	for _, t := range rep.Failures() {
		if f := failureFile(snap, t); f != "" {
			if text, ok := snap.Text(f); ok {
				if at := testDecl(strings.SplitAfter(text, "\n"), t); at >= 0 && !slices.Contains(h.Tests[f], at) {
					h.Tests[f] = append(h.Tests[f], at)
				}
			}
		}
		if t.File != "" && t.Line > 0 {
			h.Lines[strings.TrimPrefix(t.File, "./")] = append(h.Lines[strings.TrimPrefix(t.File, "./")], t.Line)
		}
		for _, f := range t.Frames {
			if f.File != "" && f.Line > 0 {
				h.Lines[strings.TrimPrefix(f.File, "./")] = append(h.Lines[strings.TrimPrefix(f.File, "./")], f.Line)
			}
		}
	}
	return h
}

// declRes recognise the line that starts a declaration and capture its
// name: declRe (Go, Python, JavaScript functions, classes, variables),
// Rust items and impl blocks, JavaScript functions assigned to a member
// (proto.handle = function handle(…), exports.parse = (s) => …),
// module-level assignments, and class or object methods (  async
// send(body) {).
var declRes = []*regexp.Regexp{
	declRe,
	regexp.MustCompile(`^\s*(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe|extern\s+"[^"]*")\s+)*(?:fn|struct|enum|trait|mod|union)\s+([A-Za-z_]\w*)`),
	regexp.MustCompile(`^\s*(?:unsafe\s+)?impl(?:<[^>]*>)?\s+(?:[\w:]+(?:<[^>]*>)?\s+for\s+)?([A-Za-z_]\w*)`),
	regexp.MustCompile(`^\s*(?:[A-Za-z_$][\w$]*\.)+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)`),
	// A module-level assignment (Python's _RE_NUMBER = re.compile(…),
	// TABLE: dict = {…}): at column 0 only, so that no statement inside a
	// body counts.
	regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)\s*(?::\s*[^=]+)?=[^=]`),
	regexp.MustCompile(`^\s+(?:(?:public|private|protected|static|async|get|set|override|readonly)\s+)*\*?([A-Za-z_$][\w$]*)\s*(?:<[^>]*>)?\([^)]*\)\s*(?::\s*[^{]+)?\{\s*$`),
}

// notMethod are the keywords a method-like line (if (x) {) starts with.
var notMethod = map[string]bool{"if": true, "for": true, "while": true, "switch": true, "catch": true, "function": true,
	"return": true, "with": true, "else": true, "do": true, "try": true, "match": true, "loop": true}

// declName returns the name a line declares, if it starts a declaration.
func declName(l string) (string, bool) {
	for i, re := range declRes {
		if m := re.FindStringSubmatch(l); m != nil {
			if i == len(declRes)-1 && notMethod[m[1]] {
				return "", false
			}
			return m[1], true
		}
	}
	return "", false
}

var declRe = regexp.MustCompile(`^\s*(?:export\s+)?(?:default\s+)?(?:async\s+)?(?:func\s+(?:\([^)]*\)\s*)?|def\s+|class\s+|function\*?\s+|const\s+|let\s+|var\s+|type\s+)([A-Za-z_$][\w$]*)`)

// fileExcerpt cuts content down to the windows around the hinted lines and the
// declarations of named symbols, then adds the other declarations that use
// what the failure names (see [declUnits]), most telling first, while they
// fit in max characters: the fill of [fillFiles] on one file. Lines are
// copied exactly so that SEARCH parts can quote them. ok is false when
// nothing in the file is hinted, named or used.
func fileExcerpt(content string, lines []int, names, uses map[string]bool, max int) (string, bool) {
	return excerptOf(content, 0, lines, names, uses, nil, max)
}

// The header an excerpt shows: at most headerMaxLines and headerMaxBytes;
// of a longer one (a license, a long docstring before the imports), its
// last lines, where an import or a declaration is added.
const (
	headerMaxLines = 60
	headerMaxBytes = 2500
)

// headerLines is the range of lines (0-based, inclusive) to show of a
// file whose header takes its first head lines: the header and the first
// non-blank line after it (an insertion after the imports needs the line
// below it in view too), cut to its last lines when long: at most
// headerMaxBytes, and at most budget (a fifth of the excerpt's room: a
// package's long doc comment must not crowd out the code).
func headerLines(ls []string, head, budget int) (from, to int, ok bool) {
	if head <= 0 || len(ls) == 0 {
		return 0, 0, false
	}
	to = min(head, len(ls)) - 1
	for j := to + 1; j < len(ls) && j <= to+3; j++ {
		if strings.TrimSpace(ls[j]) != "" {
			to = j
			break
		}
	}
	from = max(0, to+1-headerMaxLines)
	size := 0
	for i := from; i <= to; i++ {
		size += len(ls[i])
	}
	for from < to && size > min(headerMaxBytes, budget) {
		size -= len(ls[from])
		from++
	}
	return from, to, true
}

// headEnd is the last line of u to show as an extra: all of it, but of a
// container (a class, an impl) only its head, up to its first member:
// its members are units of their own, shown when they earn it.
func headEnd(ls []string, units []declUnit, u declUnit) int {
	to := u.to
	if isContainer(ls[u.at]) {
		for _, v := range units {
			if v.at > u.at && v.at <= u.to {
				to = min(to, v.from-1)
			}
		}
	}
	return to
}

// declUnit is one declaration of a file: lines from..to (0-based, from
// its leading comments and decorators), named when the failure names it,
// score the weight of the names its own lines use and of the calls that
// reach it.
type declUnit struct {
	from, to int
	at       int // the declaring line
	name     string
	named    bool
	score    float64
}

// callDepth is how many calls down from what the failure reaches an
// excerpt follows (see [declUnits]); each step weighs half the one above.
const callDepth = 3

// declUnits splits a file into its declarations and scores each by what
// its own lines (not those of a declaration nested in it) use of names
// and uses: an identifier the failure names or the failing test uses, or
// one that contains a word run of a failing test's name
// (TestRenameRecursive… → renamedFrom). A name used by few declarations
// weighs more than one used by many: each counts 1/(the number of
// declarations using it). A declaration the failing test uses (calls)
// scores one more.
//
// Then the calls: from the declarations the failure reaches — those it
// names, those the failing test calls, and those holding a line of its
// stack (lines, 1-based) — the declarations of this file they call,
// and those these call in turn, up to callDepth steps down, score 1/2,
// 1/4, 1/8 (a name several declarations share splits its share). The
// helper two calls below the public function a test calls is where a bug
// often is (parse → _parse_content → _parse_line), though its body names
// nothing of the failure: a small personalized PageRank over the file's
// call graph, seeded by the failure.
func declUnits(ls []string, lines []int, names, uses map[string]bool) []declUnit {
	var units []declUnit
	owner := make([]int, len(ls)) // the innermost declaration of each line, -1 none
	for i := range owner {
		owner[i] = -1
	}
	for i, l := range ls {
		name, ok := declName(l)
		if !ok {
			continue
		}
		u := declUnit{from: leadingStart(ls, i), to: declEnd(ls, i), at: i, name: name, named: nameMatch(names, name)}
		if uses[name] {
			u.score = 1
		}
		for j := u.from; j <= u.to && j < len(ls); j++ {
			owner[j] = len(units)
		}
		units = append(units, u)
	}
	var keys []string
	for n := range names {
		if k, ok := strings.CutPrefix(n, nameKeyPrefix); ok && len(k) >= 5 {
			keys = append(keys, k)
		}
	}
	// Longest first: a use counts for the most specific run it contains.
	sort.Slice(keys, func(i, j int) bool {
		if len(keys[i]) != len(keys[j]) {
			return len(keys[i]) > len(keys[j])
		}
		return keys[i] < keys[j]
	})
	used := make([]map[string]bool, len(units))
	users := map[string]int{}
	for i, l := range ls {
		u := owner[i]
		if u < 0 {
			continue
		}
		if used[u] == nil {
			used[u] = map[string]bool{}
		}
		for _, w := range identRe.FindAllString(l, -1) {
			term := ""
			if len(w) >= 3 && (names[w] || uses[w]) && !commonWords[strings.ToLower(w)] {
				term = w
			} else if len(w) >= 5 {
				k := normName(w)
				for _, key := range keys {
					if strings.Contains(k, key) {
						term = nameKeyPrefix + key
						break
					}
				}
			}
			if term != "" && !used[u][term] {
				used[u][term] = true
				users[term]++
			}
		}
	}
	for i := range units {
		for term := range used[i] {
			units[i].score += 1 / float64(users[term])
		}
	}
	for u, w := range callWeights(ls, owner, units, lines, uses) {
		units[u].score += w
	}
	return units
}

// callWeights walks the file's call graph down from the declarations the
// failure reaches (see [declUnits]) and returns the weight each other
// declaration gets: 1/2^depth at its shallowest depth, split among the
// declarations sharing its name.
func callWeights(ls []string, owner []int, units []declUnit, lines []int, uses map[string]bool) map[int]float64 {
	byName := map[string][]int{}
	for i, u := range units {
		byName[u.name] = append(byName[u.name], i)
	}
	depth := map[int]int{}
	var frontier []int
	seed := func(u int) {
		if _, ok := depth[u]; !ok && u >= 0 {
			depth[u] = 0
			frontier = append(frontier, u)
		}
	}
	for i, u := range units {
		if u.named || uses[u.name] {
			seed(i)
		}
	}
	for _, n := range lines {
		if n >= 1 && n <= len(ls) {
			seed(owner[n-1])
		}
	}
	out := map[int]float64{}
	for d := 1; d <= callDepth && len(frontier) > 0; d++ {
		var next []int
		for _, u := range frontier {
			for i := units[u].from; i <= units[u].to && i < len(ls); i++ {
				if owner[i] != u {
					continue // a nested declaration's own line
				}
				for _, w := range identRe.FindAllString(ls[i], -1) {
					for _, v := range byName[w] {
						if _, ok := depth[v]; ok || v == u {
							continue
						}
						depth[v] = d
						out[v] = 1 / float64(int(1)<<d) / float64(len(byName[w]))
						next = append(next, v)
					}
				}
			}
		}
		frontier = next
	}
	return out
}

// leadingStart is the first line of the comments and decorators directly
// above the declaration at line i, at its indentation (// doc, # comment,
// @decorator, #[attr], /** … */), or i when there are none: they belong
// to it, and an edit next to a declaration needs them in view.
func leadingStart(ls []string, i int) int {
	ind := indentOf(ls[i])
	from := i
	for j := i - 1; j >= 0 && i-j <= 40; j-- {
		t := strings.TrimSpace(ls[j])
		if t == "" {
			break
		}
		lead := strings.HasPrefix(t, "//") || strings.HasPrefix(t, "#") || strings.HasPrefix(t, "@") ||
			strings.HasPrefix(t, "/*") || strings.HasPrefix(t, "*")
		if !lead {
			// A decorator written over several lines (a route's
			// patterns): its first line (decorators.go).
			if d := decoratorStart(ls, j, ind); d >= 0 {
				from, j = d, d
				continue
			}
			break
		}
		if indentOf(ls[j]) != ind && !strings.HasPrefix(t, "*") {
			break
		}
		from = j
	}
	return from
}

func max0(n int) int { return max(n, 0) }

// declEnd is the last line of the declaration that starts at line i: the
// following lines that are blank or indented deeper, and a closing brace or
// parenthesis at its own indentation (but not the one that closes a
// signature over several lines and opens the body); at most excerptDecl
// lines.
func declEnd(ls []string, i int) int {
	ind := indentOf(ls[i])
	end := i
	for j := i + 1; j < len(ls) && j <= i+excerptDecl; j++ {
		l := strings.TrimRight(ls[j], "\r\n")
		switch {
		case strings.TrimSpace(l) == "":
			continue
		case indentOf(l) > ind:
			end = j
			continue
		case strings.HasPrefix(strings.TrimSpace(l), "}") || strings.HasPrefix(strings.TrimSpace(l), ")"):
			// The end of a signature written over several lines
			// (`) -> str:`, `) (int, error) {`) opens the body: go on.
			if t := strings.TrimSpace(l); strings.HasPrefix(t, ")") && (strings.HasSuffix(t, ":") || strings.HasSuffix(t, "{")) {
				end = j
				continue
			}
			return j
		default:
			return end
		}
	}
	return end
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " \t")) }

// fitContext fills in.RepoMap and in.Files within budget characters, given
// that the rest of the prompt takes fixed characters. The repo map gets at
// most a fifth (and repoMapMax); the files get the rest, up to
// contextFilesMax, declaration by declaration (see [fillFiles]).
func fitContext(in *promptInput, snap *sandbox.Snapshot, ranked []string, include func(string) bool, budget, fixed int, hints *contextHints) {
	if hints == nil {
		hints = &contextHints{}
	}
	avail := budget - fixed
	mapBudget := max(min(avail/5, repoMapMax), 400)
	in.RepoMap = repomap.Build(snap, &repomap.Options{MaxBytes: mapBudget, Include: include, Relevant: ranked})
	avail -= len(in.RepoMap)
	// A long failure (dozens of failing cases) takes room from the files
	// rather than growing the prompt past promptTarget, down to half
	// their share.
	room := min(contextFilesMax, avail, max(promptTarget-fixed-len(in.RepoMap), contextFilesMax/2))
	fillFiles(in, snap, ranked, max(room, 0), hints)
}

// excerptTitle is the section title of an excerpt of p.
func excerptTitle(p, text string) string {
	return p + " (excerpt; the file has " + fmt.Sprint(strings.Count(text, "\n")) + " lines)"
}

// codeFirst orders the ranked files for the budget: the first test file
// (the failing test), then the sources in their order, then the other
// test files: a second failing test (often one that timed out under load)
// should not crowd out the code the first one reaches.
func codeFirst(ranked []string) []string {
	var out, later []string
	firstTest := true
	for _, p := range ranked {
		if IsTestFile(p) && isSource(p) {
			if !firstTest {
				later = append(later, p)
				continue
			}
			firstTest = false
		}
		out = append(out, p)
	}
	return append(out, later...)
}

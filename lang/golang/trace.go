package golang

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

var _ lang.Tracer = Language{}

// A traced Go run is the narrowed run of the failing tests (SelectTests)
// with a coverage profile: `-coverprofile` written to lang.TracePath and
// `-coverpkg` naming the workspace's own modules (`mod/...` for the main
// module, or each go.work member), so that what a test executes in
// another package of the module counts too, and nothing outside it (the
// standard library, dependencies, vendor/) is instrumented. The profile
// names files by import path; ParseTrace maps them back to workspace
// paths through the go.mod files of the snapshot. -json stays, so the
// run's report parses as any other.

// Bounds on what ParseTrace reads of a profile (written by project code):
// the bytes it reads, and the spans it keeps.
const (
	maxTraceBytes = 32 << 20
	maxTraceSpans = 50000
)

// TraceTests narrows r to tests as SelectTests does and adds the coverage
// flags ([lang.Tracer]). It does not trace a runner that has a coverage
// profile or mode of its own, nor one SelectTests does not narrow. A
// nested module's runner (`go -C dir test`) is narrowed the same way,
// its profile written relative to dir.
//
// Failures that are all a package's own errors (its test binary did not
// build: `undefined: GetString` for the function the fix adds) are not
// traced: a test binary that does not build runs nothing, and one that
// dies outside a test writes no profile (round 9: four such baselines
// traced 0 files).
func (l Language) TraceTests(snap *sandbox.Snapshot, r testrun.Runner, tests []testrun.Result) (testrun.Runner, bool) {
	if packageErrorsOnly(tests) {
		return r, false
	}
	head := []string{"go"}
	dir := ""
	if len(r.Args) >= 4 && r.Args[0] == "go" && r.Args[1] == "-C" {
		head, dir = []string{"go", "-C", r.Args[2]}, path.Clean(r.Args[2])
		if path.IsAbs(dir) || dir == ".." || strings.HasPrefix(dir, "../") {
			return r, false
		}
		plain := r
		plain.Args = append([]string{"go"}, r.Args[3:]...)
		r = plain
	}
	for _, a := range r.Args {
		if strings.HasPrefix(strings.TrimLeft(a, "-"), "cover") && strings.HasPrefix(a, "-") {
			return r, false // a profile or mode of its own
		}
	}
	sel, ok := l.SelectTests(r, tests)
	if !ok {
		return r, false
	}
	if run := subtestRun(tests); run != "" {
		for i, a := range sel.Args {
			if a == "-run" && i+1 < len(sel.Args) {
				sel.Args = append(append(append([]string(nil), sel.Args[:i+1]...), run), sel.Args[i+2:]...)
				break
			}
		}
	}
	pkgs := coverPackages(snap)
	if len(pkgs) == 0 {
		return r, false
	}
	mode := "count"
	for _, a := range sel.Args {
		if a == "-race" {
			mode = "atomic" // what -race requires
		}
	}
	profile := lang.TracePath
	if dir != "" && dir != "." {
		profile = strings.Repeat("../", strings.Count(dir, "/")+1) + lang.TracePath
	}
	args := append([]string(nil), head...)
	args = append(args, sel.Args[1:2]...) // test
	args = append(args, "-covermode="+mode, "-coverpkg="+strings.Join(pkgs, ","), "-coverprofile="+profile)
	sel.Args = append(args, sel.Args[2:]...)
	sel.TracePath = lang.TracePath
	return sel, true
}

// subtestRun is a -run pattern of the failing tests down to their failing
// subtests (TestDiff/Reporter/NamedPointer → ^(TestDiff)$/^(Reporter)$/
// ^(NamedPointer)$, one alternation per level), "" when no failing test
// has a subtest: a table-driven test of five hundred cases executes
// nearly all of a package, its one failing case a path through it. A
// failing parent without a failing subtest of its own runs whole: its
// level's pattern is then not narrowed. The trace only ranks the context:
// a pattern that also runs a passing sibling costs specificity, nothing
// else.
func subtestRun(tests []testrun.Result) string {
	var leaves [][]string
	for _, t := range tests {
		if t.Package == "" || !strings.HasPrefix(t.ID, t.Package+".") {
			return ""
		}
		leaves = append(leaves, strings.Split(strings.TrimPrefix(t.ID, t.Package+"."), "/"))
	}
	// Only the leaves: a failing test whose failing subtests are listed
	// too stands for them.
	var keep [][]string
	depth := 0
	for i, a := range leaves {
		parent := false
		for j, b := range leaves {
			if i != j && len(b) > len(a) && slices.Equal(b[:len(a)], a) {
				parent = true
				break
			}
		}
		if !parent {
			keep = append(keep, a)
			depth = max(depth, len(a))
		}
	}
	if depth < 2 {
		return ""
	}
	levels := make([][]string, depth)
	for _, a := range keep {
		if len(a) < depth {
			return "" // a failing test at a shallower level runs whole: no narrowing below it
		}
		for i, e := range a {
			if e == "" {
				return ""
			}
			if q := regexp.QuoteMeta(e); !slices.Contains(levels[i], q) {
				levels[i] = append(levels[i], q)
			}
		}
	}
	parts := make([]string, depth)
	for i, l := range levels {
		parts[i] = "^(" + strings.Join(l, "|") + ")$"
	}
	return strings.Join(parts, "/")
}

// coverPackages are the -coverpkg patterns of the workspace's own
// modules: each go.work member's, or the main module's (at the root or
// the one nested module).
func coverPackages(snap *sandbox.Snapshot) []string {
	var out []string
	if mods, _ := workspaceModules(snap); len(mods) > 0 {
		for m := range mods {
			out = append(out, m+"/...")
		}
		sort.Strings(out)
		return out
	}
	d := moduleDir(snap)
	if d == "" {
		return nil
	}
	gomod, ok := snap.Text(path.Join(d, "go.mod"))
	if !ok {
		return nil
	}
	m := goModuleRe.FindStringSubmatch(gomod)
	if m == nil || strings.ContainsAny(m[2], ", \t") {
		return nil
	}
	return []string{m[2] + "/..."}
}

// traceModules maps the module path of every go.mod in the snapshot
// (outside vendor/, testdata/ and directories go ignores) to its
// workspace directory.
func traceModules(snap *sandbox.Snapshot) map[string]string {
	mods := map[string]string{}
	for p := range snap.Files {
		if path.Base(p) != "go.mod" {
			continue
		}
		d := path.Dir(p)
		if d != "." && goIgnored(d) {
			continue
		}
		text, ok := snap.Text(p)
		if !ok {
			continue
		}
		if m := goModuleRe.FindStringSubmatch(text); m != nil {
			if prev, ok := mods[m[2]]; !ok || len(d) < len(prev) {
				mods[m[2]] = d
			}
		}
	}
	return mods
}

// ParseTrace reads a coverage profile (`mode: count`, then
// `importpath/file.go:l1.c1,l2.c2 stmts count` a line) into the spans of
// lines that ran (count > 0), per workspace path ([lang.Tracer]). An
// import path maps to a file through the longest module path that
// prefixes it; a path under root (a package outside any module) maps
// by its directory. Files not in snap (the standard library, a module
// cache, a path that leaves the workspace) are dropped. At most
// maxTraceBytes of data are read and maxTraceSpans spans kept; the
// same block profiled by several test binaries counts once per binary.
func (Language) ParseTrace(snap *sandbox.Snapshot, root string, data []byte) (lang.Trace, error) {
	if len(data) > maxTraceBytes {
		data = data[:maxTraceBytes]
	}
	mods := traceModules(snap)
	var names []string
	for m := range mods {
		names = append(names, m)
	}
	// Longest first: a nested module's path is more specific than its
	// parent's.
	sort.Slice(names, func(i, j int) bool { return len(names[i]) > len(names[j]) })
	resolved := map[string]string{} // profile file → workspace path, "" dropped
	resolve := func(f string) string {
		if p, ok := resolved[f]; ok {
			return p
		}
		p := ""
		if abs := strings.TrimPrefix(f, "_"); path.IsAbs(abs) {
			// go's "_" prefix marks a directory outside GOPATH.
			p, _ = lang.TraceRel(snap, root, abs)
		} else {
			for _, m := range names {
				if rest, ok := strings.CutPrefix(f, m+"/"); ok {
					p, _ = lang.TraceRel(snap, root, path.Join(mods[m], rest))
					break
				}
			}
		}
		if !strings.HasSuffix(p, ".go") {
			p = ""
		}
		resolved[f] = p
		return p
	}
	type key struct {
		p        string
		from, to int
	}
	counts := map[key]int{}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<10)
	first := true
	for sc.Scan() {
		line := sc.Text()
		if first {
			first = false
			if !strings.HasPrefix(line, "mode:") {
				return nil, errors.New("not a Go coverage profile: no mode: line")
			}
			continue
		}
		if strings.HasPrefix(line, "mode:") || strings.TrimSpace(line) == "" {
			continue // a profile merged from several
		}
		f, from, to, n, ok := profileLine(line)
		if !ok || n <= 0 {
			continue
		}
		p := resolve(f)
		if p == "" {
			continue
		}
		k := key{p, from, to}
		if _, ok := counts[k]; !ok && len(counts) >= maxTraceSpans {
			continue
		}
		counts[k] += n
	}
	if first {
		return nil, errors.New("empty Go coverage profile")
	}
	out := lang.Trace{}
	for k, n := range counts {
		out[k.p] = append(out[k.p], lang.Span{From: k.from, To: k.to, Count: n})
	}
	for p := range out {
		sort.Slice(out[p], func(i, j int) bool {
			a, b := out[p][i], out[p][j]
			if a.From != b.From {
				return a.From < b.From
			}
			return a.To < b.To
		})
	}
	return out, nil
}

// profileLine splits `file:l1.c1,l2.c2 stmts count`.
func profileLine(line string) (file string, from, to, count int, ok bool) {
	sp := strings.LastIndexByte(line, ' ')
	if sp < 0 {
		return
	}
	count, err := strconv.Atoi(line[sp+1:])
	if err != nil {
		return
	}
	rest := line[:sp]
	sp = strings.LastIndexByte(rest, ' ')
	if sp < 0 {
		return
	}
	rest = rest[:sp]
	colon := strings.LastIndexByte(rest, ':')
	if colon <= 0 {
		return
	}
	file = rest[:colon]
	a, b, found := strings.Cut(rest[colon+1:], ",")
	if !found {
		return
	}
	from, err1 := lineOfPos(a)
	to, err2 := lineOfPos(b)
	if err1 != nil || err2 != nil || from <= 0 || to < from {
		return
	}
	return file, from, to, count, true
}

func lineOfPos(s string) (int, error) {
	l, _, ok := strings.Cut(s, ".")
	if !ok {
		return 0, fmt.Errorf("position %q", s)
	}
	return strconv.Atoi(l)
}

var _ lang.Spectra = Language{}

// SpectrumTests is TraceTests with -short (fail), and the same without
// the -run narrowing (all): every test of the failing tests' packages,
// counted (-covermode=count or atomic), for the spectrum of the failing
// tests ([lang.Spectra]). -short, in both, keeps a package's slow tests
// (a stress loop over every substring of every input) out of runs that
// only rank the context, and keeps their counts comparable.
func (l Language) SpectrumTests(snap *sandbox.Snapshot, r testrun.Runner, tests []testrun.Result) (fail, all testrun.Runner, ok bool) {
	sel, ok := l.TraceTests(snap, r, tests)
	if !ok {
		return r, r, false
	}
	short := func(narrow bool) testrun.Runner {
		out := sel
		out.Args = make([]string, 0, len(sel.Args)+1)
		for i := 0; i < len(sel.Args); i++ {
			a := sel.Args[i]
			switch {
			case !narrow && a == "-run":
				i++ // and its pattern
				continue
			case !narrow && strings.HasPrefix(a, "-run="), a == "-short":
				continue
			}
			out.Args = append(out.Args, a)
			if strings.HasPrefix(a, "-coverprofile=") {
				out.Args = append(out.Args, "-short")
			}
		}
		return out
	}
	fail, all = short(true), short(false)
	if !slices.Contains(all.Args, "-short") {
		return r, r, false
	}
	return fail, all, true
}

// packageErrorsOnly reports whether every test of tests (at least one)
// is an error of its package as a whole (its id is the package: a build
// failure, a panic outside any test), not of a test.
func packageErrorsOnly(tests []testrun.Result) bool {
	for _, t := range tests {
		if t.Status != testrun.StatusError || t.Package == "" || t.ID != t.Package {
			return false
		}
	}
	return len(tests) > 0
}

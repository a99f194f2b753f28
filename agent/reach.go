package agent

import (
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// The cross-file call walk: from the failing tests' bodies (and the lines
// of their stack frames) down the calls to the declarations they reach in
// the sources in scope — the packages and modules under test and what
// those import — whatever file each is in. The helper two or three calls
// below the function a test calls is where a bug often is (test ->
// exported function -> helper in another file -> the method it calls),
// though nothing in the failure names it. A small personalized PageRank
// over a graph of declarations and the names their lines use, seeded by
// the failure, as Aider's repository map ranks definitions.

// reachDepth is how many calls down from a failing test the walk follows;
// each step weighs half the one above. A parser's bug is often six or
// seven calls below the function a test calls (loads -> statement ->
// key/value -> value -> inline table -> string -> escape): the excerpt of
// a module the walk ranks follows that far, room permitting, while files
// are ranked by what the first reachFileDepth steps reach.
const (
	reachDepth     = 8
	reachFileDepth = 4
)

// reachScopeMax bounds the files the walk reads.
const reachScopeMax = 600

// variantShare is the share of a reached declaration's weight that its
// namesakes in code built or run only on another platform get: the fix
// is often repeated there, but the failing run never executed them, so
// they rank below everything the run reached.
const variantShare = 0.25

// reach is the walk's result: the weight of each reached declaration name
// per file, and each file's total (variants apart).
type reach struct {
	Decls    map[string]map[int]float64 // file -> declaration line (0-based) -> weight
	Files    map[string]float64         // a reached file's total weight
	Variants map[string]float64         // other-platform files: their total variant weight
}

// walkUnit is one declaration of the walk's graph.
type walkUnit struct {
	file  string
	line  int // 0-based, its declaring line
	name  string
	other bool     // built or run only on another platform
	uses  []string // the identifiers its own lines use
	kids  []int    // its nested declarations (a class's methods)
	head  bool     // a container (class, impl, struct): reaching it reaches its constructor
}

// constructors are the names of the nested declarations that construct a
// container: calling a class runs them.
var constructors = map[string]bool{"__init__": true, "__new__": true, "__post_init__": true, "constructor": true, "new": true, "init": true}

// callReach walks the calls down from what the failure reaches, through
// the source files of scope (and the failing test files, whose helpers it
// passes through but never scores).
func callReach(snap *sandbox.Snapshot, scope []string, rep *testrun.Report, names map[string]bool) *reach {
	r := &reach{Decls: map[string]map[int]float64{}, Files: map[string]float64{}, Variants: map[string]float64{}}
	if rep == nil || len(rep.Failures()) == 0 {
		return r
	}
	var units []walkUnit
	var ends []int                   // the last line of each unit in its file
	byName := map[string][]int{}     // the sources' declarations
	testByName := map[string][]int{} // the failing test files' own
	fileOwner := map[string][]int{}  // file -> the unit owning each line
	testFiles := map[string]bool{}
	helperFiles := map[string]bool{} // other test files whose helpers the failing tests call
	for _, t := range rep.Failures() {
		if f := failureFile(snap, t); f != "" {
			testFiles[f] = true
		}
	}
	files := append([]string(nil), scope...)
	for _, f := range sortedKeys(testFiles) {
		files = append(files, f)
		// The test helpers a failing test calls from its package's other
		// test files (Go): the walk passes through them too.
		for _, h := range registry.TestHelperFiles(snap, f) {
			if !testFiles[h] && len(helperFiles) < 50 {
				helperFiles[h] = true
				files = append(files, h)
			}
		}
	}
	for h := range helperFiles {
		testFiles[h] = true
	}
	sort.Strings(files)
	otherImports := platformImports(snap, files)
	seenFile := map[string]bool{}
	aliasOf := map[string][]string{} // a local name of an import -> the names it stands for
	for _, p := range files {
		if seenFile[p] {
			continue
		}
		seenFile[p] = true
		src, err := snap.Read(p)
		if err != nil {
			continue
		}
		text := string(src)
		ls := strings.SplitAfter(text, "\n")
		fileOther := registry.OtherPlatform(p, src) || otherImports[p]
		otherLines := registry.OtherPlatformLines(p, src)
		owner := make([]int, len(ls))
		for i := range owner {
			owner[i] = -1
		}
		var stack []int // open declarations, innermost last
		for i, l := range ls {
			name, ok := declName(l)
			if !ok {
				continue
			}
			end := declEnd(ls, i)
			for len(stack) > 0 && ends[stack[len(stack)-1]] < i {
				stack = stack[:len(stack)-1]
			}
			u := walkUnit{file: p, line: i, name: name, other: fileOther || inRanges(otherLines, i+1), head: isContainer(l)}
			idx := len(units)
			if len(stack) > 0 {
				units[stack[len(stack)-1]].kids = append(units[stack[len(stack)-1]].kids, idx)
			}
			units = append(units, u)
			ends = append(ends, end)
			for j := i; j <= end && j < len(ls); j++ {
				owner[j] = idx
			}
			stack = append(stack, idx)
			switch {
			case testFiles[p]:
				testByName[name] = append(testByName[name], idx)
			case !u.other:
				byName[name] = append(byName[name], idx)
			}
		}
		for i, l := range ls {
			u := owner[i]
			if u < 0 {
				continue
			}
			if !testFiles[p] {
				units[u].uses = append(units[u].uses, identRe.FindAllString(l, -1)...)
				continue
			}
			// A test's own lines lend only what they call: a table of
			// cases names every type and option of the package, the call
			// under test is what reaches the bug.
			for _, m := range callRe.FindAllStringSubmatch(l, -1) {
				units[u].uses = append(units[u].uses, m[1])
			}
		}
		fileOwner[p] = owner
		// What its imports rename (from .num import parse as _parse): a
		// call of the local name reaches the declaration.
		for local, decl := range registry.ImportAliases(p, src) {
			if !slices.Contains(aliasOf[local], decl) {
				aliasOf[local] = append(aliasOf[local], decl)
			}
		}
	}
	// A failing case of a table-driven test (TestDiff/Reporter/NamedPointer,
	// test_x[case-id]) is built by the helpers whose text holds its label:
	// the other helpers' tables, which name half the package, are not on
	// its way.
	labels := caseLabels(rep)
	caseHelper := func(v int) bool {
		if len(labels) == 0 {
			return true
		}
		un := units[v]
		text, _ := snap.Text(un.file)
		ls := strings.SplitAfter(text, "\n")
		body := strings.Join(ls[un.line:min(ends[v]+1, len(ls))], "")
		for _, l := range labels {
			if strings.Contains(body, l) {
				return true
			}
		}
		return false
	}
	// The walk, layer by layer: layer d holds the declarations d calls
	// below the failing tests (a test file's own helpers, which the test
	// calls on its way to the code, take no step). weight is 1/2^(d-1) at
	// the shallowest layer reached, split among the declarations sharing
	// the name called.
	depth := map[int]int{}
	weight := map[int]float64{}
	layers := make([][]int, reachDepth+2)
	visit := func(u, d int, w float64) {
		if u < 0 || d > reachDepth {
			return
		}
		if _, ok := depth[u]; ok {
			return
		}
		depth[u] = d
		weight[u] = w
		layers[d] = append(layers[d], u)
	}
	// Layer 0: the failing tests' own declarations and the declarations
	// holding a line of a failure's location or stack.
	// A test that is a call, not a declaration (test('title', () => {…})
	// at a JavaScript module's top level), or a failing line outside any
	// declaration, is a unit of its own: the calls of its lines.
	bodyUnit := func(f string, from, to int) int {
		text, _ := snap.Text(f)
		ls := strings.SplitAfter(text, "\n")
		u := walkUnit{file: f, line: from, name: ""}
		for i := max(from, 0); i <= to && i < len(ls); i++ {
			for _, m := range callRe.FindAllStringSubmatch(ls[i], -1) {
				u.uses = append(u.uses, m[1])
			}
		}
		units = append(units, u)
		ends = append(ends, to)
		return len(units) - 1
	}
	setupNames := registry.TestSetupNames()
	for _, t := range rep.Failures() {
		f := failureFile(snap, t)
		if owner, ok := fileOwner[f]; ok {
			text, _ := snap.Text(f)
			ls := strings.SplitAfter(text, "\n")
			if at := testDecl(ls, t); at >= 0 && at < len(owner) {
				if owner[at] >= 0 {
					visit(owner[at], 0, 1)
				} else {
					visit(bodyUnit(f, at, declEnd(ls, at)), 0, 1)
				}
				// The setup the framework runs before it (setUp,
				// beforeEach): what that constructs, the test runs.
				for _, s := range setupBlocks(ls, at, setupNames) {
					if s < len(owner) && owner[s] >= 0 && units[owner[s]].line == s {
						visit(owner[s], 0, 1)
					} else {
						visit(bodyUnit(f, s, declEnd(ls, s)), 0, 1)
					}
				}
			}
		}
		locs := append([]testrun.Frame{{File: t.File, Line: t.Line}}, t.Frames...)
		for _, fr := range locs {
			if owner, ok := fileOwner[strings.TrimPrefix(fr.File, "./")]; ok && fr.Line >= 1 && fr.Line <= len(owner) {
				if owner[fr.Line-1] >= 0 {
					visit(owner[fr.Line-1], 0, 1)
				} else if testFiles[strings.TrimPrefix(fr.File, "./")] {
					visit(bodyUnit(strings.TrimPrefix(fr.File, "./"), fr.Line-1-frameWindow, fr.Line-1), 0, 1)
				}
			}
		}
	}
	// Layer 1: the default export of a module a failing test file imports
	// (module.exports = function render…, export default …): what the
	// test calls under its own local name.
	for f := range testFiles {
		imported, _ := registry.LocalImports(snap, f)
		for _, p := range imported {
			owner := fileOwner[p]
			text, _ := snap.Text(p)
			for i, l := range strings.SplitAfter(text, "\n") {
				if i < len(owner) && owner[i] >= 0 && units[owner[i]].line == i && defaultExportRe.MatchString(l) {
					visit(owner[i], 1, 1)
				}
			}
		}
	}
	// Layer 1: the declarations the failure names exactly (a message, a
	// failing line).
	for _, n := range sortedKeys(names) {
		for _, v := range byName[n] {
			visit(v, 1, 1/float64(len(byName[n])))
		}
	}
	for d := 0; d < reachDepth; d++ {
		share := 1 / float64(int(1)<<d)       // of a declaration at layer d+1
		for k := 0; k < len(layers[d]); k++ { // grows: test helpers join the layer
			u := layers[d][k]
			seen := map[string]bool{}
			for _, w := range units[u].uses {
				if len(w) < 2 || seen[w] {
					continue
				}
				seen[w] = true
				if testFiles[units[u].file] {
					for _, v := range testByName[w] {
						if v != u && (units[v].file == units[u].file || helperFiles[units[v].file]) && caseHelper(v) {
							visit(v, d, weight[u])
						}
					}
				}
				for _, n := range append([]string{w}, aliasOf[w]...) {
					for _, v := range byName[n] {
						if v == u {
							continue
						}
						w := share / float64(len(byName[n]))
						visit(v, d+1, w)
						if units[v].head {
							for _, k := range units[v].kids {
								if constructors[units[k].name] && !units[k].other {
									visit(k, d+1, w)
								}
							}
						}
					}
				}
			}
		}
	}
	// The weights, per file; tests pass the walk on but are not its result.
	reachedName := map[string]map[string]float64{} // dir -> name -> weight, for the variants
	for u, w := range weight {
		un := units[u]
		if testFiles[un.file] || un.other {
			continue
		}
		if r.Decls[un.file] == nil {
			r.Decls[un.file] = map[int]float64{}
		}
		r.Decls[un.file][un.line] = w
		if depth[u] <= reachFileDepth {
			r.Files[un.file] += w
		}
		d := path.Dir(un.file)
		if reachedName[d] == nil {
			reachedName[d] = map[string]float64{}
		}
		reachedName[d][un.name] = max(reachedName[d][un.name], w)
	}
	// The platform variants: a declaration of code built or run only on
	// another platform that shares a reached declaration's name, in the
	// same directory (backend_windows.go beside backend_inotify.go, the
	// win32 branch of a module), gets a share of its weight.
	for _, un := range units {
		if !un.other || testFiles[un.file] {
			continue
		}
		w := reachedName[path.Dir(un.file)][un.name] * variantShare
		if w <= 0 {
			continue
		}
		if r.Decls[un.file] == nil {
			r.Decls[un.file] = map[int]float64{}
		}
		r.Decls[un.file][un.line] = w
		r.Variants[un.file] += w
	}
	return r
}

// caseLabels are the labels of the failing cases of table-driven tests:
// the parts of a Go test id after the function's name
// (TestDiff/Reporter/NamedPointer: Reporter, NamedPointer), a pytest
// parameter id (test_x[empty-input]: empty-input); at least 4 characters.
func caseLabels(rep *testrun.Report) []string {
	var out []string
	for _, t := range rep.Failures() {
		id := t.ID
		if i := strings.Index(id, ".Test"); i >= 0 {
			id = id[i+1:]
		}
		parts := strings.Split(id, "/")
		cands := parts[1:]
		if i := strings.IndexByte(id, '['); i > 0 && strings.HasSuffix(id, "]") {
			cands = append(cands, id[i+1:len(id)-1])
		}
		for _, c := range cands {
			if len(c) >= 4 && !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// callRe matches a call (name(, name!( for a Rust macro, name<T>().
var callRe = regexp.MustCompile(`([A-Za-z_$][\w$]*)\s*(?:!\s*)?(?:<[\w\s,:<>]*>\s*)?\(`)

// defaultExportRe matches the line that declares a JavaScript module's
// default export.
var defaultExportRe = regexp.MustCompile(`^\s*(?:module\.exports\s*=|export\s+default\b|exports\.default\s*=)`)

// isContainer reports a declaration line that opens a container of
// declarations: a class, a Rust impl or trait, a Go or Rust struct.
func isContainer(l string) bool {
	t := strings.TrimSpace(l)
	for _, w := range []string{"export ", "default ", "pub ", "abstract ", "unsafe "} {
		t = strings.TrimPrefix(t, w)
	}
	for _, k := range []string{"class ", "impl ", "impl<", "trait ", "struct ", "interface "} {
		if strings.HasPrefix(t, k) {
			return true
		}
	}
	return false
}

func inRanges(rs [][2]int, line int) bool {
	for _, r := range rs {
		if line >= r[0] && line <= r[1] {
			return true
		}
	}
	return false
}

// reachScope is the set of source files the walk reads: the non-test
// sources of dirs, the files given, and, two imports deep, the workspace
// files and packages these import (a module's helpers in another module
// of the package, an internal package a Go package imports).
func reachScope(snap *sandbox.Snapshot, dirs map[string]bool, files []string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(p string) {
		if seen[p] || len(out) >= reachScopeMax || !isSource(p) || IsTestFile(p) {
			return
		}
		if _, ok := snap.Files[p]; !ok {
			return
		}
		seen[p] = true
		out = append(out, p)
	}
	addDir := func(d string) {
		for _, p := range snap.Paths() {
			if path.Dir(p) == d {
				add(p)
			}
		}
	}
	for _, d := range sortedKeys(dirs) {
		addDir(d)
	}
	for _, p := range files {
		add(p)
	}
	for range 2 {
		n := len(out)
		for _, p := range out[:n] {
			fs, ds := registry.LocalImports(snap, p)
			for _, f := range fs {
				add(f)
			}
			for _, d := range ds {
				addDir(d)
			}
		}
	}
	return out
}

// reachFileMin is the weight a file's reached declarations must add up to
// for the walk to rank the file: one declaration three calls below the test.
const reachFileMin = 0.2

// byWeight lists the keys of w, heaviest first (ties by path).
func byWeight(w map[string]float64) []string {
	ks := sortedKeys(w)
	sort.SliceStable(ks, func(i, j int) bool { return w[ks[i]] > w[ks[j]] })
	return ks
}

// hintNames are the identifiers the failure names exactly: its messages,
// test names and the lines of its locations (the walk's depth-1 seeds).
func hintNames(snap *sandbox.Snapshot, rep *testrun.Report, goal string) map[string]bool {
	names := failureNames(rep, goal)
	for n := range frameNames(snap, rep) {
		names[n] = true
	}
	return names
}

// platformImports returns the workspace files that files import only in
// branches another platform takes (if sys.platform == "win32": from ._win
// import size): modules the failing run on linux never loaded.
func platformImports(snap *sandbox.Snapshot, files []string) map[string]bool {
	only, also := map[string]bool{}, map[string]bool{}
	for _, p := range files {
		src, err := snap.Read(p)
		if err != nil {
			continue
		}
		all, _ := registry.LocalImports(snap, p)
		rs := registry.OtherPlatformLines(p, src)
		if len(rs) == 0 {
			for _, f := range all {
				also[f] = true
			}
			continue
		}
		// The same file with the other platforms' branches blanked: what
		// it still imports, linux imports.
		ls := strings.SplitAfter(string(src), "\n")
		for i := range ls {
			if inRanges(rs, i+1) {
				ls[i] = "\n"
			}
		}
		kept, _ := registry.LocalImports(snap.With(map[string][]byte{p: []byte(strings.Join(ls, ""))}), p)
		for _, f := range all {
			if slices.Contains(kept, f) {
				also[f] = true
			} else {
				only[f] = true
			}
		}
	}
	for f := range also {
		delete(only, f)
	}
	return only
}

// setupBlocks returns the lines (0-based) of the test file ls that open
// a setup the framework runs before the test declared at line at: a
// setup method or function (def setUp, setup_method) or a setup hook's
// call (beforeEach(() => {, test.beforeEach(…)) above it whose block the
// test is in (no line between them is indented less than the setup).
func setupBlocks(ls []string, at int, names map[string]bool) []int {
	var out []int
	for i := 0; i < at && i < len(ls); i++ {
		t := strings.TrimSpace(ls[i])
		name, ok := declName(ls[i])
		if !ok || !names[name] {
			m := callRe.FindStringSubmatchIndex(t)
			if m == nil || !names[t[m[2]:m[3]]] || strings.TrimLeft(t[:m[2]], "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_$.") != "" {
				continue
			}
		}
		ind := indentOf(ls[i])
		if indentOf(ls[at]) < ind {
			continue
		}
		inside := true
		for j := i + 1; j < at; j++ {
			if strings.TrimSpace(ls[j]) != "" && indentOf(ls[j]) < ind {
				inside = false
				break
			}
		}
		if inside {
			out = append(out, i)
		}
	}
	return out
}

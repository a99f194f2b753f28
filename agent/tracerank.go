package agent

import (
	"math"
	"path"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// How the trace (trace.go) ranks the context. A failing test may execute
// hundreds of declarations: the test framework, helpers its own file
// defines, vendored code, the package's plumbing. So:
//
//   - only the project's own sources count: not test files, not
//     peripheral code (vendor/, testdata/, examples/, tools/; see
//     [peripheral]);
//   - files: a traced namesake of a failing test's file first (the
//     trace confirms the module the test's name points at), then the
//     traced files of the failing tests' own directories, then the others, each group by how much of it ran (the code
//     under test runs most of the failing test's path), at most
//     traceRankMax of them, right after the failing tests' own files in
//     [contextRank];
//   - declarations: one that ran scores by specificity, 1/√(the
//     declarations that ran in its file) (the one function that ran in a
//     long module is a strong pointer, one of eighty a weak one), less
//     for one that ran very often (a helper called in a loop), see
//     [traceWeights]; a long one is shown as the lines that ran
//     ([tracePieces]); the first pass takes at most traceCoreMax of the
//     declarations only the trace points at, best first, and the rest
//     rank in the last pass above what nothing points at.
//
// The static signals stay: a declaration the failure names and the trace
// saw gets both scores.

// traceRankMax is how many traced files rank right after the failing
// tests' own files.
const traceRankMax = 4

// traceCoreMax is how many declarations only the trace points at are part
// of the fill's first pass.
const traceCoreMax = 12

// scoreTraced is a declaration that ran, × its weight (1 when it is the
// only one that ran in its file): between a name on the failing line
// (scoreFramed) and one a message names (scoreNamed).
const scoreTraced = 24

// traceCoreMin is the least weight of a traced-only declaration in the
// first pass: one of more than about 40 that ran in its file is not.
const traceCoreMin = 0.15

// tracedSource reports whether the trace of p may rank the context.
func tracedSource(p string) bool { return isSource(p) && !peripheral(p) }

// traceFiles ranks the traced files (see above): a namesake of a failing
// test's file (stems: their [testStem]s; tests/test_c_generator.py names
// pycparser/c_generator.py) first, since the trace confirms that the test
// ran the module its name points at; then those in dirs (the failing
// tests' directories); then by the lines that ran.
func traceFiles(snap *sandbox.Snapshot, trace lang.Trace, dirs, stems map[string]bool) []string {
	type tf struct {
		p     string
		named bool
		near  bool
		lines int
	}
	var fs []tf
	for p, spans := range trace {
		if _, ok := snap.Files[p]; !ok || !tracedSource(p) {
			continue
		}
		lines := map[int]bool{}
		for _, s := range spans {
			for l := s.From; l <= s.To && l-s.From < 400; l++ {
				lines[l] = true
			}
		}
		fs = append(fs, tf{p, stems[testStem(p)], dirs[path.Dir(p)], len(lines)})
	}
	sort.Slice(fs, func(i, j int) bool {
		a, b := fs[i], fs[j]
		if a.named != b.named {
			return a.named
		}
		if a.near != b.near {
			return a.near
		}
		if a.lines != b.lines {
			return a.lines > b.lines
		}
		return a.p < b.p
	})
	var out []string
	for _, f := range fs {
		if len(out) == traceRankMax {
			break
		}
		out = append(out, f.p)
	}
	return out
}

// traceWeights is the trace's weight of each declaration of a file (by
// index in units) whose own lines ran (the innermost declaration holding
// a span's first line, or the one enclosing it that holds the whole span:
// see [spanOwners]): 1/√(the declarations that ran in the file),
// divided by 1+log10/4 of how often it ran when the tracer counts (a
// helper called a thousand times weighs 4/7 of one called once; not
// less: the function to fix may be recursive). spans
// are the spans that ran in each, by line.
func traceWeights(nlines int, units []declUnit, trace []lang.Span) (weights map[int]float64, spans map[int][]lang.Span) {
	if len(trace) == 0 || len(units) == 0 {
		return nil, nil
	}
	owners := newSpanOwners(nlines, units) // spectrum.go
	count := map[int]int{}                 // unit → the count of its first span
	first := map[int]int{}
	spans = map[int][]lang.Span{}
	for _, s := range trace {
		if s.From < 1 || s.From > nlines {
			continue
		}
		u := owners.of(s)
		if u < 0 {
			continue
		}
		spans[u] = append(spans[u], s)
		if f, ok := first[u]; !ok || s.From < f {
			first[u], count[u] = s.From, s.Count
		}
	}
	if len(first) == 0 {
		return nil, nil
	}
	base := 1 / math.Sqrt(float64(len(first)))
	weights = make(map[int]float64, len(first))
	for u := range first {
		w := base
		if c := count[u]; c > 1 {
			w /= 1 + math.Log10(float64(c))/4
		}
		weights[u] = w
	}
	return weights, spans
}

// traceSplitMin is the size from which a declaration only the trace
// points at is shown, in the first pass, as the lines that ran (its
// declaring line and each span that ran, with a line of context), not
// whole: the path the failing test took through a long function (a
// 200-line switch of which it ran three cases). The last pass may still
// add the rest.
const traceSplitMin = wholeFileMax / 4

// tracePieces are the first pass's pieces of unit ui of f, which only the
// trace points at, with score: the whole declaration, and when it is
// larger than traceSplitMin and the tracer recorded lines past its
// first, its head and the spans that ran (at most traceSpanPieces), for
// when the whole does not fit.
func (fl *declFill) tracePieces(fi int, ui int, score float64) []piece {
	f := fl.files[fi]
	u := f.units[ui]
	to := headEnd(f.ls, f.units, u)
	spans := f.tracedSpans[ui]
	body := false
	for _, s := range spans {
		if s.To-1 > u.at {
			body = true
		}
	}
	whole := piece{fi, u.from, to, score}
	if !body || fl.cost(f, u.from, to) <= traceSplitMin {
		return []piece{whole}
	}
	// Whole when it fits when its turn comes; else what ran.
	out := []piece{whole, {fi, u.from, u.at, score}}
	for _, s := range spans {
		if len(out) > traceSpanPieces+1 {
			break
		}
		out = append(out, piece{fi, max(u.at, s.From-1), min(to, s.To), score})
	}
	return out
}

// traceSpanPieces bounds the spans of one declaration tracePieces shows.
const traceSpanPieces = 40

// What the traced code uses (round 9). No tracer sees data run: a struct
// type, a constant, a module-level table, a class's attributes. A fix
// often edits one beside the function that ran (a field the traced
// method reads, an entry of the table it indexes), so a data declaration
// ([lang.DataDecls]) that did not run weighs by what the traced lines use
// of its own lines' identifiers: for each identifier both hold, the
// trace weight of the best traced declaration using it, divided by the
// declarations of the fill whose lines hold it (a field only this struct
// declares and one traced method reads is a strong pointer; `int` or
// `err`, in a hundred declarations, a weak one), summed, at most 1. The
// first pass takes at most traceUseMax of them, of weight at least
// traceUseMin, whole; the last pass ranks the others by it.

// traceUseMax is how many data declarations the traced code uses are
// part of the fill's first pass.
const traceUseMax = 4

// traceUseMin is the least weight of such a declaration in the first
// pass.
const traceUseMin = 0.05

// weighDataUses sets each file's dataUse (see above).
func (fl *declFill) weighDataUses() {
	traced := false
	for _, f := range fl.files {
		traced = traced || len(f.tracedSpans) > 0
	}
	if !traced {
		return
	}
	ids := make([][]map[string]bool, len(fl.files)) // per file, per unit: its own lines' identifiers
	df := map[string]int{}
	for fi, f := range fl.files {
		if f.test {
			continue
		}
		owner := unitOwners(len(f.ls), f.units)
		ids[fi] = make([]map[string]bool, len(f.units))
		for i, l := range f.ls {
			u := owner[i]
			if u < 0 {
				continue
			}
			for _, w := range identRe.FindAllString(l, -1) {
				if len(w) < 3 || commonWords[strings.ToLower(w)] {
					continue
				}
				if ids[fi][u] == nil {
					ids[fi][u] = map[string]bool{}
				}
				if !ids[fi][u][w] {
					ids[fi][u][w] = true
					df[w]++
				}
			}
		}
	}
	// exec: each identifier on a traced declaration's declaring line or
	// lines that ran, with the best such declaration's trace weight.
	exec := map[string]float64{}
	for _, f := range fl.files {
		for ui, spans := range f.tracedSpans {
			u, tw := f.units[ui], f.traced[ui]
			see := func(i int) {
				if i < u.from || i > u.to || i >= len(f.ls) {
					return
				}
				for _, w := range identRe.FindAllString(f.ls[i], -1) {
					exec[w] = max(exec[w], tw)
				}
			}
			see(u.at)
			for _, s := range spans {
				for i := s.From - 1; i < s.To && i-s.From < 400; i++ {
					see(i)
				}
			}
		}
	}
	for fi, f := range fl.files {
		if f.test || f.variant || !tracedSource(f.p) {
			continue
		}
		for ui, u := range f.units {
			if f.traced[ui] > 0 || ids[fi][ui] == nil || !registry.DataDecl(f.p, f.ls[u.at]) {
				continue
			}
			w := 0.0
			for id := range ids[fi][ui] {
				if e := exec[id]; e > 0 {
					w += e / float64(df[id])
				}
			}
			if w > 0 {
				if f.dataUse == nil {
					f.dataUse = map[int]float64{}
				}
				f.dataUse[ui] = min(w, 1)
			}
		}
	}
}

// unitOwners is the innermost of units holding each of n lines, -1 none.
func unitOwners(n int, units []declUnit) []int {
	owner := make([]int, n)
	for i := range owner {
		owner[i] = -1
	}
	for ui, u := range units {
		for j := max0(u.from); j <= u.to && j < n; j++ {
			owner[j] = ui
		}
	}
	return owner
}

// useEntriesMax bounds the entries of a long data declaration usePieces
// shows.
const useEntriesMax = 6

// useEntryLines is the most lines of a long data declaration a name may
// be on for the entries holding it to be shown.
const useEntryLines = 2

// usePieces are the first pass's pieces of data declaration ui of f,
// which the traced code uses (weighDataUses): the whole declaration, and
// when it is larger than traceSplitMin (a 300-line table of formats), its
// declaring line and the entries that hold a name the failing tests use
// or the failure names (the "github" entry of the table the traced
// function indexes with the test's tablefmt="github"), each to its end
// ([declEnd]) with a line either side, and its last line, for when the
// whole does not fit; only the whole when no entry holds such a name.
func (fl *declFill) usePieces(fi, ui int, score float64, hints *contextHints) []piece {
	f := fl.files[fi]
	u := f.units[ui]
	to := headEnd(f.ls, f.units, u)
	whole := piece{fi, u.from, to, score}
	if fl.cost(f, u.from, to) <= traceSplitMin {
		return []piece{whole}
	}
	// A name on many of its lines (padding=, a field every entry sets)
	// tells no entry apart: only one on at most useEntryLines of them.
	used := func(i int) []string {
		var ws []string
		for _, w := range identRe.FindAllString(f.ls[i], -1) {
			if len(w) >= 3 && (hints.Uses[w] || hints.Names[w]) && !commonWords[strings.ToLower(w)] {
				ws = append(ws, w)
			}
		}
		return ws
	}
	lines := map[string]int{}
	for i := u.at + 1; i < to; i++ {
		for _, w := range used(i) {
			lines[w]++
		}
	}
	var entries []piece
	for i := u.at + 1; i < to && len(entries) < useEntriesMax; i++ {
		hit := false
		for _, w := range used(i) {
			hit = hit || lines[w] <= useEntryLines
		}
		if !hit {
			continue
		}
		// With a line either side: an edit that removes the entry
		// or adds one beside it is placed by its neighbours.
		end := min(declEnd(f.ls, i)+1, to, i+excerptAround)
		entries = append(entries, piece{fi, max(u.at, i-1), end, score})
		i = end
	}
	if len(entries) == 0 {
		// No entry is pointed at: its head and tail alone say nothing.
		return []piece{whole}
	}
	out := append([]piece{whole, {fi, u.from, u.at, score}}, entries...)
	return append(out, piece{fi, to, to, score})
}

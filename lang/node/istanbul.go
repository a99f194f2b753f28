package node

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// istanbulKey is the key under which istanbulWrap stores a coverage map
// in the trace file: {"istanbul": <coverage-final.json>}. A trace file
// without it is mergeScript's spans format.
const istanbulKey = "istanbul"

// maxIstanbulLine bounds a line number read from a coverage map.
const maxIstanbulLine = 10_000_000

// istanbulPos is a position of a coverage map (1-based line).
type istanbulPos struct {
	Line   json.RawMessage `json:"line"`
	Column json.RawMessage `json:"column"`
}

type istanbulLoc struct {
	Start istanbulPos `json:"start"`
	End   istanbulPos `json:"end"`
}

// istanbulFile is one file's coverage in istanbul's coverage-final.json
// (what jest's and vitest's json reporters and nyc write): the statements
// and functions by id, with their hit counts in s and f. Line numbers are
// the original source's (istanbul maps transformed code back through its
// source map).
type istanbulFile struct {
	StatementMap map[string]istanbulLoc     `json:"statementMap"`
	FnMap        map[string]istanbulFn      `json:"fnMap"`
	S            map[string]json.RawMessage `json:"s"`
	F            map[string]json.RawMessage `json:"f"`
}

type istanbulFn struct {
	Decl istanbulLoc `json:"decl"`
	Loc  istanbulLoc `json:"loc"`
}

// parseIstanbul reads a coverage map (untrusted: written by project code
// in the sandbox) into a trace: for each file whose key TraceRel keeps (a
// regular file of snap inside the workspace), outside node_modules and a JavaScript or
// TypeScript source, each function that ran as its first line with its
// call count and each statement that ran as its lines with its count.
// Bounded as lang.ParseSpansJSON is (size, files, spans, line numbers);
// entries of the wrong shape are dropped without error.
func parseIstanbul(snap *sandbox.Snapshot, root string, raw json.RawMessage) (lang.Trace, error) {
	if len(raw) > lang.MaxTraceBytes {
		return nil, fmt.Errorf("coverage map of %d bytes is over the %d-byte limit", len(raw), lang.MaxTraceBytes)
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("read coverage map: %w", err)
	}
	keys := make([]string, 0, len(doc))
	for k := range doc {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	out := lang.Trace{}
	spans := 0
	for _, k := range keys {
		if len(out) >= lang.MaxTraceFiles || spans >= lang.MaxTraceSpans {
			break
		}
		var f istanbulFile
		if json.Unmarshal(doc[k], &f) != nil {
			continue
		}
		rel, ok := lang.TraceRel(snap, root, k)
		if !ok {
			continue
		}
		if !traceSource(rel) {
			continue
		}
		var got []lang.Span
		add := func(from, to, count int) {
			if spans >= lang.MaxTraceSpans {
				return
			}
			got = append(got, lang.Span{From: from, To: to, Count: count})
			spans++
		}
		for _, id := range sortedIDs(f.F) {
			fn, ok := f.FnMap[id]
			n := istanbulCount(f.F[id])
			if !ok || n <= 0 {
				continue
			}
			line := istanbulLine(fn.Decl.Start.Line)
			if line == 0 {
				line = istanbulLine(fn.Loc.Start.Line)
			}
			if line > 0 {
				add(line, line, n)
			}
		}
		// In a map of one statement per line (v8-to-istanbul's, for
		// vitest's v8 provider, jest's coverageProvider "v8" and c8), a
		// module's whole top level counts as run, blank lines and the
		// declaration lines of functions that never ran included: there a
		// line is kept only inside a function that ran and not inside one
		// that did not. babel's istanbul maps have real statements (a
		// function declaration is none) and are kept as they are.
		byLine := lineStatements(f.StatementMap)
		var called, uncalled [][2]int
		for id, fn := range f.FnMap {
			if !byLine {
				break
			}
			c, ok := f.F[id]
			a := istanbulLine(fn.Loc.Start.Line)
			if !ok || a == 0 {
				continue
			}
			from, to := a, max(istanbulLine(fn.Loc.End.Line), a)
			if d := istanbulLine(fn.Decl.Start.Line); d > 0 && d < from {
				from = d
			}
			switch {
			case istanbulCount(c) > 0:
				called = append(called, [2]int{from, to})
			case string(c) == "0":
				uncalled = append(uncalled, [2]int{from, to})
			}
		}
		called, uncalled = disjoint(called), disjoint(uncalled)
		for _, id := range sortedIDs(f.S) {
			st, ok := f.StatementMap[id]
			n := istanbulCount(f.S[id])
			from := istanbulLine(st.Start.Line)
			if !ok || n <= 0 || from == 0 || byLine && (!within(called, from) || within(uncalled, from)) {
				continue
			}
			to := max(istanbulLine(st.End.Line), from)
			add(from, min(to, from+maxStatementLines), n)
		}
		if len(got) > 0 {
			out[rel] = mergeIstanbul(append(out[rel], got...))
		}
	}
	return out, nil
}

// maxStatementLines bounds the lines one statement span covers: a
// statement is a line or a few, and a huge one (an IIFE around a whole
// file) says nothing about which of its lines ran.
const maxStatementLines = 50

func sortedIDs(m map[string]json.RawMessage) []string {
	ids := make([]string, 0, len(m))
	for id := range m {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	return ids
}

// istanbulLine is a 1-based line number in bounds, or 0.
func istanbulLine(raw json.RawMessage) int {
	var f float64
	if json.Unmarshal(raw, &f) != nil || f != math.Trunc(f) || f < 1 || f > maxIstanbulLine {
		return 0
	}
	return int(f)
}

// istanbulCount is a hit count (an integer, capped), or 0.
func istanbulCount(raw json.RawMessage) int {
	var f float64
	if json.Unmarshal(raw, &f) != nil || f != math.Trunc(f) || f <= 0 {
		return 0
	}
	return int(min(f, math.MaxInt32))
}

// mergeIstanbul sorts spans and folds exact duplicates (the larger count
// kept: a function's first statement repeats its call count).
func mergeIstanbul(ss []lang.Span) []lang.Span {
	sort.Slice(ss, func(i, j int) bool {
		if ss[i].From != ss[j].From {
			return ss[i].From < ss[j].From
		}
		return ss[i].To < ss[j].To
	})
	out := ss[:0]
	for _, s := range ss {
		if n := len(out); n > 0 && out[n-1].From == s.From && out[n-1].To == s.To {
			out[n-1].Count = max(out[n-1].Count, s.Count)
			continue
		}
		out = append(out, s)
	}
	return out
}

// traceSource reports whether a trace keeps rel: a JavaScript or
// TypeScript source outside node_modules (installed packages are not the
// project's code, whatever a trace file says).
func traceSource(rel string) bool {
	return isSource(rel) && !strings.Contains("/"+rel, "/node_modules/")
}

// disjoint sorts line ranges and merges those that overlap.
func disjoint(rs [][2]int) [][2]int {
	slices.SortFunc(rs, func(a, b [2]int) int { return a[0] - b[0] })
	out := rs[:0]
	for _, r := range rs {
		if n := len(out); n > 0 && r[0] <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], r[1])
			continue
		}
		out = append(out, r)
	}
	return out
}

// within reports whether line is in one of the disjoint sorted ranges.
func within(rs [][2]int, line int) bool {
	i := sort.Search(len(rs), func(i int) bool { return rs[i][1] >= line })
	return i < len(rs) && rs[i][0] <= line
}

// lineStatements reports whether a statement map is v8-to-istanbul's:
// every statement one whole line, from column 0.
func lineStatements(m map[string]istanbulLoc) bool {
	for _, st := range m {
		if string(st.Start.Column) != "0" || string(st.Start.Line) != string(st.End.Line) {
			return false
		}
	}
	return len(m) > 0
}

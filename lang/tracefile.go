package lang

import (
	"encoding/json"
	"fmt"
	"math"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// Bounds of a trace file read by [ParseSpansJSON]. The file is written by
// project code inside the sandbox, so none of it is trusted.
const (
	MaxTraceBytes = 32 << 20 // a larger file is refused whole
	MaxTraceFiles = 10000    // files kept, in path order
	MaxTraceSpans = 200000   // spans kept over all files, in path order
	maxTracePath  = 4096
	maxTraceLine  = 10_000_000
)

// ParseSpansJSON reads the trace format the Python and Node tracers write:
//
//	{"files": {"pkg/mod.py": [[from, to, count], ...], ...}}
//
// Paths are workspace-relative slash paths, or absolute ones under root
// (the workspace as the traced command saw it). A path is kept only when,
// cleaned, it stays inside the workspace, names a regular file of snap
// (not a symlink) and keep accepts it (the language's source files); any
// other entry, an entry of the wrong shape and fields it does not know
// are dropped without error. Lines are 1-based and bounded; a span whose
// To is before From is read as From..From; a negative count as 0 (not
// known). The error is for data too large or not a JSON object.
func ParseSpansJSON(snap *sandbox.Snapshot, root string, data []byte, keep func(rel string) bool) (Trace, error) {
	if len(data) > MaxTraceBytes {
		return nil, fmt.Errorf("trace of %d bytes is over the %d-byte limit", len(data), MaxTraceBytes)
	}
	var doc struct {
		Files map[string]json.RawMessage `json:"files"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("read trace: %w", err)
	}
	names := make([]string, 0, len(doc.Files))
	for p := range doc.Files {
		names = append(names, p)
	}
	sort.Strings(names)
	out := Trace{}
	spans := 0
	for _, name := range names {
		if len(out) >= MaxTraceFiles || spans >= MaxTraceSpans {
			break
		}
		rel, ok := TraceRel(snap, root, name)
		if !ok || !keep(rel) {
			continue
		}
		var rows [][]json.RawMessage
		if json.Unmarshal(doc.Files[name], &rows) != nil {
			continue
		}
		for _, row := range rows {
			s, ok := traceSpan(row)
			if !ok || spans >= MaxTraceSpans {
				continue
			}
			out[rel] = append(out[rel], s)
			spans++
		}
	}
	for rel, ss := range out {
		out[rel] = mergeSpans(ss)
	}
	return out, nil
}

// TraceRel is the workspace-relative path a trace's file name stands for
// (relative, or absolute under root: the workspace as the traced command
// saw it), if it is a regular file of snap inside the workspace: every
// tracer's ParseTrace keeps a file only through it.
func TraceRel(snap *sandbox.Snapshot, root, name string) (string, bool) {
	if name == "" || len(name) > maxTracePath || strings.ContainsAny(name, "\x00\\") {
		return "", false
	}
	rel := name
	if path.IsAbs(name) {
		r := strings.TrimSuffix(path.Clean(root), "/") + "/"
		if root == "" || !path.IsAbs(root) || !strings.HasPrefix(path.Clean(name), r) {
			return "", false
		}
		rel = strings.TrimPrefix(path.Clean(name), r)
	}
	rel = path.Clean(rel)
	if rel == "." || rel == ".." || strings.HasPrefix(rel, "../") || path.IsAbs(rel) {
		return "", false
	}
	f, ok := snap.Files[rel]
	if !ok || f.Link != "" {
		return "", false
	}
	return rel, true
}

// traceSpan reads [from, to, count] (count optional, later cells
// ignored); each a JSON number that is an integer.
func traceSpan(row []json.RawMessage) (Span, bool) {
	if len(row) < 2 {
		return Span{}, false
	}
	num := func(raw json.RawMessage) (int, bool) {
		var f float64
		if json.Unmarshal(raw, &f) != nil || f != math.Trunc(f) {
			return 0, false
		}
		return int(max(min(f, math.MaxInt32), math.MinInt32)), true
	}
	from, ok1 := num(row[0])
	to, ok2 := num(row[1])
	if !ok1 || !ok2 || from < 1 || from > maxTraceLine {
		return Span{}, false
	}
	to = min(max(to, from), maxTraceLine)
	count := 0
	if len(row) > 2 {
		if c, ok := num(row[2]); ok && c > 0 {
			count = c
		}
	}
	return Span{From: from, To: to, Count: count}, true
}

// mergeSpans sorts spans and folds exact duplicates (counts added).
func mergeSpans(ss []Span) []Span {
	slices.SortFunc(ss, func(a, b Span) int {
		if a.From != b.From {
			return a.From - b.From
		}
		return a.To - b.To
	})
	out := ss[:0]
	for _, s := range ss {
		if n := len(out); n > 0 && out[n-1].From == s.From && out[n-1].To == s.To {
			out[n-1].Count = min(out[n-1].Count+s.Count, math.MaxInt32)
			continue
		}
		out = append(out, s)
	}
	return out
}

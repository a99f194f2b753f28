package agent

import (
	"regexp"
	"slices"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang/registry"
)

// Neighbours (round 9): a fix often inserts code rather than changing
// it, next to what the fill shows: a new constant after the last of the
// family of constants the traced code uses, an assignment in the module
// code that runs on import, a new route or branch in the function that
// dispatches to the one the failing test expected to run. A pure
// insertion is only placed when the lines on both sides of it are in
// view, and those lines belong to declarations nothing ranks. So each
// piece the fill takes brings, right after it and within the budget:
//
//   - for a data declaration of a family (RE_HEADER, RE_HUNK, …
//     RE_BINARY: names sharing their first word, at least
//     neighbourFamilyMin), the family's last member and the line after
//     it, where a new member goes;
//   - on a file's first piece, its footer ([lang.Footers]: Python's main
//     guard), the module code that runs when it is imported;
//   - for a function that a trace of its file says did not run, the
//     declarations of the same file that call it (at most
//     neighbourCallers): the failing test expected it to run, and what
//     decides that it runs (a router's patterns, a dispatching branch)
//     is in its caller.
//
// Test files and another platform's variants bring none.

// neighbourCallers bounds the callers shown of one function that did not
// run: more callers make it a helper, not a dispatch target.
const neighbourCallers = 2

// neighbourTailLines is the longest family member shown whole as its
// family's tail.
const neighbourTailLines = 8

// neighbourFamilyMin is the least number of data declarations sharing a
// name prefix that make a family.
const neighbourFamilyMin = 3

// takeWithNeighbours takes pc and, when it added lines, their
// neighbours (above).
func (fl *declFill) takeWithNeighbours(pc piece) {
	f := fl.files[pc.f]
	first := !f.started
	if fl.cost(f, pc.from, pc.to) == 0 {
		return
	}
	before := slices.Clone(f.keep)
	if !fl.take(f, pc.from, pc.to) || f.test || f.variant {
		return
	}
	// The lines the take added: the piece's, and the header a file's
	// first piece brings.
	added := func(i int) bool { return i >= 0 && i < len(before) && f.keep[i] && !before[i] }
	if first {
		if n := registry.FooterLines(f.p, []byte(f.text)); n > 0 && n < len(f.ls) {
			fl.take(f, len(f.ls)-n, len(f.ls)-1)
		}
	}
	for _, n := range fl.familyTails(pc.f, added) {
		fl.take(f, n.from, n.to)
	}
	for _, n := range fl.untracedCallers(pc.f, added) {
		fl.take(f, n.from, n.to)
	}
}

// familyTails are the pieces of the families of f's data declarations
// whose declaring line the fill just added: each family's last member
// (at the indentation of the file's first member; of a long one, its
// declaring line and its last two) and the next non-blank line after
// it.
func (fl *declFill) familyTails(fi int, added func(int) bool) []piece {
	f := fl.files[fi]
	last := map[string]int{} // family → index in units of its last member
	count := map[string]int{}
	shown := map[string]bool{}
	for ui, u := range f.units {
		fam := familyOf(u.name)
		if fam == "" || !registry.DataDecl(f.p, f.ls[u.at]) {
			continue
		}
		if prev, ok := last[fam]; ok && indentOf(f.ls[f.units[prev].at]) != indentOf(f.ls[u.at]) {
			continue
		}
		last[fam] = ui
		count[fam]++
		if added(u.at) {
			shown[fam] = true
		}
	}
	var out []piece
	for fam, ui := range last {
		if !shown[fam] || count[fam] < neighbourFamilyMin {
			continue
		}
		u := f.units[ui]
		to := u.to
		for j := u.to + 1; j < len(f.ls) && j <= u.to+3; j++ {
			if strings.TrimSpace(f.ls[j]) != "" {
				to = j
				break
			}
		}
		if u.to-u.at > neighbourTailLines {
			// A long member (a table): its declaring line, and its last
			// two lines with the line after it, where the next member
			// (or entry) goes.
			out = append(out, piece{fi, u.from, u.at, 0}, piece{fi, u.to - 1, to, 0})
			continue
		}
		out = append(out, piece{fi, u.from, to, 0})
	}
	return out
}

// familyOf is the family prefix of a data declaration's name: its first
// word and the underscore after it (RE_, DEFAULT_, k_), "" for a name of
// one word.
func familyOf(name string) string {
	if i := strings.IndexByte(name, '.'); i >= 0 {
		name = name[i+1:]
	}
	i := strings.IndexByte(name, '_')
	if i < 1 || i == len(name)-1 {
		return ""
	}
	return name[:i+1]
}

// untracedCallers are the pieces of the declarations of f calling a
// function whose declaring line the fill just added, which did not run while others of
// f did.
func (fl *declFill) untracedCallers(fi int, added func(int) bool) []piece {
	f := fl.files[fi]
	if len(f.tracedSpans) == 0 {
		return nil
	}
	var out []piece
	for ui, u := range f.units {
		if !added(u.at) || f.traced[ui] > 0 || registry.DataDecl(f.p, f.ls[u.at]) || isContainer(f.ls[u.at]) {
			continue
		}
		name := u.name
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			name = name[i+1:]
		}
		if len(name) < 3 {
			continue
		}
		call := regexp.MustCompile(`(^|[^\w.])` + regexp.QuoteMeta(name) + `\s*\(`)
		var callers []int
		for vi, v := range f.units {
			if vi == ui || v.at >= u.from && v.at <= u.to || registry.DataDecl(f.p, f.ls[v.at]) {
				continue
			}
			end := headEnd(f.ls, f.units, v)
			for j := v.at + 1; j <= end && j < len(f.ls); j++ {
				if call.MatchString(f.ls[j]) {
					callers = append(callers, vi)
					break
				}
			}
			if len(callers) > neighbourCallers {
				break
			}
		}
		if len(callers) == 0 || len(callers) > neighbourCallers {
			continue
		}
		for _, vi := range callers {
			v := f.units[vi]
			out = append(out, piece{fi, v.from, headEnd(f.ls, f.units, v), 0})
		}
	}
	return out
}

package agent

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// The context's files are filled declaration by declaration, not file by
// file: a long module contributes the declarations the failing test
// reaches wherever they are in it, and what does not fit is the
// lowest-ranked declarations, never a file's tail cut blindly.
//
// Three passes share one budget:
//
//  1. the core, across all ranked files by score: the windows around the
//     failing tests' lines and stack frames, the declarations the failure
//     names, and those the call walk reached at least reachFill (three
//     calls down from the test; see [callReach]), each with its file's
//     header (imports) when that fits beside it;
//  2. the files in rank order, each shown whole when what is left of it
//     fits (a small package's file is one unit), or nearly whole when
//     the first pass started it and it is at most nearlyWholeMax: less
//     its lowest-ranked declarations, to a whole file's room;
//  3. the rest of the declarations, across files by score: those the walk
//     reached deeper, those whose bodies use what the failure names, and
//     what those call (see [declUnits]).
//
// A file's score is divided by 1+fillRankStep×its rank, so that between
// two declarations of the same weight the one in the better-ranked file
// comes first.

// reachFill is the walk weight from which a reached declaration is part
// of the first pass (1 = called by the failing test, 1/2 one call below).
const reachFill = 0.25

// nearlyWholeMax is the largest file the whole-file pass shows nearly
// whole (a whole file's room of it, less its lowest-ranked declarations).
const nearlyWholeMax = wholeFileMax * 3 / 2

// fillRankStep is how much each rank down lowers a file's pieces.
const fillRankStep = 0.08

// Scores of the first pass's pieces.
const (
	scoreTestLine  = 100 // a window around a failing test's line
	scoreFrameLine = 60  // a window around a stack frame's line in a source
	scoreTest      = 100 // a failing test's own declaration
	scoreFramed    = 30  // a declaration named on or above a failing line
	scoreNamed     = 10  // a declaration a message or a test's name names exactly
	scoreKeyed     = 4   // one whose name holds a run of a test name's words
	scoreReached   = 40  // × the walk's weight
	scoreVariant   = 12  // × the walk's weight of its primary: another platform's namesake
	scoreUses      = 8   // × what its lines use of the failure's names (see [declUnits])
)

// markerCost is what a gap marker line (… lines 10-40 not shown) costs.
const markerCost = 40

// fillFile is one ranked file during the fill.
type fillFile struct {
	p       string
	rank    int
	text    string // redacted
	ls      []string
	keep    []bool
	size    int // characters of the kept lines
	started bool
	test    bool
	variant bool
	head    int // lines of its header, 0 none
	units   []declUnit
	limit   int // the most it may take (a test file: half a whole file)
	// headerRoom is the most its header may take (0: a fifth of a whole
	// file); excerptOnly keeps it out of the whole-file pass.
	headerRoom  int
	excerptOnly bool
	// traced is the trace's weight of its declarations (by index in
	// units) that ran, tracedSpans the spans that ran in each
	// (tracerank.go); nil when untraced.
	traced      map[int]float64
	tracedSpans map[int][]lang.Span
	// dataUse is the weight of its data declarations that did not run by
	// what the traced code uses of them (tracerank.go); nil when none.
	dataUse map[int]float64
}

// piece is a run of lines of one file the fill may show.
type piece struct {
	f        int // index in the fill's files
	from, to int // 0-based, inclusive
	score    float64
}

// declFill is the state of one fill: the files and the room left.
type declFill struct {
	files []*fillFile
	left  int
}

// cost is what adding lines from..to of f would take, with the section's
// title when it is f's first piece; header is the range of the header
// to add with it (from > to: none).
func (fl *declFill) cost(f *fillFile, from, to int) int {
	add := 0
	for i := max0(from); i <= to && i < len(f.ls); i++ {
		if !f.keep[i] {
			add += len(f.ls[i])
		}
	}
	if add == 0 {
		return 0
	}
	add += markerCost
	if !f.started {
		add += len(f.p) + 80
	}
	return add
}

// take adds lines from..to of f when they fit the budget and f's limit,
// with f's header on its first piece when that fits too.
func (fl *declFill) take(f *fillFile, from, to int) bool {
	c := fl.cost(f, from, to)
	if c == 0 {
		return true
	}
	if c > fl.left || f.size+c > f.limit {
		return false
	}
	first := !f.started
	fl.mark(f, from, to)
	fl.left -= c
	f.started = true
	if first && !f.test {
		room := f.headerRoom
		if room == 0 {
			room = wholeFileMax / 5
		}
		if hf, ht, ok := headerLines(f.ls, f.head, room); ok {
			if hc := fl.cost(f, hf, ht); hc > 0 && hc <= fl.left && f.size+hc <= f.limit {
				fl.mark(f, hf, ht)
				fl.left -= hc
			}
		}
	}
	return true
}

func (fl *declFill) mark(f *fillFile, from, to int) {
	for i := max0(from); i <= to && i < len(f.ls); i++ {
		if !f.keep[i] {
			f.keep[i] = true
			f.size += len(f.ls[i])
		}
	}
}

// fillFiles fills in.Files (and in.Omitted) from the ranked files within
// room characters (see the passes above).
func fillFiles(in *promptInput, snap *sandbox.Snapshot, ranked []string, room int, hints *contextHints) {
	fl := &declFill{left: room}
	for _, p := range codeFirst(ranked) {
		text, ok := snap.Text(p)
		if !ok {
			continue
		}
		c := redactText(text)
		ls := strings.SplitAfter(c, "\n")
		if len(ls) > 0 && ls[len(ls)-1] == "" {
			ls = ls[:len(ls)-1]
		}
		f := &fillFile{p: p, rank: len(fl.files), text: c, ls: ls, keep: make([]bool, len(ls)+1),
			test: IsTestFile(p), variant: hints.variantOnly(p), limit: room}
		if f.test {
			f.limit = wholeFileMax / 2
		} else {
			f.head = registry.HeaderLines(p, []byte(c))
		}
		f.units = declUnits(ls, hints.Lines[p], hints.Names, hints.Uses)
		if !f.test && tracedSource(p) {
			f.traced, f.tracedSpans = traceWeights(len(ls), f.units, hints.Trace[p])
			sf, sa := hints.Spectrum.of(p)
			f.traced = spectrumWeights(len(ls), f.units, f.traced, sf, sa)
		}
		fl.files = append(fl.files, f)
	}
	fl.weighDataUses()
	fl.fill(hints)
	in.Files, in.Omitted = nil, nil
	for _, f := range fl.files {
		if !f.started {
			in.Omitted = append(in.Omitted, f.p)
			continue
		}
		body, whole := renderKept(f.ls, f.keep)
		title := f.p
		if !whole {
			title = excerptTitle(f.p, f.text)
		}
		in.Files = append(in.Files, promptFile{Path: title, Content: body})
	}
}

// fill runs the three passes over fl.files.
func (fl *declFill) fill(hints *contextHints) {
	factor := func(f *fillFile) float64 { return 1 / (1 + fillRankStep*float64(f.rank)) }
	run := func(ps []piece) {
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].score > ps[j].score })
		for _, pc := range ps {
			fl.takeWithNeighbours(pc) // neighbours.go
		}
	}
	// 1. The core.
	var core []piece
	type tracedDecl struct {
		score  float64
		pieces []piece
	}
	var tracedOnly, usedOnly []tracedDecl
	for fi, f := range fl.files {
		k := factor(f)
		for ui := range f.units {
			if w := f.dataUse[ui]; w >= traceUseMin {
				sc := scoreTraced * w * k
				usedOnly = append(usedOnly, tracedDecl{sc, fl.usePieces(fi, ui, sc, hints)})
			}
		}
		for _, n := range hints.Lines[f.p] {
			if n >= 1 && n <= len(f.ls) {
				s := scoreFrameLine
				if f.test {
					s = scoreTestLine
				}
				core = append(core, piece{fi, n - 1 - excerptAround, n - 1 + excerptAround, float64(s) * k})
			}
		}
		if f.test {
			// A test file: the failing tests, not every test a message
			// names.
			for _, u := range f.units {
				if slices.Contains(hints.Tests[f.p], u.at) {
					core = append(core, piece{fi, u.from, u.to, scoreTest * k})
				}
			}
			continue
		}
		reached := hints.reached(f.p)
		if f.variant {
			// Another platform's namesakes of what the run reached, when
			// their primary is on the path (the fix is often due there
			// too), below the primary.
			for _, u := range f.units {
				if w := reached[u.at] / variantShare; w >= reachFill {
					core = append(core, piece{fi, u.from, headEnd(f.ls, f.units, u), (scoreVariant*w + scoreUses*u.score) * k})
				}
			}
			continue
		}
		for ui, u := range f.units {
			w := reached[u.at]
			s := 0.0
			switch {
			case !u.named:
			case hints.Frame[u.name]:
				s += scoreFramed
			case hints.Names[u.name]:
				s += scoreNamed
			default:
				s += scoreKeyed
			}
			if w >= reachFill {
				s += scoreReached * w
			}
			if tw := f.traced[ui]; tw > 0 {
				if s == 0 {
					// Only the trace points at it: among the best
					// traceCoreMax (below).
					if tw >= traceCoreMin {
						sc := (scoreTraced*tw + scoreUses*u.score) * k
						tracedOnly = append(tracedOnly, tracedDecl{sc, fl.tracePieces(fi, ui, sc)})
					}
					continue
				}
				s += scoreTraced * tw
				// A long one: the lines that ran (tracePieces).
				core = append(core, fl.tracePieces(fi, ui, (s+scoreUses*u.score)*k)...)
				continue
			}
			if s > 0 {
				// What its own lines use of the failure's names breaks
				// the ties of the walk's layers.
				s += scoreUses * u.score
				core = append(core, piece{fi, u.from, headEnd(f.ls, f.units, u), s * k})
			}
		}
	}
	core = append(core, fl.missingPieces(hints)...) // missingnames.go
	sort.SliceStable(tracedOnly, func(i, j int) bool { return tracedOnly[i].score > tracedOnly[j].score })
	for _, d := range tracedOnly[:min(len(tracedOnly), traceCoreMax)] {
		core = append(core, d.pieces...)
	}
	sort.SliceStable(usedOnly, func(i, j int) bool { return usedOnly[i].score > usedOnly[j].score })
	for _, d := range usedOnly[:min(len(usedOnly), traceUseMax)] {
		core = append(core, d.pieces...)
	}
	run(core)
	// 2. Whole files, in rank order, and nearly whole ones: a file the
	// first pass started that is a little over a whole file's room is
	// shown less its lowest-ranked declarations (by score, then the last
	// first) before a lower-ranked file is shown whole, so that a smaller
	// file further down never takes the better-ranked one's room; only
	// while no better-ranked source file was left an excerpt. A long
	// module stays an excerpt of what is reached (pass 3).
	passed := false // a better-ranked source file was left an excerpt
	for fi, f := range fl.files {
		if f.variant || f.excerptOnly || f.test && len(f.text) > wholeFileMax/2 {
			continue
		}
		if len(f.text) <= wholeFileMax {
			fl.take(f, 0, len(f.ls)-1)
			continue
		}
		if f.test {
			continue
		}
		if passed || !f.started || len(f.text) > nearlyWholeMax {
			// Its unreached declarations would come before the
			// better-ranked file's reached ones (pass 3).
			passed = true
			continue
		}
		reached := hints.reached(f.p)
		var own []piece
		for ui, u := range f.units {
			own = append(own, piece{fi, u.from, headEnd(f.ls, f.units, u), f.restScore(ui, u, reached)})
		}
		sort.SliceStable(own, func(i, j int) bool { return own[i].score > own[j].score })
		for _, pc := range own {
			if f.size+fl.cost(f, pc.from, pc.to) <= wholeFileMax {
				fl.take(f, pc.from, pc.to)
			}
		}
	}
	// 3. The rest, by score.
	var rest []piece
	for fi, f := range fl.files {
		if f.test {
			continue
		}
		k := factor(f)
		reached := hints.reached(f.p)
		for ui, u := range f.units {
			if s := f.restScore(ui, u, reached); s > 0 {
				rest = append(rest, piece{fi, u.from, headEnd(f.ls, f.units, u), s * k})
			}
		}
	}
	run(rest)
}

// restScore is a declaration's score after the first pass (the
// nearly-whole files of pass 2, and pass 3): the walk's weight, twice,
// what its lines use of the failure's names, and the trace's weight
// (tracerank.go), twice; another platform's namesake scores by the walk
// alone. ui is u's index in f.units.
func (f *fillFile) restScore(ui int, u declUnit, reached map[int]float64) float64 {
	if f.variant {
		return 2 * reached[u.at]
	}
	return 2*reached[u.at] + u.score + 2*f.traced[ui] + 2*f.dataUse[ui]
}

// excerptOf is the fill of one file's content within max characters:
// lines holds the failure's lines in it (1-based), reached the walk's
// weights of its declarations, head the lines of its header. ok is false
// when nothing in it is hinted, named, reached or used.
func excerptOf(content string, head int, lines []int, names, uses map[string]bool, reached map[int]float64, max int) (string, bool) {
	const p = "excerpt"
	hints := &contextHints{Lines: map[string][]int{p: lines}, Names: names, Uses: uses, Reach: &reach{Decls: map[string]map[int]float64{p: reached}}}
	ls := strings.SplitAfter(content, "\n")
	if len(ls) > 0 && ls[len(ls)-1] == "" {
		ls = ls[:len(ls)-1]
	}
	f := &fillFile{p: p, text: content, ls: ls, keep: make([]bool, len(ls)+1), head: head, limit: max, headerRoom: max / 5, excerptOnly: true}
	f.units = declUnits(ls, lines, names, uses)
	fl := &declFill{left: max, files: []*fillFile{f}}
	fl.fill(hints)
	if !f.started {
		return "", false
	}
	body, _ := renderKept(f.ls, f.keep)
	return body, true
}

// renderKept writes the kept lines of ls, a marker line for each gap
// (a gap of a line or two, or of blank lines, is shown rather than
// marked); whole is true when nothing was left out.
func renderKept(ls []string, keep []bool) (string, bool) {
	var b strings.Builder
	whole := true
	for i := 0; i < len(ls); {
		if keep[i] {
			b.WriteString(ls[i])
			i++
			continue
		}
		j := i
		for j < len(ls) && !keep[j] {
			j++
		}
		gap := strings.Join(ls[i:j], "")
		if strings.TrimSpace(gap) == "" {
			b.WriteString(gap)
			i = j
			continue
		}
		whole = false
		if j == len(ls) {
			break
		}
		if i > 0 && j-i <= 2 && len(gap) <= 160 {
			b.WriteString(gap)
			i = j
			continue
		}
		fmt.Fprintf(&b, "… (lines %d-%d not shown)\n", i+1, j)
		i = j
	}
	return b.String(), whole
}

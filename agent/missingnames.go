package agent

import (
	"regexp"
	"slices"
	"sort"

	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// A failing test that imports a name the fix is to add fails before it
// runs anything (Python: "cannot import name 'is_relative_to' from
// 'installer.utils'"; [lang.MissingNames]): there is no trace and no
// stack into the code, and the module the message names shows only
// where the name goes. The fix also calls the new name where existing
// code does its job, code that often spells it already (a method of the
// same name, `file.is_relative_to(target_dir)`). The sources that use a
// missing name as an identifier without declaring it rank right after
// the failing tests' own files (round 9).

// missingUsersMax bounds the files ranked for missing names,
// missingScanMax the bytes of one file searched, missingNamesMax the
// names (read from test output, which project code writes).
const (
	missingUsersMax = 3
	missingScanMax  = 256 << 10
	missingNamesMax = 8 // names searched, over all failures
)

// missingNameUsers are the non-test sources of snap that use a name the
// failures of rep say is missing, most uses first (then by path), at
// most missingUsersMax; nil when no failure names one.
func missingNameUsers(snap *sandbox.Snapshot, rep *testrun.Report) []string {
	names := missingNames(rep)
	if len(names) == 0 {
		return nil
	}
	res := make([]*regexp.Regexp, len(names))
	for i, n := range names {
		res[i] = regexp.MustCompile(`\b` + regexp.QuoteMeta(n) + `\b`)
	}
	uses := map[string]int{}
	for _, p := range snap.Paths() {
		if !isSource(p) || IsTestFile(p) || peripheral(p) || snap.Files[p].Size() > missingScanMax {
			continue
		}
		text, ok := snap.Text(p)
		if !ok {
			continue
		}
		n := 0
		for i, re := range res {
			locs := re.FindAllStringIndex(text, 50)
			if len(locs) == 0 || declares(text, names[i]) {
				continue
			}
			n += len(locs)
		}
		if n > 0 {
			uses[p] = n
		}
	}
	out := sortedKeys(uses)
	sort.SliceStable(out, func(i, j int) bool { return uses[out[i]] > uses[out[j]] })
	return out[:min(len(out), missingUsersMax)]
}

// declares reports whether a line of text declares name.
func declares(text, name string) bool {
	for _, l := range regexp.MustCompile(`(?m)^.*\b`+regexp.QuoteMeta(name)+`\b.*$`).FindAllString(text, 50) {
		if n, ok := declName(l); ok && n == name {
			return true
		}
	}
	return false
}

// missingNames are the names the failures of rep say are missing
// ([lang.MissingNames]), at most missingNamesMax.
func missingNames(rep *testrun.Report) []string {
	if rep == nil {
		return nil
	}
	var names []string
	for _, t := range rep.Failures() {
		for _, n := range registry.MissingNames(t.Message + "\n" + t.Excerpt) {
			if len(n) >= 4 && !commonWords[n] && !slices.Contains(names, n) && len(names) < missingNamesMax {
				names = append(names, n)
			}
		}
	}
	return names
}

// missingPieces are the first pass's pieces of the declarations of the
// fill's sources whose own lines use a missing name (the code the new
// name replaces), scored as a declaration the failure names, by rank.
func (fl *declFill) missingPieces(hints *contextHints) []piece {
	if hints == nil || len(hints.Missing) == 0 {
		return nil
	}
	res := make([]*regexp.Regexp, len(hints.Missing))
	for i, n := range hints.Missing {
		res[i] = regexp.MustCompile(`\b` + regexp.QuoteMeta(n) + `\b`)
	}
	var out []piece
	for fi, f := range fl.files {
		if f.test || f.variant {
			continue
		}
		k := 1 / (1 + fillRankStep*float64(f.rank))
		for _, u := range f.units {
			if isContainer(f.ls[u.at]) || slices.Contains(hints.Missing, u.name) {
				continue
			}
			end := headEnd(f.ls, f.units, u)
			hit := false
			for j := u.at; j <= end && j < len(f.ls) && !hit; j++ {
				for _, re := range res {
					if re.MatchString(f.ls[j]) {
						hit = true
						break
					}
				}
			}
			if hit {
				out = append(out, piece{fi, u.from, end, scoreNamed * k})
			}
		}
	}
	return out
}

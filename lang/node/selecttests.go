package node

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

var _ lang.TestSelector = Language{}

// SelectTests narrows jest and vitest (run directly or as the test
// script's runner) to the test files of tests, given after the runner's
// arguments as path filters, and ava (the test script's, or run directly
// by a test_cmd such as `npx ava --tap`) to their titles with --match, which keeps each test's
// id (see [Ava]), and mocha to their full titles with --grep (mochaGrep;
// its files come from its configuration, so every file still loads).
// node --test (whose TAP names no file) and composed scripts are not
// narrowed.
func (Language) SelectTests(r testrun.Runner, tests []testrun.Result) (testrun.Runner, bool) {
	if len(tests) > 0 && (r.Name == RunnerAva || avaArgs(r.Args)) {
		return avaMatch(r, tests)
	}
	if len(tests) > 0 && r.Name == testrun.RunnerMocha {
		re, ok := mochaGrep(tests)
		if !ok {
			return r, false
		}
		out := r
		out.Args = append(slices.Clone(r.Args), "--grep", re)
		return out, true
	}
	if (r.Name != testrun.RunnerJest && r.Name != testrun.RunnerVitest) || len(tests) == 0 {
		return r, false
	}
	var files []string
	for _, t := range tests {
		f := t.Package
		if f == "" || strings.HasPrefix(f, "-") || strings.HasPrefix(f, "/") || strings.ContainsAny(f, "\n\x00") || path.Ext(f) == "" {
			return r, false
		}
		if !slices.Contains(files, f) {
			files = append(files, f)
		}
	}
	out := r
	out.Args = append(slices.Clone(r.Args), files...)
	return out, true
}

// maxGrep bounds mochaGrep's pattern: one argument of a command line.
const maxGrep = 64 << 10

// mochaGrep is the --grep pattern that runs exactly tests (mocha results,
// ids "file > full title"): mocha matches it, as a JavaScript regular
// expression, against each test's full title. A title the id clipped
// ("...") is matched by its kept prefix; an id made unique with " (n)"
// matches its title with and without the suffix. ok is false for a
// result that names no test mocha can select (a failing hook, whose
// "hook" title matches no test; a title with a line break, which mocha
// would cut the pattern at).
func mochaGrep(tests []testrun.Result) (string, bool) {
	var alts []string
	for _, t := range tests {
		title := t.ID
		if t.Package != "" {
			var ok bool
			if title, ok = strings.CutPrefix(t.ID, t.Package+" > "); !ok {
				return "", false
			}
		}
		if title == "" || strings.ContainsAny(title, "\n\r\u2028\u2029\x00") || strings.Contains(title, `" hook`) {
			return "", false
		}
		alt := regexp.QuoteMeta(title) + "$"
		if p, ok := strings.CutSuffix(title, " ..."); ok {
			alt = regexp.QuoteMeta(p)
		} else if m := dupSuffix.FindStringIndex(title); m != nil {
			alt = "(?:" + regexp.QuoteMeta(title) + "|" + regexp.QuoteMeta(title[:m[0]]) + ")$"
		}
		if !slices.Contains(alts, alt) {
			alts = append(alts, alt)
		}
	}
	re := "^(?:" + strings.Join(alts, "|") + ")"
	if len(re) > maxGrep {
		return "", false
	}
	return re, true
}

// dupSuffix is uniqueID's " (n)" on a repeated id.
var dupSuffix = regexp.MustCompile(` \([0-9]+\)$`)

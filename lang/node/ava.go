package node

import (
	"bytes"
	"path"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// RunnerAva is the runner name of a report read as ava's TAP.
const RunnerAva = "ava"

// Ava is the result format of `ava --tap` (ava 3 to 6, CommonJS or ESM
// test files): flat TAP written by supertap, read by testrun's TAP reader
// with ava's own YAML keys and summary on top.
//
// How ava names a test, which is the test's id here unchanged: the title
// alone when one test file runs; "file › title" when several run, where
// file is the test file's path below the files' common directory, its
// extension, ".test"/".spec" and a "test-" prefix removed and each
// directory a " › " step of its own ("test/sub/strings.js" among
// "test/*.js" files: "sub › strings › title"). A title may contain
// " › " itself, so the prefix cannot be split off the TAP line; nor can
// it be added back to the line of a one-file run, whose TAP names no
// file. The ids are therefore those of the run's file set: fixpoint runs
// the same command (the test script or the configured test_cmd) for the
// baseline and the verification, and narrows an ava run only with
// --match (SelectTests), which keeps every file loaded and so every
// prefix as it was. `ava --verbose` prints the same names.
//
// skip and todo tests are skipped (ava's "# fail" counts todo tests; the
// cross-check takes them out), a known failing test (test.failing) that
// fails passes, and a file that crashes reports one failing entry named
// as ava names it ("test/x.js exited with a non-zero exit code: 1").
var Ava = &testrun.Format{
	Name: RunnerAva,
	Parse: func(in testrun.Input) testrun.Parsed {
		return testrun.ParseTAP(in, avaDiagnostics)
	},
	Sniff:      avaSniff,
	ResultLine: testrun.TAP.ResultLine,
	Check:      avaCheck,
}

var (
	// avaSummaryRe is supertap's closing block: the plan, then tests,
	// pass, skip (when some) and fail, nothing between them (node --test
	// adds "# suites" after "# tests", tape has no "# fail" when all
	// pass and prints two spaces after "# pass").
	avaSummaryRe = regexp.MustCompile(`(?m)^1\.\.\d+\n# tests \d+\n# pass \d+\n(?:# skip \d+\n)?# fail (\d+)$`)
	// avaAtRe is the "at:" key of ava's YAML block, 4 spaces in.
	avaAtRe    = regexp.MustCompile(`(?m)^    at: `)
	avaTodoRe  = regexp.MustCompile(`(?m)^not ok \d+ - .*\s#\s*TODO\b`)
	avaFrameRe = regexp.MustCompile(`(?:^|\()((?:file://)?[^\s()]+?):(\d+)(?::\d+)?\)?$`)
	avaCrashRe = regexp.MustCompile(`^(?:(\S+) exited (?:with a non-zero exit code: \d+|due to \S+)|No tests found in (\S+?)(?:, make sure .*)?)$`)
	avaANSIRe  = regexp.MustCompile(`\x1b\[[0-9;]*m`)
)

func avaSniff(stdout, _, _ []byte) bool {
	if !bytes.HasPrefix(bytes.TrimLeft(stdout, " \t\r\n"), []byte("TAP version 13")) || bytes.Contains(stdout, []byte("# Subtest: ")) {
		return false
	}
	return avaSummaryRe.Match(stdout) || avaAtRe.Match(stdout)
}

// avaCheck cross-checks the results with supertap's summary, whose
// "# fail" counts the todo tests too.
func avaCheck(rep *testrun.Report, out []byte, _ bool) []string {
	var why []string
	todo := len(avaTodoRe.FindAll(out, -1))
	for _, m := range avaSummaryRe.FindAllSubmatch(out, -1) {
		failed, _ := strconv.Atoi(string(m[1]))
		why = append(why, testrun.SummaryCounts(rep, "ava's TAP summary (# fail, less the todo tests)", max(failed-todo, 0), -1)...)
	}
	for _, m := range avaPassRe.FindAllSubmatch(out, -1) {
		passed, _ := strconv.Atoi(string(m[1]))
		why = append(why, testrun.SummaryCounts(rep, "ava's TAP summary (# pass)", 0, passed)...)
	}
	return why
}

var avaPassRe = regexp.MustCompile(`(?m)^# pass (\d+)$`)

// avaDiagnostics reads ava's YAML keys: name, message, assertion (ava 3-5
// "is", ava 6 "t.is()"), values (ava 3-5) or details (ava 6) with the
// difference, and at: the failing line ("test/x.js:5:4", an absolute
// path, or a frame "Fn (file:///...:1:2)"; ava's own frames in
// node_modules are not the test's line).
func avaDiagnostics(in testrun.Input, r *testrun.Result, y map[string]string) {
	if s := avaANSIRe.ReplaceAllString(r.ID, ""); s != r.ID { // --color, FORCE_COLOR: the " › " separator is dimmed
		r.ID, r.Name = s, avaANSIRe.ReplaceAllString(r.Name, "")
	}
	if m := avaCrashRe.FindStringSubmatch(r.Name); m != nil && r.Status == testrun.StatusFail {
		if f, ok := in.Rel(m[1] + m[2]); ok {
			r.Package, r.File = f, f
		}
	}
	if r.Status != testrun.StatusFail || y == nil {
		return
	}
	at := strings.Join(strings.Fields(y["at"]), " ") // a folded (>-) scalar: one line
	if m := avaFrameRe.FindStringSubmatch(at); m != nil {
		if f, ok := in.Rel(m[1]); ok && !slices.Contains(strings.Split(f, "/"), "node_modules") {
			r.File, r.Line = f, atoi(m[2])
			r.Frames = nil
		}
	}
	msg := strings.TrimSpace(y["message"])
	if msg == "" {
		msg = y["assertion"]
	}
	if msg != "" {
		if name := y["name"]; name != "" {
			msg = name + ": " + msg
		}
		r.Message = clipText(msg, 1<<10)
	}
	diff := y["details"]
	if diff == "" {
		diff = y["values"]
	}
	if diff != "" {
		r.Excerpt = clipText(strings.TrimSpace(msg+"\n"+diff), 4<<10)
	}
}

func atoi(s string) int {
	n, _ := strconv.Atoi(s)
	return n
}

func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n]
}

// avaArgs reports whether argv runs ava directly (ava, npx ava,
// npx --no -- ava, node_modules/.bin/ava), which --match can narrow.
func avaArgs(args []string) bool {
	for i, w := range args {
		switch {
		case w == "npx" || w == "--no" || w == "--yes" || w == "--":
			continue
		case path.Base(w) == "ava":
			return i == 0 || args[0] == "npx"
		}
		return false
	}
	return false
}

// avaMatch narrows an ava runner to tests with one --match per test:
// "*" and the text after the id's last " › " (the title's last step when
// the title has " › " of its own, a superset then; ava's --match matches
// the title without the file prefix, case-insensitively), so that the pattern
// never starts with ava's negation "!" and matches whatever the file
// prefix. Every file still loads, so each test keeps its id (see [Ava]).
// Not for a crash entry or a test with ava's own wildcard in its title
// alone ("*"); ok is false then.
func avaMatch(r testrun.Runner, tests []testrun.Result) (testrun.Runner, bool) {
	args := slices.Clone(r.Args)
	for _, t := range tests {
		if avaCrashRe.MatchString(t.Name) || t.ID == testrun.ExitID {
			return r, false
		}
		// " (2)" is testrun's for a second test of the name, or the
		// title's own ("case (2)"): a trailing "*" matches both.
		title, tail := dupSuffixRe.ReplaceAllString(t.ID, ""), ""
		if title != t.ID {
			tail = "*"
		}
		if i := strings.LastIndex(title, " › "); i >= 0 {
			title = title[i+len(" › "):]
		}
		if strings.TrimSpace(strings.ReplaceAll(title, "*", "")) == "" || strings.ContainsAny(title, "\n\x00") {
			return r, false
		}
		args = append(args, "--match", "*"+title+tail)
	}
	r.Args = args
	return r, true
}

// dupSuffixRe is the " (2)" testrun's TAP reader adds to the second test
// of a name.
var dupSuffixRe = regexp.MustCompile(` \(\d+\)$`)

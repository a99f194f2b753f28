package lang

import (
	"regexp"
	"strings"
)

// Verdict forging: code under test that makes a failing run read as a
// passing one. fixpoint reads a run's result from the runner's output and
// report files, which the code under test can also write; the verifying
// run (agent/confirm.go) and the cross-check of channels (testrun.Check)
// catch much of it, and these rules catch the cheap primitives before the
// code runs, in non-test code of every language, by text:
//
//   - <lang>.runner-output: text that imitates a test runner's machine
//     output: test2json's framing byte (0x16, in any spelling), go test's
//     "--- PASS"/"=== RUN"/"ok  \t" lines and -json events, TAP's
//     "ok 1"/"TAP version", JUnit XML elements, pytest's "N passed" and
//     "PASSED", libtest's "test result: ok" and "... ok", the JSON reports
//     of jest and mocha.
//   - <lang>.report-write: a path into another process's descriptors
//     (/proc/<pid>/fd, /proc/self, /dev/fd) or into fixpoint's report
//     directory (.fixpoint/): what rewrites the parent's stdout or a report.
//
// The scan reads the raw source, comments included: a comment quoting a
// runner's output in non-test code is rare, and the feedback says how to
// go on.

// ForgeRules are the rules of [ForgeFindings] for the language whose rule
// names start with prefix ("go", "python", "js", "rust").
func ForgeRules(prefix string) []PolicyRule {
	return []PolicyRule{
		{Name: prefix + ".runner-output", Description: "text imitating a test runner's output (test2json's 0x16 framing byte, --- PASS, === RUN, ok  \\t, TAP ok 1, JUnit XML, N passed, test result: ok, jest/mocha JSON) in non-test code", Block: true, NonTestOnly: true, PerUse: true},
		{Name: prefix + ".report-write", Description: "a path into another process's descriptors (/proc/*/fd, /proc/self, /dev/fd) or fixpoint's report directory (.fixpoint/) in non-test code", Block: true, NonTestOnly: true, PerUse: true},
	}
}

var (
	// test2json's framing byte, raw or as an escape, a chr/rune/byte call
	// or fromCharCode.
	framingRe = regexp.MustCompile(`\x16|\\x16|\\x\{16\}|\\0?26\b|\\u0016|\\u\{16\}|\\U00000016|\b(?:chr|rune|byte|char|fromCharCode)\s*\(\s*(?:22|0x16|0o26)\s*\)|\b22u8\b|0x16u8\b`)
	runnerRe  = regexp.MustCompile(`--- (?:PASS|FAIL|SKIP|BENCH)\b|=== (?:RUN|PAUSE|CONT|NAME)\b|\bok(?: |\t)+(?:\\t|\t)|"Action"\s*:|\\"Action\\"|` +
		`(?:^|["'\x60\n]|\\n)(?:not )?ok \d+\b|TAP version|` +
		`<testsuites?\b|<testcase\b|` +
		`(?:\b\d+|%[ds]|\{\w*\}|\$\{[^}]*\})\s+passed\b|\bPASSED\b|` +
		`test result: ok|\.\.\. ok\b|` +
		`\bnum(?:Passed|Failed|Total|Pending)Tests\b|"passes"\s*:|\bpasses\s*:\s*\[`)
	reportRe = regexp.MustCompile(`/proc/(?:self|thread-self|\d+|[\w$%{}().+\s"'\x60]+)/(?:fd|fdinfo|root|cwd|mem)\b|/proc/self\b|/proc/["'\x60]|["'\x60]/proc["'\x60]|/dev/fd\b|\.fixpoint/`)
)

// maxForgeFindings bounds the findings of one kind in one file.
const maxForgeFindings = 20

// ForgeFindings finds the [ForgeRules] primitives in src, each match (up
// to maxForgeFindings of a kind) with the text it matched, so that a
// finding the user's own file already has is told from a new one
// (PolicyRule.PerUse).
func ForgeFindings(prefix string, src []byte) []PolicyFinding {
	var out []PolicyFinding
	for _, m := range framingRe.FindAllIndex(src, maxForgeFindings) {
		out = append(out, PolicyFinding{Rule: prefix + ".runner-output", Line: LineOf(src, m[0]),
			Message: "test2json's framing byte 0x16 (" + show(src[m[0]:m[1]]) + "): only the test runner writes it"})
	}
	for _, m := range runnerRe.FindAllIndex(src, maxForgeFindings) {
		out = append(out, PolicyFinding{Rule: prefix + ".runner-output", Line: LineOf(src, m[0]),
			Message: "text that imitates a test runner's result output (" + show(src[m[0]:m[1]]) + ")"})
	}
	for _, m := range reportRe.FindAllIndex(src, maxForgeFindings) {
		out = append(out, PolicyFinding{Rule: prefix + ".report-write", Line: LineOf(src, m[0]),
			Message: "a path into another process's output or fixpoint's reports (" + show(src[m[0]:m[1]]) + ")"})
	}
	return out
}

// show quotes a match for a message, without control bytes.
func show(b []byte) string {
	s := strings.TrimSpace(strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f {
			return -1
		}
		return r
	}, string(b)))
	if s == "" {
		return "a control byte"
	}
	return `"` + s + `"`
}

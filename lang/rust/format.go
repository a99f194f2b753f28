package rust

import (
	"bytes"
	"regexp"

	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// Format is the result format of `cargo test`: libtest's human output
// per test binary, cargo's "Running" headers and rustc's diagnostics
// (Parse). Declared here whole — parse, the lines a long run keeps, the
// explanation of a binary that died before its summary, and the cross-
// check against cargo's own "test result:" lines — since only Rust
// reports in it (testrun.Format).
var Format = &testrun.Format{
	Name: RunnerName,
	Parse: func(in testrun.Input) testrun.Parsed {
		p := parse(in.Stdout, in.Stderr, in.Root)
		return testrun.Parsed{Tests: p.results, Running: p.running}
	},
	Sniff: func(stdout, stderr, _ []byte) bool {
		return testResultRe.Match(stdout) || testResultRe.Match(stderr)
	},
	ResultLine: resultLine,
	Unfinished: unfinishedMsg,
	Check: func(rep *testrun.Report, out []byte, cut bool) []string {
		_, sum := Parse(out, nil, "")
		if sum.Binaries == 0 {
			return nil // no summary line: a build failure, or the output was cut
		}
		passed := sum.Passed
		if rep.Failed > 0 {
			passed = -1 // a binary that crashed printed passes its summary never counted
		}
		return testrun.SummaryCounts(rep, "cargo's test result lines", sum.Failed, passed)
	},
}

// unfinishedMsg explains a test binary that started and never printed
// its summary: it crashed (abort, stack overflow, a signal).
const unfinishedMsg = "test binary exited before it reported its results"

// TestFormats is the format a configured test command's output is
// recognised as when it is cargo's (lang.ResultFormats).
func (Language) TestFormats() []*testrun.Format { return []*testrun.Format{Format} }

var (
	testResultRe    = regexp.MustCompile(`(?m)^test result: (?:ok|FAILED)\. \d+ passed`)
	libtestPrefixes = [][]byte{[]byte("test result: "), []byte("Running "), []byte("Doc-tests "), []byte("process didn't exit successfully")}
	libtestBlockRe  = regexp.MustCompile(`^running \d+ tests?\s*$`)
)

// resultLine reports whether l is a line of libtest or cargo that Parse
// needs to place results: libtest's blocks, results and summaries, and
// cargo's per-binary headers and crash lines, which tell the blocks
// apart.
func resultLine(l []byte) bool {
	t := bytes.TrimLeft(l, " \t")
	if len(t) == 0 {
		return false
	}
	switch t[0] {
	case 'r', 't', 'R', 'D', 'p':
	default:
		return false
	}
	for _, p := range libtestPrefixes {
		if bytes.HasPrefix(t, p) {
			return true
		}
	}
	if bytes.HasPrefix(t, []byte("test ")) && bytes.Contains(t, []byte(" ... ")) {
		return true
	}
	return t[0] == 'r' && libtestBlockRe.Match(t)
}

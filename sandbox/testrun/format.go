package testrun

import "bytes"

// Format is one way a test runner reports its results, declared once as
// one value: its name, how its output and report file are read, which
// lines of a long run carry results, where its report file lies, how a
// test it started and never finished is explained, and how its own
// summary lines cross-check the results. It is the single extension
// point for result formats: sandbox/testrun declares the wire formats it
// reads itself ([GoTestJSON], [Pytest], [Unittest], [TAP], [Jest],
// [Vitest], [Mocha], [NPM]) and a language declares the ones only it
// uses (lang/rust's cargo libtest format) in its own folder. Which
// formats a language uses, and the list a configured test command's
// output is recognised among, are the language's (lang.ResultFormats,
// aggregated by lang/registry and handed to a [Runner] as
// Runner.Formats); nothing here switches over format names.
//
// A Format is a value its declarer does not change after it is built;
// its functions are pure and safe for concurrent use.
type Format struct {
	// Name is the runner name a [Report] carries: "go", "pytest", "cargo".
	Name string
	// Parse reads a finished run's output and report file. It never
	// fails: what it cannot read it leaves out, and Parse falls back to
	// the exit code and trimmed output. It must not panic on any input.
	Parse func(in Input) Parsed
	// Sniff reports whether the output or report of a configured test
	// command is in this format; nil: the format is never sniffed (it is
	// only used by runners that name it).
	Sniff func(stdout, stderr, report []byte) bool
	// ResultLine reports whether an output line (without its newline)
	// carries a result or summary Parse needs. Past the spool's verbatim
	// part (16 MiB per stream) only such lines are kept, so a run too
	// long to keep whole is still read in full. nil: none (the format
	// reads a report file). It is called on every line of a chatty
	// suite: cheap byte tests first.
	ResultLine func(line []byte) bool
	// Report is the workspace-relative report file the format's runner
	// writes when a language builds its command ("" none). A Runner's
	// ReportPath says what a given run reads back.
	Report string
	// NoReport reports whether a run that exited with code wrote no
	// report of its own (pytest's internal and usage errors), so that a
	// report file found afterwards is not read; nil: every exit may have.
	NoReport func(exitCode int) bool
	// Unfinished explains a test that started and never finished when
	// the sandbox neither timed out nor killed it for memory: the test
	// process exited under it. "" is "test did not finish (the test
	// process exited)". (A timeout or an out-of-memory kill is given to
	// every unfinished test, whatever the format: see Parsed.Running.)
	Unfinished string
	// Check cross-checks rep, already parsed, against the summary lines
	// the runner itself printed in out (stdout, then stderr); it returns
	// each disagreement. cut says the output was cut, so a missing
	// summary proves nothing. nil: the runner has no summary fixpoint
	// knows. See crosscheck.go for why, and [SummaryCounts].
	Check func(rep *Report, out []byte, cut bool) []string
}

// Input is what a [Format] reads: a finished command's output and its
// report file.
type Input struct {
	Stdout, Stderr []byte
	// Report is the content of the runner's report file; nil when there
	// was none (or it was stale, see Format.NoReport).
	Report []byte
	// Root is the absolute workspace directory as the command saw it;
	// "" means /workspace.
	Root string
	n    *normalizer
}

// paths returns the normalizer of in, making one for a Format called
// outside Parse (tests, a language's own format).
func (in Input) paths() *normalizer {
	if in.n == nil {
		return newNormalizer(in.Root)
	}
	return in.n
}

// Rel returns a path a runner printed relative to the workspace, and
// whether it is inside it: absolute under the workspace as the command
// saw it (Root or /workspace), or relative to its root. Paths outside
// come back unchanged.
func (in Input) Rel(p string) (string, bool) { return in.paths().rel(p, "") }

// Parsed is what a [Format] read.
type Parsed struct {
	// Tests are the per-test results, at most maxTests of them.
	Tests []Result
	// Running are the indexes in Tests of tests that started and never
	// finished. Parse gives each its cause: "timed out" or "out of
	// memory: killed" when the sandbox stopped the run, else
	// Format.Unfinished when the run failed; after a clean exit a
	// running test without a status is dropped.
	Running []int
	// Output, when OwnOutput is set, is the report's Output in place of
	// the trimmed stdout and stderr (go test's, without the JSON).
	Output    string
	OwnOutput bool
	// Runner, when set, is the report's runner name in place of the
	// format's (an npm script found to run jest reports "jest").
	Runner string
	// Counted is the runner's own printed totals, when it counts tests
	// it does not name (jest's non-verbose mode names files only): the
	// report counts at least as many.
	Counted *Counts
	// FailureOnStdout says that the runner printed its own output on
	// stderr, so that a failure of the command without a failing test
	// is the next command's, on stdout (an npm script "jest && tsc").
	FailureOnStdout bool
}

// Counts are test totals a runner printed.
type Counts struct {
	Passed, Failed, Skipped int
}

// sniff returns the first of formats that recognises the output, or nil.
func sniff(formats []*Format, stdout, stderr, report []byte) *Format {
	for _, f := range formats {
		if f != nil && f.Sniff != nil && f.Sniff(stdout, stderr, report) {
			return f
		}
	}
	return nil
}

// resultLines is the spool's filter for a run read by f, or sniffed
// among formats when f is nil: a line is kept when any of them needs it.
func resultLines(f *Format, formats []*Format) func([]byte) bool {
	if f != nil {
		formats = []*Format{f}
	}
	var keep []func([]byte) bool
	for _, f := range formats {
		if f != nil && f.ResultLine != nil {
			keep = append(keep, f.ResultLine)
		}
	}
	return func(l []byte) bool {
		if len(bytes.TrimLeft(l, " \t")) == 0 {
			return false
		}
		for _, k := range keep {
			if k(l) {
				return true
			}
		}
		return false
	}
}

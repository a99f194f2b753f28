// Package testrun runs a workspace's test command in a sandbox session
// and parses its output into a [Report] of per-test [Result]s.
//
// A [Runner] is the command and the [Format] that reads it (a language
// builds it: lang.Language.TestCommand; a configured test_cmd is
// [Custom], whose output is recognised among the Formats it is handed),
// [Run] runs it in a [sandbox.Session] and reads its report file back,
// and [Parse], a pure function, turns the output into a Report.
//
// [Format] is the one extension point for result formats: a value with
// its name, parser, sniffer, the lines a long run keeps, its report
// file, how an unfinished test is explained and the cross-check against
// the runner's own summary. This package declares the wire formats:
// `go test -json` ([GoTestJSON], with Go 1.24's build events and the
// older text build errors), JUnit XML as pytest writes it ([Pytest]),
// unittest's verbose output ([Unittest]), node's TAP ([TAP]), the JSON
// reports of jest ([Jest]; [Vitest] has the same shape) and mocha
// ([Mocha]), and an npm script's output ([NPM]: one of those, or a
// composed script's runner's default output, human.go). A language
// declares a format only it uses in its own folder (lang/rust's cargo
// format), and lists the formats its runners use (lang.ResultFormats);
// nothing here switches over format names. An unknown runner falls back
// to the exit code plus trimmed output. Every location in a Report is
// workspace-relative; every field is bounded whatever the runner
// printed, and the parsers never panic (see the fuzz targets).
//
// Run feeds the parsers the whole output, not the text the sandbox's
// output cap keeps: the backends stream every byte to
// [sandbox.Command.FullStdout], where a bounded spool keeps the first
// 16 MiB of each stream and then every line that carries a result
// (Format.ResultLine). The
// cap bounds only Report.Output and excerpts; Report.OutputCut says when
// it bit. The environment is the sandbox's own plus what the Runner sets
// (PYTHONDONTWRITEBYTECODE for Python) and [Runner.WithEnv] adds from the
// configuration: nothing that changes how tests print or behave.
//
// The code under test can write to the same output and report files, so
// Parse cross-checks the results against the summary lines the runner
// itself printed (Format.Check; crosscheck.go): a disagreement is in Report.Mismatch, and
// such a report is not OK.
package testrun

import (
	"fmt"
	"strings"
	"time"
)

// Status of one test.
type Status string

const (
	StatusPass  Status = "pass"
	StatusFail  Status = "fail"
	StatusSkip  Status = "skip"
	StatusError Status = "error" // the test could not run: build error, collection error, panic outside a test
)

// Frame is one stack frame or related location.
type Frame struct {
	Func string `json:"func,omitempty"`
	File string `json:"file"` // workspace-relative, slash-separated, when it is inside the workspace
	Line int    `json:"line"` // 1-based; 0 when unknown
}

// Result is one test's outcome.
type Result struct {
	ID       string        `json:"id"`      // stable id: "pkg/path.TestName/sub", "tests/test_x.py::test_y[param]"
	Name     string        `json:"name"`    // short name as the runner prints it
	Package  string        `json:"package"` // go package, python module or node file
	Status   Status        `json:"status"`
	File     string        `json:"file,omitempty"` // failing assertion's file, workspace-relative
	Line     int           `json:"line,omitempty"` // 1-based
	Message  string        `json:"message,omitempty"`
	Expected string        `json:"expected,omitempty"`
	Actual   string        `json:"actual,omitempty"`
	Excerpt  string        `json:"excerpt,omitempty"` // trimmed output of this test
	Frames   []Frame       `json:"frames,omitempty"`  // other locations (stack), innermost first
	Duration time.Duration `json:"duration,omitempty"`
}

// Report is one run of a test command.
type Report struct {
	Runner   string   `json:"runner"` // "go", "pytest", "unittest", "node", "npm", "exit-code"
	Command  []string `json:"command"`
	ExitCode int      `json:"exit_code"`
	TimedOut bool     `json:"timed_out,omitempty"`
	OOM      bool     `json:"oom,omitempty"`
	Tests    []Result `json:"tests"`
	// Passed, Failed and Skipped count Tests, except that a runner's
	// printed summary (its default output in a composed npm script) may
	// count more tests than it names: then they follow the summary.
	Passed   int           `json:"passed"`
	Failed   int           `json:"failed"` // fail + error
	Skipped  int           `json:"skipped"`
	Output   string        `json:"output,omitempty"` // trimmed combined output, for the model and for unknown runners
	Duration time.Duration `json:"duration"`
	// OutputCut is set when the command's output passed the sandbox's
	// output cap: the text kept (Output, excerpts, what was streamed) was
	// cut, while the results were still parsed from the whole stream.
	OutputCut *OutputCut `json:"output_cut,omitempty"`
	// Mismatch lists the ways the parsed results disagree with the summary
	// lines the runner itself printed (crosscheck.go); a report with any
	// is not OK, whatever its counts say.
	Mismatch []string `json:"mismatch,omitempty"`
	// Timeout is set when the sandbox stopped the run at its time limit:
	// the limit, the setting that raises it, and the tests still running.
	// The results read before it are kept in Tests.
	Timeout *Timeout `json:"timeout,omitempty"`
	// Steps are the steps of the command that are not tests, in the
	// order they started: the pre and post scripts npm ran around the
	// tests ("npm:pretest"; steps.go). A failed one is also a failure in
	// Tests when the command failed.
	Steps []Step `json:"steps,omitempty"`
	// Trace is the file a traced run wrote (Runner.TracePath), nil when
	// it wrote none. It is never stored with the report.
	Trace *TraceFile `json:"-"`
}

// TraceFile is a traced run's trace file as read back from the session.
type TraceFile struct {
	Root string // the workspace directory as the command saw it
	Data []byte
}

// Timeout describes a run the sandbox stopped at its time limit.
type Timeout struct {
	Limit   time.Duration `json:"limit"`             // the wall-clock limit the run had; 0 = the backend default
	Setting string        `json:"setting"`           // the configuration key that sets it: "sandbox.timeout"
	Running []string      `json:"running,omitempty"` // ids of the tests that had started and not finished
	Note    string        `json:"note"`              // the sentence shown to people (Timeout.Sentence)
}

// TimeoutSetting is the configuration key of the test command's time limit.
const TimeoutSetting = "sandbox.timeout"

// Sentence says what stopped the run, what had been read before it, which
// test was running where the runner's output says so, and what to change.
func (t *Timeout) Sentence(rep *Report) string {
	if t == nil {
		return ""
	}
	limit := "its time limit"
	if t.Limit > 0 {
		limit = "its time limit of " + t.Limit.String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "timed out: the test command hit %s", limit)
	if rep != nil {
		running := map[string]bool{ExitID: true}
		for _, id := range t.Running {
			running[id] = true
		}
		failed := 0
		for _, r := range rep.Tests {
			if (r.Status == StatusFail || r.Status == StatusError) && !running[r.ID] {
				failed++
			}
		}
		fmt.Fprintf(&b, "; results read before it are kept (%d passed, %d failed)", rep.Passed, failed)
	}
	reported := false
	if rep != nil {
		for _, r := range rep.Tests {
			reported = reported || r.ID != ExitID
		}
	}
	switch len(t.Running) {
	case 0:
		if rep != nil && !reported {
			// go test prints nothing until its build is done, pytest until
			// it has collected: a cold build cache or a slow setup spent the
			// whole limit.
			b.WriteString("; no test had reported a result, so the limit was likely spent building or starting the suite (a cold build cache, many packages)")
			break
		}
		b.WriteString("; the runner's output does not say which test was running")
	case 1:
		fmt.Fprintf(&b, "; still running: %s", t.Running[0])
	default:
		fmt.Fprintf(&b, "; still running: %s", strings.Join(t.Running, ", "))
	}
	fmt.Fprintf(&b, ". If the suite needs longer, raise %s", t.Setting)
	if t.Limit > 0 {
		fmt.Fprintf(&b, " (now %q)", t.Limit.String())
	}
	b.WriteString(" in your fixpoint config, or pass --timeout to fixpoint test / fix")
	return b.String()
}

// OutputCut says how far the output cap cut a run's text.
type OutputCut struct {
	Cap         int64 `json:"cap"`          // bytes per stream (sandbox.output_cap); 0 = the backend default
	StdoutBytes int64 `json:"stdout_bytes"` // what the command wrote, in full
	StderrBytes int64 `json:"stderr_bytes"`
	// Parsed says what the parsers read: ParsedFull (every byte),
	// ParsedResultLines (the first 16 MiB of a stream, then every line that
	// carries a result or a summary) or ParsedCut (only the cut text: the
	// backend could not provide the full stream).
	Parsed string `json:"parsed"`
}

// Values of OutputCut.Parsed.
const (
	ParsedFull        = "full"
	ParsedResultLines = "result-lines"
	ParsedCut         = "cut"
)

// Note is the sentence shown to people: the CLI prints it under the
// counts and the agent writes it to the run log.
func (c *OutputCut) Note() string {
	if c == nil {
		return ""
	}
	limit := "the output cap"
	if c.Cap > 0 {
		limit = fmt.Sprintf("the %s output cap", sizeString(c.Cap))
	}
	how := "the results were parsed from the full output"
	switch c.Parsed {
	case ParsedResultLines:
		how = "the results were parsed from every result line of the full output"
	case ParsedCut:
		how = "and so were the results: tests after the cut are missing"
	}
	return fmt.Sprintf("output cut: the tests wrote %s to stdout and %s to stderr, more than %s per stream (sandbox.output_cap); the text shown is cut, %s",
		sizeString(c.StdoutBytes), sizeString(c.StderrBytes), limit, how)
}

func sizeString(n int64) string {
	switch {
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.1f KiB", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%d bytes", n)
}

// OK reports whether the run counts as passing: exit code 0, not timed out,
// no failed or errored test, and no disagreement with the runner's own
// summary (Mismatch).
func (r *Report) OK() bool {
	return r != nil && r.ExitCode == 0 && !r.TimedOut && !r.OOM && r.Failed == 0 && len(r.Mismatch) == 0
}

// Count fills Passed, Failed and Skipped from Tests.
func (r *Report) Count() {
	r.Passed, r.Failed, r.Skipped = 0, 0, 0
	for _, t := range r.Tests {
		switch t.Status {
		case StatusPass:
			r.Passed++
		case StatusSkip:
			r.Skipped++
		default:
			r.Failed++
		}
	}
}

// Failures returns the failed and errored tests.
func (r *Report) Failures() []Result {
	var out []Result
	for _, t := range r.Tests {
		if t.Status == StatusFail || t.Status == StatusError {
			out = append(out, t)
		}
	}
	return out
}

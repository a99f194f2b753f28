package testrun

import (
	"bytes"
	"cmp"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// Bounds that keep a Report small whatever the runner printed.
const (
	maxExcerpt   = 4 << 10  // bytes of excerpt per test
	maxOutput    = 8 << 10  // bytes of Report.Output
	maxMessage   = 1 << 10  // bytes of a message, expected or actual
	maxFrames    = 16       // frames per test
	maxName      = 512      // bytes of a TAP test name
	maxID        = 2 << 10  // bytes of an id built from nested names
	maxTests     = 200000   // tests per report, far above real suites; the rest are dropped
	maxLine      = 64 << 10 // longer input lines are cut
	maxInputScan = 16 << 20 // bytes of a stream kept verbatim; past it, only result lines (see spool)
)

// Parse turns a finished command into a Report. It is pure: res holds the
// command's exit status and output, report the content of r.ReportPath
// (nil when absent). r.Format reads the output; without one, the first
// of r.Formats that recognises it (Format.Sniff) does, and with none the
// report is the exit code plus trimmed output ([RunnerExitCode]). Parse
// never fails, and bounds every field whatever the format returned.
func Parse(r Runner, res *sandbox.Result, report []byte) *Report {
	if res == nil {
		res = &sandbox.Result{}
	}
	stdout, stderr := capInput(res.Stdout), capInput(res.Stderr)
	report = capInput(report)
	n := newNormalizer(r.Root)
	rep := &Report{
		Runner:   r.Name,
		Command:  r.Args,
		ExitCode: res.ExitCode,
		TimedOut: res.TimedOut,
		OOM:      res.OOMKilled,
		Duration: res.Duration,
		Tests:    []Result{},
	}
	f := r.Format
	if f == nil {
		f = sniff(r.Formats, stdout, stderr, report)
		rep.Runner = ""
	}
	var p Parsed
	if f != nil {
		p = f.Parse(Input{Stdout: stdout, Stderr: stderr, Report: report, Root: r.Root, n: n})
		rep.Runner = cmp.Or(p.Runner, rep.Runner, f.Name)
	}
	if f == nil || p.Runner == RunnerExitCode {
		rep.Runner, p = RunnerExitCode, Parsed{}
	}
	rep.Tests = p.Tests
	if len(rep.Tests) > maxTests {
		rep.Tests = rep.Tests[:maxTests]
	}
	if rep.Tests == nil {
		rep.Tests = []Result{}
	}
	rep.Output = p.Output
	if !p.OwnOutput {
		rep.Output = trimOutput(joinOutput(stdout, stderr))
	}
	unfinished := ""
	if f != nil {
		unfinished = f.Unfinished
	}
	markUnfinished(rep, p.Running, unfinished)
	if rep.TimedOut {
		rep.Timeout = &Timeout{Setting: TimeoutSetting}
		for _, i := range p.Running {
			if i >= 0 && i < len(rep.Tests) && len(rep.Timeout.Running) < 16 {
				rep.Timeout.Running = append(rep.Timeout.Running, rep.Tests[i].ID)
			}
		}
	}
	addSteps(rep, parseSteps(stderr))
	if res.ExitCode != 0 && !hasFailure(rep.Tests) && len(rep.Tests) < maxTests {
		o, e := stdout, stderr
		if p.FailureOnStdout && len(bytes.TrimSpace(stdout)) > 0 {
			o, e = nil, stdout
		}
		rep.Tests = append(rep.Tests, exitResult(res, o, e, n))
	}
	rep.Count()
	if c := p.Counted; c != nil {
		// Tests the runner counted without naming them count as its
		// summary says.
		rep.Passed = max(rep.Passed, c.Passed)
		rep.Skipped = max(rep.Skipped, c.Skipped)
		rep.Failed = max(rep.Failed, c.Failed)
	}
	rep.Mismatch = crossCheck(f, rep, stdout, stderr, res.Truncated)
	if rep.Timeout != nil {
		rep.Timeout.Note = rep.Timeout.Sentence(rep)
	}
	return rep
}

// markUnfinished gives tests that never finished their cause: the sandbox
// timeout, the memory limit, or a crash of the test process (crash, ""
// for the default explanation).
func markUnfinished(rep *Report, running []int, crash string) {
	why := ""
	switch {
	case rep.TimedOut:
		why = "timed out"
	case rep.OOM:
		why = "out of memory: killed"
	}
	if why == "" && rep.ExitCode == 0 {
		// The runner exited cleanly, so a test whose end was never seen did
		// not fail: it is dropped rather than reported as failing. (An
		// exit-0 suite whose results pass is never reported as failing.)
		unfinished := map[int]bool{}
		for _, i := range running {
			unfinished[i] = i >= 0 && i < len(rep.Tests) && rep.Tests[i].Status == ""
		}
		kept := rep.Tests[:0]
		for i, t := range rep.Tests {
			if !unfinished[i] {
				kept = append(kept, t)
			}
		}
		rep.Tests = kept
		return
	}
	if crash == "" {
		crash = "test did not finish (the test process exited)"
	}
	for _, i := range running {
		if i < 0 || i >= len(rep.Tests) {
			continue
		}
		t := &rep.Tests[i]
		if why != "" {
			t.Status = StatusError
			t.Message = why
			continue
		}
		if t.Status == "" {
			t.Status = StatusError
			if t.Message == "" {
				t.Message = crash
			}
		}
	}
}

func hasFailure(tests []Result) bool {
	for _, t := range tests {
		if t.Status == StatusFail || t.Status == StatusError {
			return true
		}
	}
	return false
}

// exitResult stands for a failed command whose failures could not be
// attributed to any test: a setup error, a crash, an unknown runner.
// ExitID is the id of the entry that stands for a whole run which exited
// non-zero without a failing test (exitResult): not a test.
const ExitID = "(exit)"

func exitResult(res *sandbox.Result, stdout, stderr []byte, n *normalizer) Result {
	out := stderr
	if len(bytes.TrimSpace(out)) == 0 {
		out = stdout
	}
	msg := fmt.Sprintf("exit status %d", res.ExitCode)
	switch {
	case res.TimedOut:
		msg = "timed out"
	case res.OOMKilled:
		msg = "out of memory: killed"
	}
	r := Result{ID: ExitID, Name: msg, Status: StatusError, Message: msg, Excerpt: trimExcerpt(string(out))}
	if last := lastLines(string(out), 3); last != "" && !res.TimedOut && !res.OOMKilled {
		r.Message = clip(last, maxMessage)
	}
	if m := locRe.FindStringSubmatch(string(out)); m != nil {
		if f, ok := n.rel(m[1], ""); ok {
			r.File = f
			r.Line, _ = strconv.Atoi(m[2])
		}
	}
	return r
}

// locRe finds a "file.ext:line" location at the start of a line.
var locRe = regexp.MustCompile(`(?m)^\s*(?:\./)?([\w./@+-]+\.\w+):(\d+)(?::\d+)?:`)

var ansiRe = regexp.MustCompile(`\x1b\[[0-9;?]*[A-Za-z]`)

// capInput bounds what a parser reads: what a spool keeps at most.
func capInput(b []byte) []byte {
	if len(b) > spoolVerbatim+spoolResults {
		return b[:spoolVerbatim+spoolResults]
	}
	return b
}

func joinOutput(a, b []byte) string {
	a, b = bytes.TrimRight(a, "\n"), bytes.TrimRight(b, "\n")
	switch {
	case len(a) == 0:
		return string(b)
	case len(b) == 0:
		return string(a)
	}
	return string(a) + "\n" + string(b)
}

// trimOutput bounds combined output: a short head and a longer tail, since
// summaries and the last errors come last.
func trimOutput(s string) string {
	return headTail(strings.TrimSpace(ansiRe.ReplaceAllString(s, "")), maxOutput)
}

func trimExcerpt(s string) string {
	return headTail(strings.Trim(ansiRe.ReplaceAllString(s, ""), "\n"), maxExcerpt)
}

// headTail keeps the first quarter and the last three quarters of max bytes
// of s, cutting at line ends where it can and at rune boundaries always.
func headTail(s string, max int) string {
	if len(s) <= max {
		return s
	}
	head, tail := max/4, max-max/4
	h := s[:head]
	if i := strings.LastIndexByte(h, '\n'); i > head/2 {
		h = h[:i]
	}
	t := s[len(s)-tail:]
	if i := strings.IndexByte(t, '\n'); i >= 0 && i < tail/2 {
		t = t[i+1:]
	}
	h, t = strings.ToValidUTF8(h, ""), strings.ToValidUTF8(t, "")
	return fmt.Sprintf("%s\n... [%d bytes omitted] ...\n%s", h, len(s)-len(h)-len(t), t)
}

// clip bounds a single message.
func clip(s string, max int) string {
	s = strings.TrimSpace(s)
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + " ..."
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	var out []string
	for i := len(lines) - 1; i >= 0 && len(out) < n; i-- {
		if l := strings.TrimSpace(lines[i]); l != "" {
			out = append(out, l)
		}
	}
	for i, j := 0, len(out)-1; i < j; i, j = i+1, j-1 {
		out[i], out[j] = out[j], out[i]
	}
	return strings.Join(out, "\n")
}

// splitLines splits b into lines, cutting each at maxLine bytes.
func splitLines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	s := strings.TrimSuffix(string(b), "\n")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		l = strings.TrimSuffix(l, "\r")
		if len(l) > maxLine {
			l = l[:maxLine]
		}
		lines[i] = l
	}
	return lines
}

// normalizer turns the paths runners print into workspace-relative ones.
type normalizer struct {
	roots []string // absolute workspace roots, each ending in "/"
}

func newNormalizer(root string) *normalizer {
	n := &normalizer{roots: []string{"/workspace/"}}
	n.addRoot(root)
	return n
}

func (n *normalizer) addRoot(root string) {
	root = strings.TrimRight(root, "/")
	if root == "" || !strings.HasPrefix(root, "/") {
		return
	}
	for _, r := range n.roots {
		if r == root+"/" {
			return
		}
	}
	if len(n.roots) < 8 {
		n.roots = append(n.roots, root+"/")
	}
}

// learn records the root implied by an absolute path abs that names the
// workspace file rel.
func (n *normalizer) learn(abs, rel string) {
	if rel == "" || !strings.HasPrefix(abs, "/") || !strings.HasSuffix(abs, "/"+rel) {
		return
	}
	n.addRoot(strings.TrimSuffix(abs, rel))
}

// learnDir records the root implied by an absolute directory that holds
// the workspace directory rel ("" for the root itself).
func (n *normalizer) learnDir(abs, rel string) {
	if !strings.HasPrefix(abs, "/") || abs == "/" {
		return
	}
	if rel == "" {
		n.addRoot(abs)
		return
	}
	if strings.HasSuffix(abs, "/"+rel) {
		n.addRoot(strings.TrimSuffix(abs, "/"+rel))
	}
}

// rel returns p relative to the workspace and whether it is inside it.
// Relative paths are taken relative to dir (a workspace-relative directory,
// "" for the root). Paths outside the workspace come back unchanged.
func (n *normalizer) rel(p, dir string) (string, bool) {
	p = strings.TrimPrefix(p, "file://")
	if p == "" {
		return "", false
	}
	if strings.HasPrefix(p, "/") {
		for _, r := range n.roots {
			if strings.HasPrefix(p, r) {
				return cleanRel(p[len(r):])
			}
		}
		return p, false
	}
	if strings.HasPrefix(p, "node:") || strings.HasPrefix(p, "<") || strings.Contains(p, "://") {
		return p, false
	}
	return cleanRel(path.Join(dir, p))
}

func cleanRel(p string) (string, bool) {
	c, err := sandbox.CleanRel(p)
	if err != nil {
		return p, false
	}
	return c, true
}

// expectation patterns, tried in order on a failure message.
var (
	gotWantRe  = regexp.MustCompile(`(?i)\bgot:?\s+(.+?),?\s+(?:but\s+)?(?:want|wanted|expected):?\s+(.+)$`)
	eqWantRe   = regexp.MustCompile(`\)\s*=\s*(.+?),\s*want:?\s+(.+)$`)
	wantGotRe  = regexp.MustCompile(`(?i)\bwant:?\s+(.+?),?\s+got:?\s+(.+)$`)
	expActRe   = regexp.MustCompile(`(?m)^\s*expected\s*:\s*(.*)$`)
	actualRe   = regexp.MustCompile(`(?m)^\s*actual\s*:\s*(.*)$`)
	pyAssertRe = regexp.MustCompile(`(?m)^(?:E\s+)?(?:AssertionError: )?assert (.+?) == (.+)$`)
	pyNotEqRe  = regexp.MustCompile(`(?m)^(?:AssertionError: )?(.+?) != (.+)$`)
)

// expectation extracts expected and actual values from a failure text.
func expectation(text string) (expected, actual string) {
	if m := expActRe.FindStringSubmatch(text); m != nil {
		if a := actualRe.FindStringSubmatch(text); a != nil {
			return clip(m[1], maxMessage), clip(a[1], maxMessage)
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if len(line) > maxLine {
			continue
		}
		if m := eqWantRe.FindStringSubmatch(line); m != nil {
			return clip(m[2], maxMessage), clip(m[1], maxMessage)
		}
		if m := gotWantRe.FindStringSubmatch(line); m != nil {
			return clip(m[2], maxMessage), clip(m[1], maxMessage)
		}
		if m := wantGotRe.FindStringSubmatch(line); m != nil {
			return clip(m[1], maxMessage), clip(m[2], maxMessage)
		}
	}
	return "", ""
}

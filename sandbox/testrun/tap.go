package testrun

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strconv"
	"strings"
	"time"
)

var (
	tapResultRe  = regexp.MustCompile(`^(\s*)(not )?ok\b\s*(\d*)\s*(?:- )?(.*)$`)
	tapSubtestRe = regexp.MustCompile(`^(\s*)# Subtest: (.*)$`)
	tapDirective = regexp.MustCompile(`(?i)\s+#\s*(SKIP|TODO)\b\s*(.*)$`)
	jsFrameRe    = regexp.MustCompile(`^\s*(?:at\s+)?(?:(.*?)\s+\()?((?:file://)?[^\s()]+?):(\d+):(\d+)\)?\s*$`)
	jsErrLineRe  = regexp.MustCompile(`^(\w*(?:Error|Exception)\b.*)$`)
	jsLocLineRe  = regexp.MustCompile(`^(\S+?):(\d+)$`)
	tapSummaryRe = regexp.MustCompile(`^# (tests|suites|pass|fail|cancelled|skipped|todo|duration_ms) `)
)

// TAP is the format of `node --test --test-reporter=tap` (TAP 13/14,
// nested subtests), read from stdout; flat TAP of other producers reads
// too. Its "# pass"/"# fail" summary cross-checks the results.
var TAP = &Format{
	Name: RunnerNode,
	Parse: func(in Input) Parsed {
		tests, running := parseTAP(in.Stdout, in.paths(), nil)
		tests, running = tapStarted(in.Stdout, in.Stderr, tests, running)
		return Parsed{Tests: tests, Running: running}
	},
	Sniff: func(stdout, _, _ []byte) bool {
		return bytes.Contains(stdout, []byte("TAP version")) || tapLineRe.Match(stdout)
	},
	ResultLine: tapResultLine,
	Check:      tapCheck,
}

// TAPDiagnostics is a producer's reading of a TAP result's YAML block,
// for the keys only it writes (lang/node: ava's "at", "message",
// "details"). It is called after the keys node --test writes have been
// read; y holds the block's scalars and dedented sub-blocks.
type TAPDiagnostics func(in Input, r *Result, y map[string]string)

// ParseTAP reads TAP as [TAP] does, passing each result and its YAML
// block to diag (nil: none): a language's own TAP format builds on it
// (lang/node's ava format) without a second TAP reader.
func ParseTAP(in Input, diag TAPDiagnostics) Parsed {
	var hook func(*Result, map[string]string)
	if diag != nil {
		hook = func(r *Result, y map[string]string) { diag(in, r, y) }
	}
	tests, running := parseTAP(in.Stdout, in.paths(), hook)
	tests, running = tapStarted(in.Stdout, in.Stderr, tests, running)
	return Parsed{Tests: tests, Running: running}
}

var tapLineRe = regexp.MustCompile(`(?m)^\s*(?:not )?ok \d+ `)

// tapResultLine keeps results, subtests, plans and summaries.
func tapResultLine(l []byte) bool {
	t := bytes.TrimLeft(l, " \t")
	if len(t) == 0 {
		return false
	}
	switch t[0] {
	case 'o', 'n':
		if bytes.HasPrefix(t, []byte("ok")) || bytes.HasPrefix(t, []byte("not ok")) {
			return tapResultRe.Match(l)
		}
	case '#':
		return tapSubtestRe.Match(l) || tapSummaryRe.Match(bytes.TrimRight(t, " \r"))
	case 'T':
		return bytes.HasPrefix(t, []byte("TAP version"))
	case 'f':
		return bytes.HasPrefix(t, []byte(TAPStartedPrefix))
	case '1':
		return bytes.HasPrefix(t, []byte("1.."))
	}
	return false
}

// TAPStartedPrefix starts the line a second node --test reporter writes
// to stderr when a test starts (lang/node adds it: node's TAP reporter
// names a test only once it finished), followed by a JSON object: the
// test's name "n", its file "f" and its nesting level "l". Only a run
// that never printed its TAP summary reads them, to name the tests that
// were running when it was stopped.
const TAPStartedPrefix = "fixpoint-started "

// tapStarted adds to tests, when the TAP stream was cut short (no
// "# tests" summary), the last test each file started that has no
// result: the test that was running. An unfinished test the TAP opened
// itself (a suite's "# Subtest:") gives way to the deeper one it contains.
func tapStarted(stdout, stderr []byte, tests []Result, running []int) ([]Result, []int) {
	if !bytes.Contains(stderr, []byte(TAPStartedPrefix)) {
		return tests, running
	}
	for _, l := range splitLines(stdout) {
		if strings.HasPrefix(l, "# tests ") {
			return tests, running
		}
	}
	type start struct {
		Name  string `json:"n"`
		File  string `json:"f"`
		Level int    `json:"l"`
	}
	stacks := map[string][]string{}
	last := map[string][]string{}
	var files []string
	for _, l := range splitLines(stderr) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(l), TAPStartedPrefix)
		var st start
		if !ok || json.Unmarshal([]byte(rest), &st) != nil || st.Name == "" || st.Level < 0 {
			continue
		}
		if st.Level == 0 && st.File != "" && (st.Name == st.File || strings.HasSuffix(st.File, "/"+st.Name)) {
			continue // the file itself
		}
		stack := stacks[st.File]
		if st.Level > len(stack) || st.Level > 64 {
			continue
		}
		stack = append(stack[:st.Level:st.Level], clip(st.Name, maxName))
		stacks[st.File] = stack
		if _, ok := last[st.File]; !ok && len(files) < 64 {
			files = append(files, st.File)
		}
		last[st.File] = stack
	}
	done := map[string]bool{}
	for _, t := range tests {
		done[t.ID] = true
	}
	for _, f := range files {
		stack := last[f]
		id := clip(strings.Join(stack, " > "), maxID)
		if done[id] || len(tests) >= maxTests {
			continue
		}
		done[id] = true
		deeper := false
		for _, i := range running {
			if strings.HasPrefix(id, tests[i].ID+" > ") {
				tests[i].ID, tests[i].Name, deeper = id, stack[len(stack)-1], true
				break
			}
		}
		if deeper {
			continue
		}
		running = append(running, len(tests))
		tests = append(tests, Result{ID: id, Name: stack[len(stack)-1]})
	}
	return tests, running
}

type tapOpen struct {
	level int
	name  string
	path  string // the names from the top level down to this one, clipped
}

// parseTAP reads TAP 13/14 as `node --test --test-reporter=tap` writes it:
// "# Subtest: name" opens a test, "ok N - name" or "not ok N - name" closes
// it, four spaces of indent per nesting level, and a YAML block with the
// diagnostics. It also reads the flat TAP of other producers. It returns
// the results and the indexes of tests that opened but never closed.
func parseTAP(stdout []byte, n *normalizer, diag func(*Result, map[string]string)) ([]Result, []int) {
	lines := splitLines(stdout)
	var (
		out      []Result
		open     []tapOpen
		comments []string // diagnostics printed since the last result
		seen     = map[string]int{}
	)
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if m := tapSubtestRe.FindStringSubmatch(l); m != nil {
			lv := len(m[1]) / 4
			for len(open) > 0 && open[len(open)-1].level >= lv {
				open = open[:len(open)-1]
			}
			if len(open) < 64 {
				name := clip(m[2], maxName)
				open = append(open, tapOpen{level: lv, name: name, path: tapPath(open, lv, name)})
			}
			continue
		}
		m := tapResultRe.FindStringSubmatch(l)
		if m == nil {
			if c, ok := strings.CutPrefix(strings.TrimSpace(l), "#"); ok && !tapSummaryRe.MatchString(strings.TrimSpace(l)) && len(comments) < 200 {
				comments = append(comments, strings.TrimPrefix(c, " "))
			}
			continue
		}
		indent := len(m[1])
		lv := indent / 4
		desc, st, why := clip(m[4], maxName), StatusPass, ""
		if m[2] != "" {
			st = StatusFail
		}
		if d := tapDirective.FindStringSubmatchIndex(desc); d != nil {
			why = strings.TrimSpace(desc[d[4]:d[5]])
			desc = desc[:d[0]]
			st = StatusSkip
		}
		desc = cutTAPComment(desc)
		yaml, next := tapYAML(lines, i+1, indent)
		i = next - 1
		if yaml["type"] == "suite" && yaml["failureType"] != "hookFailed" && yaml["failureType"] != "testCodeFailure" {
			open = closeOpen(open, lv)
			comments = nil
			continue // node counts suites apart from tests; their children carry the failures
		}
		if len(out) < maxTests {
			id := tapPath(open, lv, desc)
			if seen[id]++; seen[id] > 1 { // same name in two files: keep both, in order
				id += " (" + strconv.Itoa(seen[id]) + ")"
			}
			r := Result{ID: id, Name: desc, Status: st, Message: clip(why, maxMessage)}
			tapDiagnostics(&r, yaml, comments, n)
			if diag != nil {
				diag(&r, yaml)
			}
			out = append(out, r)
		}
		comments = nil
		open = closeOpen(open, lv)
	}
	var running []int
	for _, o := range open {
		if len(out) >= maxTests {
			break
		}
		running = append(running, len(out))
		out = append(out, Result{ID: o.path, Name: o.name})
	}
	return out, running
}

// cutTAPComment drops a trailing run-dependent comment from a result's
// description: node-tap ends every subtest's line with "# time=12.3ms",
// which would give a test another id on every run. Only that comment is
// dropped: producers do not all escape a '#' in a name (ava prints
// "(fixes #82)" as is), so the rest of the line stays the name.
func cutTAPComment(desc string) string {
	if m := tapTimeComment.FindStringIndex(desc); m != nil {
		return desc[:m[0]]
	}
	return desc
}

var tapTimeComment = regexp.MustCompile(`\s+#\s*time=[0-9.]+\s*(?:ms|s)?\s*$`)

// tapPath is the id of a test named name at level lv: the path of the
// innermost open test above it, " > ", the name; clipped to maxID.
func tapPath(open []tapOpen, lv int, name string) string {
	for i := len(open) - 1; i >= 0; i-- {
		if open[i].level < lv {
			return clip(open[i].path+" > "+name, maxID)
		}
	}
	return clip(name, maxID)
}

// closeOpen drops the open test at level lv and everything below it.
func closeOpen(open []tapOpen, lv int) []tapOpen {
	for len(open) > 0 && open[len(open)-1].level >= lv {
		open = open[:len(open)-1]
	}
	return open
}

// tapYAML reads the YAML diagnostics block that may follow a result line
// indented by indent spaces. It understands what TAP producers write:
// scalars, quoted scalars, block scalars (| and |-) and nested maps, which
// are kept as their dedented text.
func tapYAML(lines []string, i, indent int) (map[string]string, int) {
	if i >= len(lines) || strings.TrimSpace(lines[i]) != "---" || leading(lines[i]) <= indent {
		return nil, i
	}
	blockIndent := leading(lines[i])
	out := map[string]string{}
	i++
	keyIndent := -1
	for i < len(lines) {
		l := lines[i]
		t := strings.TrimSpace(l)
		if t == "..." && leading(l) == blockIndent {
			return out, i + 1
		}
		if t != "" && leading(l) <= indent { // the block was never closed
			return out, i
		}
		if keyIndent < 0 && t != "" {
			keyIndent = leading(l)
		}
		key, val, ok := strings.Cut(t, ":")
		if !ok || leading(l) != keyIndent || strings.ContainsAny(key, " '\"") {
			i++
			continue
		}
		val = strings.TrimSpace(val)
		i++
		if val == "" || val == "|" || val == "|-" || val == ">" || val == ">-" {
			var body []string
			for i < len(lines) && (strings.TrimSpace(lines[i]) == "" || leading(lines[i]) > keyIndent) {
				if strings.TrimSpace(lines[i]) == "..." && leading(lines[i]) == blockIndent {
					break
				}
				body = append(body, lines[i])
				i++
			}
			val = dedent(body)
		} else {
			val = yamlScalar(val)
		}
		if len(out) < 64 {
			out[key] = val
		}
	}
	return out, i
}

func leading(s string) int { return len(s) - len(strings.TrimLeft(s, " ")) }

func dedent(lines []string) string {
	min := -1
	for _, l := range lines {
		if strings.TrimSpace(l) == "" {
			continue
		}
		if d := leading(l); min < 0 || d < min {
			min = d
		}
	}
	out := make([]string, len(lines))
	for i, l := range lines {
		if len(l) >= min && min > 0 {
			l = l[min:]
		}
		out[i] = strings.TrimRight(l, " ")
	}
	return strings.Trim(strings.Join(out, "\n"), "\n")
}

func yamlScalar(v string) string {
	switch {
	case len(v) >= 2 && v[0] == '\'' && v[len(v)-1] == '\'':
		return strings.ReplaceAll(v[1:len(v)-1], "''", "'")
	case len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"':
		if u, err := strconv.Unquote(v); err == nil {
			return u
		}
		return v[1 : len(v)-1]
	case v == "~" || v == "null":
		return ""
	}
	return v
}

// tapDiagnostics fills a result from its YAML block and the comment lines
// printed before it (node prints a test file's stderr there).
func tapDiagnostics(r *Result, y map[string]string, comments []string, n *normalizer) {
	if ms, err := strconv.ParseFloat(y["duration_ms"], 64); err == nil && ms > 0 && ms < 1e12 {
		r.Duration = time.Duration(ms * float64(time.Millisecond)).Round(time.Millisecond)
	}
	var loc *Frame
	if f, ok := jsLocation(y["location"], n); ok {
		loc = &f
		r.Package = f.File
	}
	if r.Status != StatusFail {
		return
	}
	switch y["failureType"] {
	case "cancelledByParent", "cancelledAfterEnd":
		r.Status = StatusError
	}
	msg := strings.TrimSpace(y["error"])
	if name := y["name"]; name != "" && !strings.HasPrefix(msg, name) {
		msg = name + ": " + msg
	}
	var frames []Frame
	for _, l := range splitLines([]byte(y["stack"])) {
		if f, ok := jsLocation(l, n); ok && len(frames) < maxFrames {
			frames = append(frames, f)
		}
	}
	if y["exitCode"] != "" && len(comments) > 0 { // a whole test file failed: its stderr says why
		for _, c := range comments {
			if m := jsErrLineRe.FindStringSubmatch(strings.TrimSpace(c)); m != nil {
				msg = m[1]
				break
			}
		}
		for _, c := range comments {
			if m := jsLocLineRe.FindStringSubmatch(strings.TrimSpace(c)); m != nil {
				if f, ok := n.rel(m[1], ""); ok {
					line, _ := strconv.Atoi(m[2])
					frames = append([]Frame{{File: f, Line: line}}, frames...)
					break
				}
			}
		}
		if f, ok := n.rel(r.Name, ""); ok && strings.HasPrefix(r.Name, "/") {
			r.ID, r.Name, r.Package = f, f, f
		}
		r.Excerpt = trimExcerpt(strings.Join(comments, "\n"))
	}
	if loc != nil && len(frames) == 0 {
		frames = append(frames, *loc)
	}
	if len(frames) > 0 {
		r.File, r.Line, r.Frames = frames[0].File, frames[0].Line, frames[1:]
	}
	r.Message = clip(msg, maxMessage)
	r.Expected, r.Actual = clip(y["expected"], maxMessage), clip(y["actual"], maxMessage)
	if r.Excerpt == "" {
		r.Excerpt = trimExcerpt(strings.TrimSpace(y["error"]))
	}
}

// jsLocation reads "file:line:col", "func (file:line:col)" or
// "at func (file:line:col)" and keeps it when the file is in the workspace.
func jsLocation(s string, n *normalizer) (Frame, bool) {
	m := jsFrameRe.FindStringSubmatch(s)
	if m == nil {
		return Frame{}, false
	}
	f, ok := n.rel(m[2], "")
	if !ok {
		return Frame{}, false
	}
	line, _ := strconv.Atoi(m[3])
	return Frame{Func: m[1], File: f, Line: line}, true
}

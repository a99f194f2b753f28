package testrun

import (
	"regexp"
	"strconv"
	"strings"
)

// A composed npm test script ("jest && tsc --noEmit", "mocha && npm run
// lint", "ts-scripts test && npm run size") gets no reporter flags: npm
// appends arguments to the script's last command only. Its runner prints
// its default (human) output, which this file reads: the summary counts,
// every test the output names (jest and mocha in verbose/spec form), and
// every failure with its message. Tests a runner only counts (jest's
// non-verbose mode names files, not passing tests) are in the summary.

// NPM is the format of `npm test`: the script's output is sniffed for
// the JSON reports of jest and mocha and for node's TAP (reported as the
// runner found, TAP as "npm"); without them, the default output of
// composed ([RunnerJest], [RunnerVitest], [RunnerMocha]: the runner a
// composed script such as "jest && tsc --noEmit" runs before its last
// command, "" when lang/node could not tell) or of the runner its
// summary lines show is read. The summary then cross-checks the results.
func NPM(composed string) *Format { return npmFormat(composed, nil) }

// NPMWith is NPM for a composed script whose earlier runner's default
// output a language reads itself (lang/node: ava's default reporter):
// human parses it, and a parse without tests or totals falls back to the
// exit code. Its Check cross-checks the results.
func NPMWith(human *Format) *Format { return npmFormat("", human) }

func npmFormat(composed string, human *Format) *Format {
	return &Format{
		Name: RunnerNPM,
		Parse: func(in Input) Parsed {
			if f := sniff([]*Format{Jest, Mocha, TAP}, in.Stdout, in.Stderr, in.Report); f != nil {
				p := f.Parse(in)
				if f != TAP {
					p.Runner = f.Name
				}
				return p
			}
			if human != nil {
				p := human.Parse(in)
				if len(p.Tests) == 0 && p.Counted == nil {
					return Parsed{Runner: RunnerExitCode}
				}
				p.Runner = human.Name
				return p
			}
			out := joinOutput(in.Stderr, in.Stdout)
			runner := composed
			if runner == "" {
				runner = sniffHuman(ansiRe.ReplaceAllString(out, ""))
			}
			tests, sum, ok := parseHuman(runner, out, in.paths())
			if !ok {
				return Parsed{Runner: RunnerExitCode}
			}
			return Parsed{Tests: tests, Counted: &Counts{Passed: sum.passed, Failed: sum.failed, Skipped: sum.skipped},
				// The runner passed and printed its summary on stderr
				// (jest): a failure is the next command's (tsc), on stdout.
				FailureOnStdout: sniffHuman(ansiRe.ReplaceAllString(string(in.Stderr), "")) != ""}
		},
		ResultLine: tapResultLine,
		Check: func(rep *Report, out []byte, cut bool) []string {
			if human != nil && rep.Runner == human.Name && human.Check != nil {
				return human.Check(rep, out, cut)
			}
			switch rep.Runner {
			case RunnerJest:
				return jestCheck(rep, out, cut)
			case RunnerMocha:
				return mochaCheck(rep, out, cut)
			case RunnerNPM:
				return tapCheck(rep, out, cut)
			}
			return nil
		},
	}
}

// summary is a runner's printed totals.
type summary struct {
	passed, failed, skipped int
}

var (
	jestSuitesRe  = regexp.MustCompile(`(?m)^Test Suites:\s+.*\d+ total`)
	jestTestsRe   = regexp.MustCompile(`(?m)^Tests:\s+(.*?\d+ total)`)
	jestFileRe    = regexp.MustCompile(`^\s*(PASS|FAIL)\s+(\S+)`)
	jestTestRe    = regexp.MustCompile(`^(\s+)(✓|✕|○|✎|√|×)\s+(?:(skipped|todo)\s+)?(.+?)(?:\s+\(\d+(?:\.\d+)?\s*m?s\))?$`)
	jestBulletRe  = regexp.MustCompile(`^\s*● (.+)$`)
	vitestFilesRe = regexp.MustCompile(`(?m)^\s*Test Files\s+.*\(\d+\)`)
	vitestTestsRe = regexp.MustCompile(`(?m)^\s*Tests\s+(.+?)\s*\((\d+)\)\s*$`)
	vitestFailRe  = regexp.MustCompile(`^\s*FAIL\s+(\S+) > (.+)$`)
	mochaPassRe   = regexp.MustCompile(`(?m)^\s*(\d+) passing \(`)
	mochaFailRe   = regexp.MustCompile(`(?m)^\s*(\d+) failing\s*$`)
	mochaPendRe   = regexp.MustCompile(`(?m)^\s*(\d+) pending\s*$`)
	mochaDetailRe = regexp.MustCompile(`^\s*(\d+)\) `)
	mochaTestRe   = regexp.MustCompile(`^(\s+)(?:(✓|✔)|(\d+)\)|(-)) (.+?)(?:\s+\(\d+ms\))?$`)
	countRe       = regexp.MustCompile(`(\d+) (passed|failed|skipped|todo|pending)`)
)

// sniffHuman recognises a JavaScript runner's default output by its
// summary lines: jest's "Test Suites:"/"Tests:", vitest's "Test
// Files"/"Tests", mocha's "N passing (…)". It returns "" for none.
func sniffHuman(out string) string {
	switch {
	case jestSuitesRe.MatchString(out) && jestTestsRe.MatchString(out):
		return RunnerJest
	case vitestFilesRe.MatchString(out) && vitestTestsRe.MatchString(out):
		return RunnerVitest
	case mochaPassRe.MatchString(out):
		return RunnerMocha
	}
	return ""
}

// parseHuman reads the default output of runner (RunnerJest, RunnerVitest
// or RunnerMocha). ok is false when the output has no summary of it.
func parseHuman(runner, out string, n *normalizer) (tests []Result, sum summary, ok bool) {
	out = ansiRe.ReplaceAllString(out, "")
	switch runner {
	case RunnerJest:
		m := jestTestsRe.FindStringSubmatch(out)
		if m == nil || !jestSuitesRe.MatchString(out) {
			return nil, sum, false
		}
		return parseJestHuman(out, n), counts(m[1]), true
	case RunnerVitest:
		m := vitestTestsRe.FindStringSubmatch(out)
		if m == nil || !vitestFilesRe.MatchString(out) {
			return nil, sum, false
		}
		return parseVitestHuman(out, n), counts(m[1]), true
	case RunnerMocha:
		m := mochaPassRe.FindStringSubmatch(out)
		if m == nil {
			return nil, sum, false
		}
		sum.passed = atoiBounded(m[1])
		if f := mochaFailRe.FindStringSubmatch(out); f != nil {
			sum.failed = atoiBounded(f[1])
		}
		if p := mochaPendRe.FindStringSubmatch(out); p != nil {
			sum.skipped = atoiBounded(p[1])
		}
		return parseMochaHuman(out, n), sum, true
	}
	return nil, sum, false
}

// counts reads "1 failed, 2 skipped, 1043 passed" (jest) or "1 failed |
// 4 passed" (vitest).
func counts(s string) summary {
	var sum summary
	for _, m := range countRe.FindAllStringSubmatch(s, -1) {
		v := atoiBounded(m[1])
		switch m[2] {
		case "passed":
			sum.passed += v
		case "failed":
			sum.failed += v
		default:
			sum.skipped += v
		}
	}
	return sum
}

func atoiBounded(s string) int {
	v, err := strconv.Atoi(s)
	if err != nil || v < 0 || v > maxTests {
		return 0
	}
	return v
}

// indentStack is the describe/suite titles above the current line, by
// indentation.
type indentStack struct {
	indents []int
	titles  []string
}

func (s *indentStack) popTo(indent int) {
	for len(s.indents) > 0 && s.indents[len(s.indents)-1] >= indent {
		s.indents, s.titles = s.indents[:len(s.indents)-1], s.titles[:len(s.titles)-1]
	}
}

func (s *indentStack) push(indent int, title string) {
	s.popTo(indent)
	if len(s.titles) < 32 {
		s.indents, s.titles = append(s.indents, indent), append(s.titles, title)
	}
}

// humanTests collects results by id, keeping the order first seen.
type humanTests struct {
	tests []Result
	index map[string]int
}

func (h *humanTests) add(r Result) *Result {
	if h.index == nil {
		h.index = map[string]int{}
	}
	if i, ok := h.index[r.ID]; ok {
		if r.Status == StatusFail {
			h.tests[i].Status = StatusFail
		}
		return &h.tests[i]
	}
	if len(h.tests) >= maxTests {
		return nil
	}
	h.index[r.ID] = len(h.tests)
	h.tests = append(h.tests, r)
	return &h.tests[len(h.tests)-1]
}

// parseJestHuman reads jest's per-file blocks: "PASS file" / "FAIL file",
// the verbose tree under it (describe lines, then ✓ ✕ ○ ✎ tests), and the
// "● describe › title" failure sections with their messages.
func parseJestHuman(out string, n *normalizer) []Result {
	var h humanTests
	var file string
	var stack indentStack
	inTree := false
	var failing *Result
	var failText []string
	flush := func() {
		if failing != nil {
			jsFailure(failing, strings.Join(failText, "\n"), n)
		}
		failing, failText = nil, nil
	}
	for _, l := range splitLines([]byte(out)) {
		if m := jestFileRe.FindStringSubmatch(l); m != nil {
			flush()
			file, _ = n.rel(m[2], "")
			stack, inTree = indentStack{}, true
			continue
		}
		if strings.HasPrefix(l, "Test Suites:") {
			flush()
			break
		}
		if m := jestBulletRe.FindStringSubmatch(l); m != nil && file != "" {
			flush()
			inTree = false
			title := strings.TrimSpace(m[1])
			if title == "Test suite failed to run" {
				failing = h.add(Result{ID: file, Name: file, Package: file, Status: StatusError})
				continue
			}
			parts := strings.Split(title, " › ")
			failing = h.add(Result{ID: jsID(file, parts[:len(parts)-1], parts[len(parts)-1]), Name: clip(parts[len(parts)-1], maxName), Package: file, Status: StatusFail})
			continue
		}
		if failing != nil {
			if len(failText) < 200 {
				failText = append(failText, l)
			}
			continue
		}
		if !inTree || file == "" {
			continue
		}
		if strings.TrimSpace(l) == "" {
			inTree = false
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, " "))
		if m := jestTestRe.FindStringSubmatch(l); m != nil {
			stack.popTo(indent)
			st := StatusPass
			switch {
			case m[2] == "✕" || m[2] == "×":
				st = StatusFail
			case m[2] == "○" || m[2] == "✎" || m[3] != "":
				st = StatusSkip
			}
			h.add(Result{ID: jsID(file, stack.titles, m[4]), Name: clip(m[4], maxName), Package: file, Status: st})
			continue
		}
		stack.push(indent, strings.TrimSpace(l))
	}
	flush()
	return h.tests
}

// parseVitestHuman reads vitest's "FAIL file > describe > title" failure
// headers and the messages under them; vitest's default reporter names
// passing tests only per file.
func parseVitestHuman(out string, n *normalizer) []Result {
	var h humanTests
	var failing *Result
	var failText []string
	flush := func() {
		if failing != nil {
			jsFailure(failing, strings.Join(failText, "\n"), n)
		}
		failing, failText = nil, nil
	}
	for _, l := range splitLines([]byte(out)) {
		if m := vitestFailRe.FindStringSubmatch(l); m != nil {
			flush()
			file, _ := n.rel(m[1], "")
			parts := strings.Split(strings.TrimSpace(m[2]), " > ")
			failing = h.add(Result{ID: jsID(file, parts[:len(parts)-1], parts[len(parts)-1]), Name: clip(parts[len(parts)-1], maxName), Package: file, Status: StatusFail})
			continue
		}
		if vitestFilesRe.MatchString(l) || strings.Contains(l, "⎯⎯⎯") {
			flush()
			continue
		}
		if failing != nil && len(failText) < 200 {
			failText = append(failText, l)
		}
	}
	flush()
	return h.tests
}

// parseMochaHuman reads mocha's spec reporter: the suite tree with ✓/✔
// passes, "N) title" failures and "- title" pending tests, then the
// numbered failure details after the "N passing" summary. Ids are the full
// titles joined by spaces, as mocha's fullTitle.
func parseMochaHuman(out string, n *normalizer) []Result {
	var h humanTests
	var stack indentStack
	byNum := map[string]string{} // failure number -> id
	lines := splitLines([]byte(out))
	i := 0
	for ; i < len(lines); i++ {
		l := lines[i]
		if mochaPassRe.MatchString(l) {
			break
		}
		if strings.TrimSpace(l) == "" {
			continue
		}
		indent := len(l) - len(strings.TrimLeft(l, " "))
		if m := mochaTestRe.FindStringSubmatch(l); m != nil {
			stack.popTo(indent)
			title := strings.TrimSpace(strings.Join(append(append([]string{}, stack.titles...), m[5]), " "))
			r := Result{ID: jsID("", nil, title), Name: clip(m[5], maxName), Status: StatusPass}
			switch {
			case m[3] != "":
				r.Status = StatusFail
				byNum[m[3]] = r.ID
			case m[4] != "":
				r.Status = StatusSkip
			}
			h.add(r)
			continue
		}
		if indent > 0 {
			stack.push(indent, strings.TrimSpace(l))
		}
	}
	// Details: "  1) suite\n       title:\n     Error: ..." up to the next number.
	var num string
	var text []string
	flush := func() {
		// The title lines come first, the last one ending in ":".
		for j, t := range text {
			if j < 10 && strings.HasSuffix(strings.TrimSpace(t), ":") {
				text = text[j+1:]
				break
			}
		}
		if id, ok := byNum[num]; ok {
			if idx, ok := h.index[id]; ok {
				jsFailure(&h.tests[idx], strings.Join(text, "\n"), n)
			}
		}
		num, text = "", nil
	}
	for ; i < len(lines); i++ {
		if m := mochaDetailRe.FindStringSubmatch(lines[i]); m != nil {
			flush()
			num = m[1]
			continue
		}
		if num != "" && len(text) < 200 {
			text = append(text, lines[i])
		}
	}
	flush()
	return h.tests
}

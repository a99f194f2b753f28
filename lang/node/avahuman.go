package node

import (
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// AvaHuman reads ava's default reporter (ava 4 to 6, output not a
// terminal), which a composed npm script prints when ava is not its last
// command ("xo && ava && tsd"): npm appends --tap to the last command only,
// and fixpoint changes nothing else in the script. One line per test,
// with the ids ava's TAP gives ([Ava]: "file › title" when several files
// run): "✔ title" passed ("✔ [expected fail] title": a test.failing that
// failed, which passes), "✘ [fail]: title message" failed, "- [skip]" and
// "- [todo]" skipped. A failed line carries the message after the title
// with nothing between them; the title is the failure's own section
// header below the "─" rule (the longest header the line starts with),
// whose next line is the failing file:line. The closing totals ("3 tests
// failed", "1 test skipped", "1 test todo", "2 tests passed" — the last
// only when none failed) cross-check the lines.
var AvaHuman = &testrun.Format{
	Name:  RunnerAva,
	Parse: parseAvaHuman,
	Sniff: func(stdout, stderr, _ []byte) bool {
		out := avaANSIRe.ReplaceAllString(string(stdout)+"\n"+string(stderr), "")
		return avaHumanTotalRe.MatchString(out) && avaHumanLineRe.MatchString(out)
	},
	Check: avaHumanCheck,
}

var (
	avaHumanLineRe  = regexp.MustCompile(`(?m)^  (?:✔|✘ \[fail\]:|- \[(?:skip|todo)\]) `)
	avaHumanPassRe  = regexp.MustCompile(`^  ✔ (?:\[expected fail\] )?(.+?)(?: \(\d+(?:\.\d+)?m?s\))?$`)
	avaHumanFailRe  = regexp.MustCompile(`^  ✘ \[fail\]: (.+)$`)
	avaHumanSkipRe  = regexp.MustCompile(`^  - \[(?:skip|todo)\] (.+)$`)
	avaHumanTotalRe = regexp.MustCompile(`(?m)^  (\d+) (?:tests?|known failures?) (passed|failed|skipped|todo|known failures?)?`)
	avaHumanCountRe = regexp.MustCompile(`(?m)^  (\d+) tests? (passed|failed|skipped|todo)$`)
	avaHumanAtRe    = regexp.MustCompile(`^  ((?:[\w.@+-]+/)*[\w.@+-]+\.[cm]?[jt]sx?):(\d+)$`)
)

func parseAvaHuman(in testrun.Input) testrun.Parsed {
	out := avaANSIRe.ReplaceAllString(string(in.Stdout)+"\n"+string(in.Stderr), "")
	if !avaHumanTotalRe.MatchString(out) {
		return testrun.Parsed{}
	}
	lines := strings.Split(out, "\n")
	// The failures' sections: after the first "─" rule, a two-space
	// header between blank lines, then (for an assertion) file:line.
	type section struct {
		file string
		line int
		body []string
	}
	sections := map[string]*section{}
	var headers []string
	rule := -1
	for i, l := range lines {
		if strings.TrimSpace(l) == "─" {
			rule = i
			break
		}
	}
	if rule >= 0 {
		// A header is the first line after the rule or after two or more
		// blank lines (ava puts three between sections, one inside).
		var cur *section
		blanks := 2
		for i := rule + 1; i < len(lines); i++ {
			l := lines[i]
			if strings.TrimSpace(l) == "─" {
				break
			}
			if strings.TrimSpace(l) == "" {
				blanks++
				continue
			}
			if blanks >= 2 && strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "   ") {
				name := l[2:]
				cur = &section{}
				sections[name] = cur
				headers = append(headers, name)
				blanks = 0
				continue
			}
			blanks = 0
			if cur == nil {
				continue
			}
			if m := avaHumanAtRe.FindStringSubmatch(l); m != nil && cur.file == "" {
				cur.file, cur.line = m[1], atoi(m[2])
			}
			cur.body = append(cur.body, l)
		}
	}
	var tests []testrun.Result
	seen := map[string]int{}
	add := func(r testrun.Result) {
		seen[r.ID]++
		if n := seen[r.ID]; n > 1 {
			r.ID = r.ID + " (" + itoa(n) + ")" // as the TAP reader names a second test of a name
			r.Name = r.ID
		}
		tests = append(tests, r)
	}
	for _, l := range lines {
		switch {
		case avaHumanPassRe.MatchString(l):
			name := avaHumanPassRe.FindStringSubmatch(l)[1]
			add(testrun.Result{ID: name, Name: name, Status: testrun.StatusPass})
		case avaHumanSkipRe.MatchString(l):
			name := avaHumanSkipRe.FindStringSubmatch(l)[1]
			add(testrun.Result{ID: name, Name: name, Status: testrun.StatusSkip})
		case avaHumanFailRe.MatchString(l):
			text := avaHumanFailRe.FindStringSubmatch(l)[1]
			name, msg := text, ""
			best := ""
			for _, h := range headers {
				if (text == h || strings.HasPrefix(text, h+" ")) && len(h) > len(best) {
					best = h
				}
			}
			if best != "" {
				name, msg = best, strings.TrimSpace(strings.TrimPrefix(text, best))
			}
			r := testrun.Result{ID: name, Name: name, Status: testrun.StatusFail, Message: clipText(msg, 1<<10)}
			if s := sections[name]; s != nil {
				if f, ok := in.Rel(s.file); ok && s.file != "" {
					r.File, r.Line = f, s.line
				}
				r.Excerpt = clipText(strings.TrimSpace(strings.Join(s.body, "\n")), 4<<10)
				if r.Message == "" {
					r.Message = firstText(s.body, s.file)
				}
			}
			add(r)
		}
	}
	c := &testrun.Counts{}
	for _, m := range avaHumanCountRe.FindAllStringSubmatch(out, -1) {
		n := atoi(m[1])
		switch m[2] {
		case "passed":
			c.Passed += n
		case "failed":
			c.Failed += n
		case "skipped", "todo":
			c.Skipped += n
		}
	}
	return testrun.Parsed{Tests: tests, Counted: c}
}

// firstText is the first line of a failure section that says something
// (not the file:line, not blank): "Difference (- actual, + expected):",
// "Error thrown in test:".
func firstText(body []string, file string) string {
	for _, l := range body {
		t := strings.TrimSpace(l)
		if t != "" && !strings.HasPrefix(t, file+":") && !avaNumberedRe.MatchString(l) {
			return clipText(strings.TrimSuffix(t, ":"), 1<<10)
		}
	}
	return ""
}

var avaNumberedRe = regexp.MustCompile(`^\s+\d+: `)

func itoa(n int) string {
	const digits = "0123456789"
	if n < 10 {
		return digits[n : n+1]
	}
	return itoa(n/10) + digits[n%10:n%10+1]
}

// avaHumanCheck cross-checks the parsed lines with ava's closing totals:
// the failures always, the passes when ava printed them (it does only
// when nothing failed).
func avaHumanCheck(rep *testrun.Report, out []byte, _ bool) []string {
	text := avaANSIRe.ReplaceAllString(string(out), "")
	failed, passed := 0, -1
	for _, m := range avaHumanCountRe.FindAllStringSubmatch(text, -1) {
		switch m[2] {
		case "failed":
			failed += atoi(m[1])
		case "passed":
			passed = max(passed, 0) + atoi(m[1])
		}
	}
	return testrun.SummaryCounts(rep, "ava's closing totals", failed, passed)
}

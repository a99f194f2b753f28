package rust

import (
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// Bounds that keep results small whatever a test printed.
const (
	maxMessage = 1 << 10
	maxExcerpt = 4 << 10
	maxFrames  = 16
	maxTests   = 200000
	maxLine    = 64 << 10
)

var (
	// cargo, on stderr: one header before each test binary runs.
	runningRe  = regexp.MustCompile(`^\s+Running (?:unittests )?(\S+)(?: \((\S+)\))?\s*$`)
	docTestsRe = regexp.MustCompile(`^\s+Doc-tests (\S+)\s*$`)
	// libtest, on stdout.
	blockRe   = regexp.MustCompile(`^running (\d+) tests?$`)
	testRe    = regexp.MustCompile(`^test (.+?) \.\.\. (ok|FAILED|ignored(?:, (.*))?|bench: .*)$`)
	summaryRe = regexp.MustCompile(`^test result: (?:ok|FAILED)\. (\d+) passed; (\d+) failed; (\d+) ignored; (\d+) measured; (\d+) filtered out`)
	sectionRe = regexp.MustCompile(`^---- (.+?) (?:stdout|stderr) ----$`)
	// Panics: rustc before 1.73 quotes the message and puts the location
	// last; 1.73 and later put the location first and the message on the
	// next lines; 1.88 and later name the thread's id too ("thread 't'
	// (25360) panicked at src/lib.rs:2:10:", rustup's 1.95).
	oldPanicRe = regexp.MustCompile(`(?s)thread '[^']*'(?: \(\d+\))? panicked at '(.*?)', ([^\s,']+):(\d+):(\d+)`)
	newPanicRe = regexp.MustCompile(`(?m)thread '[^']*'(?: \(\d+\))? panicked at ([^\s,']+):(\d+):(\d+):$`)
	leftRe     = regexp.MustCompile("(?m)^\\s*left: `?(.*?)`?,?$")
	rightRe    = regexp.MustCompile("(?m)^\\s*right: `?(.*?)`?(?:: .*)?$")
	// rustc diagnostics: "error[E0308]: mismatched types" then " --> file:line:col".
	diagRe          = regexp.MustCompile(`^(error|warning)(\[E\d+\])?: (.*)$`)
	arrowRe         = regexp.MustCompile(`^\s*--> ([^\s:]+):(\d+):(\d+)`)
	couldNotRe      = regexp.MustCompile("^error: could not compile `([^`]+)`")
	processFailRe   = regexp.MustCompile("^\\s*process didn't exit successfully: `[^`]*` \\((.*)\\)\\s*$")
	docLineRe       = regexp.MustCompile(`^(\S+) - .*\(line (\d+)\)`)
	docLineSuffixRe = regexp.MustCompile(` \(line \d+\)$`)
	nameSuffixesRe  = regexp.MustCompile(` - (?:should panic|compile fail|compile|should panic with .*)$`)
	// rust-out's own noise inside doc-test sections.
	backtraceRe = regexp.MustCompile(`^\s+\d+: +0x[0-9a-f]+ - |^\s+at /`)
)

// Summary is what cargo's own "test result:" lines add up to: the
// counts a parse must reproduce.
type Summary struct{ Passed, Failed, Ignored, Binaries int }

// binary is one test executable's block of output.
type binary struct {
	target  string // "src/lib.rs", "tests/api.rs", "doc-tests mixed"
	exe     string // "mixed-11fc13d974d29ad2", "" for doc-tests
	doc     bool
	started bool // "running N tests" seen
	done    bool // "test result:" seen
	crash   string
}

// Parse reads `cargo test` output: cargo's progress and rustc's
// diagnostics on stderr, libtest's human output on stdout (the two may
// also come merged on one stream). root is the workspace as the command
// saw it ("" = /workspace). It returns one result per test, one error
// result per crate that did not compile and one per test binary that
// died before its summary, and the summary cargo printed.
func Parse(stdout, stderr []byte, root string) ([]testrun.Result, Summary) {
	p := parse(stdout, stderr, root)
	return p.results, p.sum
}

func parse(stdout, stderr []byte, root string) *parser {
	p := &parser{rel: relPaths(root), seen: map[string]int{}}
	out, errs := lines(stdout), lines(stderr)
	// Headers name the binaries. Merged output has them inline; split
	// output has them on stderr, one per "running N tests" block, in order.
	inline := false
	for _, l := range out {
		if runningRe.MatchString(l) || docTestsRe.MatchString(l) {
			inline = true
			break
		}
	}
	if !inline {
		p.headers(errs)
	}
	p.stdout(out)
	p.build(append(append([]string(nil), errs...), out...))
	if !inline {
		p.crashes(errs)
	}
	p.unfinished()
	return p
}

type parser struct {
	rel      func(string) (string, bool)
	bins     []*binary
	cur      int // index in bins of the block being read; -1 none
	results  []testrun.Result
	byName   map[string]int // test name -> index in results, for the current binary
	seen     map[string]int
	sum      Summary
	compiled map[string]bool
	docs     []int // results of the doc-test block being read, without ids yet
	running  []int // results of binaries that never printed their summary
}

// docIDs gives the doc-tests of the block just read their ids: the name
// without "(line N)", so that an edit above the item keeps the id, and
// "#2", "#3" for the item's later examples, in line order. A doc-test
// with the id of another crate's gets the crate's name in front.
func (p *parser) docIDs() {
	if len(p.docs) == 0 {
		return
	}
	groups := map[string][]int{}
	var order []string
	for _, i := range p.docs {
		id := docLineSuffixRe.ReplaceAllString(p.results[i].Name, "")
		if strings.HasSuffix(id, " -") { // "src/lib.rs - (line 3)": a module's own docs
			id += " (module docs)"
		}
		if groups[id] == nil {
			order = append(order, id)
		}
		groups[id] = append(groups[id], i)
	}
	for _, id := range order {
		g := groups[id]
		sort.SliceStable(g, func(a, b int) bool { return p.results[g[a]].Line < p.results[g[b]].Line })
		for k, i := range g {
			rid := id
			if k > 0 {
				rid += " #" + strconv.Itoa(k+1)
			}
			if p.seen[rid]++; p.seen[rid] > 1 {
				rid = p.results[i].Package + " " + rid
			}
			p.results[i].ID = rid
		}
	}
	p.docs = nil
}

func lines(b []byte) []string {
	if len(b) == 0 {
		return nil
	}
	ls := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	for i, l := range ls {
		l = strings.TrimSuffix(l, "\r")
		if len(l) > maxLine {
			l = l[:maxLine]
		}
		ls[i] = l
	}
	return ls
}

// header turns a cargo header line into a binary, or nil.
func header(l string) *binary {
	if m := runningRe.FindStringSubmatch(l); m != nil {
		b := &binary{target: m[1], exe: path.Base(m[2])}
		if m[2] == "" { // cargo before 1.52: only the executable
			b.exe = path.Base(m[1])
			b.target = b.exe
			if i := strings.LastIndexByte(b.target, '-'); i > 0 {
				b.target = b.target[:i]
			}
		}
		return b
	}
	if m := docTestsRe.FindStringSubmatch(l); m != nil {
		return &binary{target: "doc-tests " + m[1], doc: true}
	}
	return nil
}

func (p *parser) headers(errs []string) {
	for _, l := range errs {
		if b := header(l); b != nil {
			p.bins = append(p.bins, b)
		}
	}
}

// crashes reads cargo's "process didn't exit successfully" after a
// binary's header, for binaries that never printed their summary.
func (p *parser) crashes(errs []string) {
	i := -1
	for _, l := range errs {
		if header(l) != nil {
			i++
			continue
		}
		if m := processFailRe.FindStringSubmatch(l); m != nil && i >= 0 && i < len(p.bins) {
			p.bins[i].crash = m[1]
		}
	}
}

// stdout reads libtest's blocks, and inline headers when merged.
func (p *parser) stdout(out []string) {
	p.cur = -1
	next := 0 // next unclaimed header, for split output
	inSections := false
	var section string
	var body []string
	flush := func() {
		if section != "" {
			p.failure(section, body)
		}
		section, body = "", nil
	}
	for _, l := range out {
		if b := header(l); b != nil {
			flush()
			p.docIDs()
			inSections = false
			p.bins = append(p.bins, b)
			next = len(p.bins)
			p.cur = -1
			continue
		}
		if m := processFailRe.FindStringSubmatch(l); m != nil && p.cur >= 0 && !p.bins[p.cur].done {
			p.bins[p.cur].crash = m[1]
		}
		if blockRe.MatchString(l) {
			flush()
			p.docIDs()
			inSections = false
			switch {
			case next < len(p.bins) && !p.bins[next].started:
				p.cur = next
				next++
			case len(p.bins) > 0 && !p.bins[len(p.bins)-1].started:
				p.cur = len(p.bins) - 1
			default:
				p.bins = append(p.bins, &binary{target: "test binary " + strconv.Itoa(len(p.bins)+1)})
				p.cur = len(p.bins) - 1
				next = len(p.bins)
			}
			p.bins[p.cur].started = true
			p.byName = map[string]int{}
			continue
		}
		if p.cur < 0 {
			continue
		}
		if m := summaryRe.FindStringSubmatch(l); m != nil {
			flush()
			p.docIDs()
			inSections = false
			p.bins[p.cur].done = true
			p.sum.Binaries++
			p.sum.Passed += atoi(m[1])
			p.sum.Failed += atoi(m[2])
			p.sum.Ignored += atoi(m[3])
			continue
		}
		if m := sectionRe.FindStringSubmatch(l); m != nil {
			flush()
			inSections = true
			section = m[1]
			continue
		}
		if l == "failures:" || l == "successes:" {
			// The list of names after the sections, or before them.
			flush()
			inSections = false
			continue
		}
		if inSections {
			if len(body) < 4096 {
				body = append(body, l)
			}
			continue
		}
		if m := testRe.FindStringSubmatch(l); m != nil {
			p.test(m)
		}
	}
	flush()
	p.docIDs()
}

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// test records one "test NAME ... VERDICT" line.
func (p *parser) test(m []string) {
	if len(p.results) >= maxTests {
		return
	}
	b := p.bins[p.cur]
	name := nameSuffixesRe.ReplaceAllString(m[1], "")
	r := testrun.Result{Name: name, Package: b.target, Status: testrun.StatusPass}
	switch {
	case m[2] == "FAILED":
		r.Status = testrun.StatusFail
	case strings.HasPrefix(m[2], "ignored"):
		r.Status = testrun.StatusSkip
		r.Message = clip(m[3], maxMessage)
	}
	r.ID = b.target + "::" + name
	if b.doc {
		if d := docLineRe.FindStringSubmatch(name); d != nil {
			if f, ok := p.rel(d[1]); ok {
				r.File, r.Line = f, atoi(d[2])
			}
		}
		// The id is given when the block ends (docIDs): it must not
		// depend on the line, which any edit above the item moves.
		p.docs = append(p.docs, len(p.results))
		p.byName[name] = len(p.results)
		p.results = append(p.results, r)
		return
	}
	if p.seen[r.ID]++; p.seen[r.ID] > 1 {
		// Two binaries with one target path (workspace members): the
		// executable's name tells them apart.
		r.ID = b.exe + " " + r.ID
		if p.seen[r.ID]++; p.seen[r.ID] > 1 {
			r.ID += " (" + strconv.Itoa(p.seen[r.ID]) + ")"
		}
	}
	p.byName[name] = len(p.results)
	p.results = append(p.results, r)
}

// failure reads one "---- NAME stdout ----" section into its test.
func (p *parser) failure(name string, body []string) {
	i, ok := p.byName[nameSuffixesRe.ReplaceAllString(name, "")]
	if !ok {
		return
	}
	r := &p.results[i]
	var kept []string
	for _, l := range body {
		if !backtraceRe.MatchString(l) {
			kept = append(kept, l)
		}
	}
	text := strings.Trim(strings.Join(kept, "\n"), "\n")
	r.Excerpt = headTail(text, maxExcerpt)
	doc := p.bins[p.cur].doc
	switch {
	case oldPanicRe.MatchString(text):
		m := oldPanicRe.FindStringSubmatch(text)
		r.Message = clip(m[1], maxMessage)
		p.locate(r, m[2], m[3], doc)
	case newPanicRe.MatchString(text):
		m := newPanicRe.FindStringSubmatchIndex(text)
		msg := text[m[1]:]
		if j := strings.Index(msg, "\nnote: "); j >= 0 {
			msg = msg[:j]
		}
		r.Message = clip(strings.TrimSpace(msg), maxMessage)
		p.locate(r, text[m[2]:m[3]], text[m[4]:m[5]], doc)
	case strings.Contains(text, "note: test did not panic as expected"):
		r.Message = "test did not panic as expected"
	default:
		for _, l := range kept { // a doc test that does not compile
			if d := diagRe.FindStringSubmatch(l); d != nil && d[1] == "error" {
				r.Message = clip(l, maxMessage)
				break
			}
		}
		if r.Message == "" {
			r.Message = clip(lastLines(text, 3), maxMessage)
		}
	}
	if l := leftRe.FindStringSubmatch(r.Message); l != nil {
		if rt := rightRe.FindStringSubmatch(r.Message); rt != nil {
			// assert_eq!(got, want) is the common order.
			r.Actual, r.Expected = clip(l[1], maxMessage), clip(rt[1], maxMessage)
		}
	}
}

// locate sets a failure's file and line from a panic location. A doc
// test's panic location is in the generated program, so its own line
// (from its name) is kept and the location becomes a frame.
func (p *parser) locate(r *testrun.Result, file, line string, doc bool) {
	f, ok := p.rel(file)
	if !ok {
		return
	}
	if doc && r.File != "" {
		r.Frames = append(r.Frames, testrun.Frame{Func: "doc-test program", File: f, Line: atoi(line)})
		return
	}
	r.File, r.Line = f, atoi(line)
}

// build reads rustc's errors: every error diagnostic up to cargo's
// "could not compile `crate`" belongs to that crate, which becomes one
// error result located at its first error.
func (p *parser) build(all []string) {
	var pending []diag
	var cur *diag
	for _, l := range all {
		if m := couldNotRe.FindStringSubmatch(l); m != nil {
			p.compileError(m[1], pending)
			pending, cur = nil, nil
			continue
		}
		if m := diagRe.FindStringSubmatch(l); m != nil {
			cur = nil
			if m[1] == "error" && !strings.HasPrefix(m[3], "test failed") && !strings.HasPrefix(m[3], "doctest failed") && !strings.Contains(m[3], "target failed") && !strings.Contains(m[3], "targets failed") && len(pending) < 256 {
				pending = append(pending, diag{head: l})
				cur = &pending[len(pending)-1]
			}
			continue
		}
		if cur == nil {
			continue
		}
		if m := arrowRe.FindStringSubmatch(l); m != nil && cur.file == "" {
			cur.file, cur.line = m[1], atoi(m[2])
		}
		if len(cur.text) < 64 {
			cur.text = append(cur.text, l)
		}
	}
}

// diag is one rustc error: its first line, its location and its text.
type diag struct {
	head, file string
	line       int
	text       []string
}

func (p *parser) compileError(crate string, diags []diag) {
	if p.compiled == nil {
		p.compiled = map[string]bool{}
	}
	if p.compiled[crate] || len(p.results) >= maxTests {
		return
	}
	p.compiled[crate] = true
	r := testrun.Result{ID: crate + " (build)", Name: "build failed", Package: crate, Status: testrun.StatusError,
		Message: "could not compile " + crate}
	var excerpt []string
	for _, d := range diags {
		excerpt = append(excerpt, d.head)
		excerpt = append(excerpt, d.text...)
		f, ok := "", false
		if d.file != "" {
			f, ok = p.rel(d.file)
		}
		switch {
		case r.File == "" && ok:
			r.File, r.Line, r.Message = f, d.line, clip(d.head, maxMessage)
		case ok && len(r.Frames) < maxFrames:
			r.Frames = append(r.Frames, testrun.Frame{Func: clip(d.head, 200), File: f, Line: d.line})
		}
	}
	r.Excerpt = headTail(strings.Join(excerpt, "\n"), maxExcerpt)
	p.results = append(p.results, r)
}

// unfinished adds an error result for each binary that started and
// never printed its summary: it crashed (abort, stack overflow, a
// signal) or was killed.
func (p *parser) unfinished() {
	for _, b := range p.bins {
		if b.done || len(p.results) >= maxTests {
			continue
		}
		if !b.started && b.crash == "" {
			continue
		}
		msg := unfinishedMsg
		if b.crash != "" {
			msg += " (" + b.crash + ")"
		}
		id := b.target
		if p.seen[id]++; p.seen[id] > 1 {
			id = b.exe + " " + id
		}
		p.running = append(p.running, len(p.results))
		p.results = append(p.results, testrun.Result{ID: id, Name: b.target, Package: b.target, Status: testrun.StatusError, Message: msg})
	}
}

// relPaths turns the paths cargo prints (relative to the workspace root,
// or absolute under root) into clean workspace-relative ones.
func relPaths(root string) func(string) (string, bool) {
	roots := []string{"/workspace/"}
	if r := strings.TrimRight(root, "/"); strings.HasPrefix(r, "/") && r != "/workspace" {
		roots = append(roots, r+"/")
	}
	return func(p string) (string, bool) {
		if strings.HasPrefix(p, "/") {
			for _, r := range roots {
				if strings.HasPrefix(p, r) {
					c, err := sandbox.CleanRel(p[len(r):])
					return c, err == nil
				}
			}
			return p, false
		}
		c, err := sandbox.CleanRel(p)
		return c, err == nil
	}
}

func clip(s string, max int) string {
	s = strings.TrimSpace(s)
	if len(s) <= max {
		return s
	}
	cut := max
	for cut > 0 && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + " ..."
}

func headTail(s string, max int) string {
	if len(s) <= max {
		return s
	}
	h, t := s[:max/4], s[len(s)-(max-max/4):]
	for len(h) > 0 && h[len(h)-1]&0xC0 == 0x80 {
		h = h[:len(h)-1]
	}
	for len(t) > 0 && t[0]&0xC0 == 0x80 {
		t = t[1:]
	}
	return strings.ToValidUTF8(h, "") + "\n... [" + strconv.Itoa(len(s)-len(h)-len(t)) + " bytes omitted] ...\n" + strings.ToValidUTF8(t, "")
}

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

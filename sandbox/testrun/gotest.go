package testrun

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// GoTestJSON is the format of `go test -json` (cmd/test2json, with Go
// 1.24's build events and the older text build errors). module is the
// go.mod module path and modDirs maps the module paths of a Go workspace
// (go.work's use lines) to their workspace-relative directories: they
// turn the package-relative file names go test prints into
// workspace-relative ones. lang/golang builds it per project; with ""
// and nil (a configured command's output, sniffed) paths are resolved
// from what the output itself shows.
func GoTestJSON(module string, modDirs map[string]string) *Format {
	return &Format{
		Name: RunnerGo,
		Parse: func(in Input) Parsed {
			tests, running, out := parseGoJSON(in.Stdout, in.Stderr, module, modDirs, in.paths())
			return Parsed{Tests: tests, Running: running, Output: out, OwnOutput: true}
		},
		Sniff: func(stdout, _, _ []byte) bool {
			return bytes.Contains(stdout, []byte(`"Action":`))
		},
		ResultLine: goResultLine,
	}
}

var goFailOutRe = regexp.MustCompile(`"Output":"(?:\s*--- (?:FAIL|PASS|SKIP)|panic: |FAIL|ok  )`)

// goResultLine keeps go test -json events other than plain output, and
// output lines that carry a verdict or a panic.
func goResultLine(l []byte) bool {
	t := bytes.TrimLeft(l, " \t")
	if len(t) == 0 || t[0] != '{' || !bytes.Contains(t, []byte(`"Action":"`)) {
		return false
	}
	return !bytes.Contains(t, []byte(`"Action":"output"`)) || goFailOutRe.Match(t)
}

// goEvent is one line of `go test -json` (cmd/test2json), including the
// build events Go 1.24 added.
type goEvent struct {
	Action      string
	Package     string
	Test        string
	Output      string
	Elapsed     float64
	ImportPath  string // build-output, build-fail
	FailedBuild string // on a package's fail: the import path whose build failed
}

// boundedBuf keeps the head and the tail of a text that may grow without
// bound, in memory proportional to its limit.
type boundedBuf struct {
	head, tail strings.Builder
	dropped    int
	limit      int
}

func (b *boundedBuf) WriteString(s string) {
	if b.limit == 0 {
		b.limit = 32 << 10
	}
	if room := b.limit/4 - b.head.Len(); room > 0 && b.tail.Len() == 0 {
		if len(s) <= room {
			b.head.WriteString(s)
			return
		}
		b.head.WriteString(s[:room])
		s = s[room:]
	}
	b.tail.WriteString(s)
	if b.tail.Len() > b.limit {
		t := b.tail.String()
		keep := t[len(t)-b.limit/2:]
		b.dropped += len(t) - len(keep)
		b.tail.Reset()
		b.tail.WriteString(keep)
	}
}

func (b *boundedBuf) String() string {
	if b.dropped == 0 {
		return b.head.String() + b.tail.String()
	}
	return b.head.String() + "\n... [" + strconv.Itoa(b.dropped) + " bytes omitted] ...\n" + b.tail.String()
}

func (b *boundedBuf) Len() int { return b.head.Len() + b.tail.Len() }

type goTest struct {
	res    Result
	out    boundedBuf
	done   bool
	parent int // index of the parent test, -1 for a top-level test
	// nested: the test is not one of its package's: its events come from
	// a test run inside a test (testing.RunTests, testing.Main, a
	// `go test -v` whose output a test prints), see nestedRoot.
	nested bool
	in     *goTest // for a nested top-level name: the test it ran in
	paused bool    // a top-level test between its PAUSE and CONT
}

type goParser struct {
	module  string
	modDirs map[string]string // module path → workspace-relative dir (a Go workspace)
	n       *normalizer
	tests   []*goTest
	byKey   map[string]int
	pkgOut  map[string]*boundedBuf
	pkgs    []string          // in order of appearance
	pkgFail map[string]string // package → FailedBuild ("" when the tests failed)
	build   map[string]*boundedBuf
	output  boundedBuf
	// running is, per package, the top-level tests started and not
	// finished nor paused.
	running map[string]map[string]bool
}

// parseGoJSON parses `go test -json` output. Non-JSON lines (build errors of
// Go before 1.24, `go:` errors) are read as build output. It returns the
// tests, the indexes of tests that never finished, and the combined output.
func parseGoJSON(stdout, stderr []byte, module string, modDirs map[string]string, n *normalizer) ([]Result, []int, string) {
	p := &goParser{
		module: module, modDirs: modDirs, n: n, byKey: map[string]int{}, pkgOut: map[string]*boundedBuf{},
		pkgFail: map[string]string{}, build: map[string]*boundedBuf{}, running: map[string]map[string]bool{},
	}
	var loose []string
	for _, line := range splitLines(stdout) {
		var ev goEvent
		if strings.HasPrefix(line, "{") && json.Unmarshal([]byte(line), &ev) == nil && ev.Action != "" {
			p.event(&ev)
			continue
		}
		loose = append(loose, line)
		if len(loose) > 4096 {
			loose = loose[1:]
		}
	}
	loose = append(loose, splitLines(stderr)...)
	p.looseBuild(loose)

	p.dropNested()
	var results []Result
	var running []int
	var failing boundedBuf // the failing tests' output, for the model
	for _, t := range p.tests {
		if t.nested {
			continue
		}
		p.finish(t)
		if !t.done && t.res.Status == "" {
			running = append(running, len(results))
		}
		if (t.res.Status == StatusFail || t.res.Status == StatusError) && t.res.Excerpt != "" {
			failing.WriteString("--- FAIL: " + t.res.ID + "\n" + t.res.Excerpt + "\n")
		}
		results = append(results, t.res)
	}
	testFailed := map[string]bool{} // packages with a failed or unfinished test
	for _, t := range p.tests {
		if t.nested {
			continue
		}
		if t.res.Status == StatusFail || t.res.Status == StatusError || !t.done {
			testFailed[t.res.Package] = true
		}
	}
	for _, pkg := range p.pkgs {
		if r, ok := p.packageFailure(pkg, testFailed[pkg]); ok && len(results) < maxTests {
			results = append(results, r)
		}
	}
	out := failing.String() + p.output.String()
	if len(loose) > 0 {
		out = joinOutput([]byte(out), []byte(strings.Join(loose, "\n")))
	}
	cgoNoCompiler(results, stdout, stderr)
	return results, running, trimOutput(out)
}

// cgoCompilerRe finds go's "cgo: C compiler "gcc" not found" (quotes
// escaped inside a JSON build-output event).
var cgoCompilerRe = regexp.MustCompile(`cgo: C compiler \\?"([\w.+/-]{1,64})\\?" not found`)

// cgoNoCompiler names the cause in the "build failed" results of a run
// whose cgo build found no C compiler: the error is printed under
// runtime/cgo, not under the project's packages.
func cgoNoCompiler(results []Result, stdout, stderr []byte) {
	m := cgoCompilerRe.FindSubmatch(stdout)
	if m == nil {
		m = cgoCompilerRe.FindSubmatch(stderr)
	}
	if m == nil {
		return
	}
	msg := fmt.Sprintf("build failed: the package uses cgo and the sandbox has no C compiler (%q not found); use an image with gcc and libc6-dev (rebuild the go image: fixpoint sandbox images build --lang go, or set [sandbox] image)", m[1])
	for i := range results {
		if results[i].Status == StatusError && results[i].Message == "build failed" {
			results[i].Message = msg
		}
	}
}

func (p *goParser) event(ev *goEvent) {
	switch ev.Action {
	case "build-output":
		b := p.build[ev.ImportPath]
		if b == nil {
			if len(p.build) >= 1024 {
				return
			}
			b = &boundedBuf{limit: 16 << 10}
			p.build[ev.ImportPath] = b
		}
		b.WriteString(ev.Output)
		p.output.WriteString(ev.Output)
		return
	case "build-fail":
		return
	}
	if ev.Package == "" {
		return
	}
	if ev.Test == "" {
		p.packageEvent(ev)
		return
	}
	if ev.Action == "run" && !strings.Contains(ev.Test, "/") {
		p.nestedRoot(ev.Package, ev.Test)
	}
	t := p.test(ev.Package, ev.Test)
	if t == nil {
		return
	}
	top := t.parent < 0 && !strings.Contains(ev.Test, "/")
	switch ev.Action {
	case "output":
		t.out.WriteString(ev.Output)
	case "pause":
		if top {
			t.paused = true
			delete(p.running[ev.Package], ev.Test)
		}
	case "cont":
		if top && !t.done && !t.nested {
			t.paused = false
			p.running[ev.Package][ev.Test] = true
		}
	case "pass", "fail", "skip":
		if top && !t.nested {
			delete(p.running[ev.Package], ev.Test)
		}
		t.done = true
		t.res.Status = Status(ev.Action)
		if ev.Elapsed > 0 && ev.Elapsed < 1e9 {
			t.res.Duration = time.Duration(ev.Elapsed * float64(time.Second)).Round(time.Millisecond)
		}
	}
}

func (p *goParser) packageEvent(ev *goEvent) {
	b := p.pkgOut[ev.Package]
	if b == nil {
		if len(p.pkgOut) >= 4096 {
			return
		}
		b = &boundedBuf{limit: 16 << 10}
		p.pkgOut[ev.Package] = b
		p.pkgs = append(p.pkgs, ev.Package)
	}
	switch ev.Action {
	case "output":
		b.WriteString(ev.Output)
		if !strings.HasPrefix(ev.Output, "ok  ") && !strings.HasPrefix(ev.Output, "?   ") && ev.Output != "PASS\n" {
			p.output.WriteString(ev.Output)
		}
	case "fail":
		p.pkgFail[ev.Package] = ev.FailedBuild
		if ev.FailedBuild == "" {
			p.pkgFail[ev.Package] = " " // failed, not a build failure
		}
	}
}

func (p *goParser) test(pkg, name string) *goTest {
	key := pkg + "\x00" + name
	if i, ok := p.byKey[key]; ok {
		return p.tests[i]
	}
	if len(p.tests) >= maxTests {
		return nil
	}
	parent := -1
	if i := strings.LastIndexByte(name, '/'); i > 0 {
		if j, ok := p.byKey[pkg+"\x00"+name[:i]]; ok {
			parent = j
		}
	}
	t := &goTest{res: Result{ID: pkg + "." + name, Name: name, Package: pkg}, parent: parent}
	p.byKey[key] = len(p.tests)
	p.tests = append(p.tests, t)
	return t
}

// nestedRoot is called on the start of a top-level test name of pkg. Go
// runs a package's top-level tests one at a time (parallel ones pause
// until all others have run, and start no new ones): a top-level name
// that starts while another of the package's tests runs is a test run
// inside that test (testify's suite tests call testing.RunTests with
// tests meant to fail; a test may run `go test -v` and print its
// output), whose lines test2json reads as the package's own. Such a
// name, and every test under it, is marked nested and left out of the
// results: natively `go test ./...` passes the package.
func (p *goParser) nestedRoot(pkg, name string) {
	run := p.running[pkg]
	if run == nil {
		run = map[string]bool{}
		p.running[pkg] = run
	}
	if i, ok := p.byKey[pkg+"\x00"+name]; ok && p.tests[i].nested {
		return
	}
	for other := range run {
		if other != name {
			if t := p.test(pkg, name); t != nil {
				t.nested, t.in = true, p.tests[p.byKey[pkg+"\x00"+other]]
			}
			return
		}
	}
	if i, ok := p.byKey[pkg+"\x00"+name]; ok && p.tests[i].done {
		// The same name again after it finished: a rerun (-count=2).
		p.tests[i].done = false
	}
	run[name] = true
}

// dropNested marks nested every test under a nested top-level name, and
// every failed test whose top-level test passed: Go fails a test whose
// subtest failed, so such a failure belongs to a test run inside the
// passing test (testing.RunTests with names under its own, as testify's
// suite tests do), not to the package.
func (p *goParser) dropNested() {
	root := func(i int) *goTest {
		t := p.tests[i]
		for t.parent >= 0 {
			t = p.tests[t.parent]
		}
		return t
	}
	for _, t := range p.tests {
		// A test that never finished (the binary crashed or timed out)
		// did not run what came after it: those are the package's.
		if t.nested && t.in != nil && !t.in.done {
			t.nested, t.in = false, nil
		}
	}
	for i, t := range p.tests {
		r := root(i)
		if r.nested {
			t.nested = true
			continue
		}
		if r != t && r.done && r.res.Status == StatusPass && (t.res.Status == StatusFail || t.res.Status == StatusError) {
			t.nested = true
		}
	}
}

// pkgDir is the workspace-relative directory of a package of the module,
// or of the workspace module whose path is the longest prefix of pkg.
func (p *goParser) pkgDir(pkg string) string {
	if len(p.modDirs) > 0 {
		best, dir := "", ""
		for m, d := range p.modDirs {
			if (pkg == m || strings.HasPrefix(pkg, m+"/")) && len(m) > len(best) {
				best, dir = m, d
			}
		}
		if best == "" {
			return ""
		}
		if d := path.Join(dir, strings.TrimPrefix(strings.TrimPrefix(pkg, best), "/")); d != "." {
			return d
		}
		return ""
	}
	switch {
	case p.module == "":
		return ""
	case pkg == p.module:
		return ""
	case strings.HasPrefix(pkg, p.module+"/"):
		return pkg[len(p.module)+1:]
	}
	return ""
}

var (
	goLogRe      = regexp.MustCompile(`^(\s+)([\w.@+-]+\.go):(\d+): ?(.*)$`)
	goFrameRe    = regexp.MustCompile(`^\t(\S+\.go|_testmain\.go):(\d+)(?: \+0x[0-9a-f]+)?$`)
	goPanicRe    = regexp.MustCompile(`^panic: (.*)$`)
	goFailHintRe = regexp.MustCompile(`(?i)\b(got|want|expected|actual|error|fail|unexpected|mismatch|!=|not equal|should)\b`)
	goMarkerRe   = regexp.MustCompile(`^\s*(=== (RUN|PAUSE|CONT|NAME)|--- (PASS|FAIL|SKIP):)`)
)

// finish reads a test's output: message, location, expectation, frames.
func (p *goParser) finish(t *goTest) {
	text := t.out.String()
	lines := splitLines([]byte(text))
	var excerpt []string
	for _, l := range lines {
		if !goMarkerRe.MatchString(l) {
			excerpt = append(excerpt, l)
		}
	}
	timedOut := strings.Contains(text, "panic: test timed out")
	if !t.done && timedOut {
		t.res.Status = StatusFail
	}
	if t.res.Status == StatusFail || t.res.Status == StatusError || t.res.Status == StatusSkip {
		t.res.Excerpt = trimExcerpt(strings.Join(excerpt, "\n"))
	}
	if t.res.Status == StatusPass || t.res.Status == "" {
		return
	}
	dir := p.pkgDir(t.res.Package)
	if i := panicLine(lines); i >= 0 {
		msg := goPanicRe.FindStringSubmatch(lines[i])[1]
		msg = strings.TrimSuffix(strings.TrimSuffix(msg, " [recovered, repanicked]"), " [recovered]")
		t.res.Message = clip("panic: "+msg, maxMessage)
		frames := p.frames(lines[i:])
		if len(frames) > 0 {
			t.res.File, t.res.Line = frames[0].File, frames[0].Line
			t.res.Frames = frames[1:]
		}
		if timedOut {
			t.res.Message = clip(msg, maxMessage)
		}
		return
	}
	loc, msg := goFailureLine(lines)
	if loc == nil {
		if t.res.Status == StatusFail {
			t.res.Expected, t.res.Actual, t.res.Message = exampleOutput(text)
		}
		return
	}
	if f, ok := p.n.rel(loc[2], dir); ok {
		t.res.File = f
	}
	t.res.Line, _ = strconv.Atoi(loc[3])
	t.res.Message = clip(msg, maxMessage)
	if t.res.Status == StatusFail {
		t.res.Expected, t.res.Actual = expectation(msg)
	}
}

func panicLine(lines []string) int {
	for i, l := range lines {
		if goPanicRe.MatchString(l) {
			return i
		}
	}
	return -1
}

// goFailureLine picks the log line that reports the failure: the last one
// that reads like a failure, else the last one. Continuation lines (more
// deeply indented) belong to the message.
func goFailureLine(lines []string) ([]string, string) {
	var best []string
	bestMsg := ""
	bestHint := false
	for i := 0; i < len(lines); i++ {
		m := goLogRe.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		msg := []string{m[4]}
		for j := i + 1; j < len(lines); j++ {
			l := lines[j]
			if !strings.HasPrefix(l, m[1]+" ") && !strings.HasPrefix(l, m[1]+"\t") {
				break
			}
			msg = append(msg, strings.TrimSpace(strings.ReplaceAll(l, "\t", " ")))
			i = j
		}
		text := strings.TrimSpace(strings.Join(msg, "\n"))
		hint := goFailHintRe.MatchString(text)
		if best == nil || hint || !bestHint {
			best, bestMsg, bestHint = m, text, hint
		}
	}
	return best, collapseSpaces(bestMsg)
}

var spacesRe = regexp.MustCompile(`[ ]{2,}`)

func collapseSpaces(s string) string { return spacesRe.ReplaceAllString(s, " ") }

// frames reads a goroutine trace (func line, then "\tfile:line +0x..")
// and returns the frames inside the workspace, innermost first. The first
// frame of the module's own code teaches the normalizer the workspace root.
func (p *goParser) frames(lines []string) []Frame {
	var out []Frame
	for i := 1; i < len(lines) && len(out) < maxFrames; i++ {
		m := goFrameRe.FindStringSubmatch(lines[i])
		if m == nil {
			continue
		}
		fn := strings.TrimSpace(lines[i-1])
		if j := strings.LastIndexByte(fn, '('); j > 0 && strings.HasSuffix(fn, ")") {
			fn = fn[:j]
		}
		fn = strings.TrimPrefix(fn, "created by ")
		if k := strings.Index(fn, " in goroutine"); k > 0 {
			fn = fn[:k]
		}
		if fp := funcPackage(fn); fp != "" && p.module != "" && (fp == p.module || strings.HasPrefix(fp, p.module+"/")) {
			p.n.learnDir(path.Dir(m[1]), strings.TrimPrefix(strings.TrimPrefix(fp, p.module), "/"))
		}
		f, ok := p.n.rel(m[1], "")
		if !ok || !strings.HasPrefix(m[1], "/") {
			continue
		}
		line, _ := strconv.Atoi(m[2])
		out = append(out, Frame{Func: fn, File: f, Line: line})
	}
	return out
}

// funcPackage returns the package path of a qualified Go function name
// such as "example.com/m/pkg.(*T).Method".
func funcPackage(fn string) string {
	slash := strings.LastIndexByte(fn, '/')
	dot := strings.IndexByte(fn[slash+1:], '.')
	if dot < 0 {
		return ""
	}
	return fn[:slash+1+dot]
}

// packageFailure reports a failed package none of whose tests failed: a
// build failure, a panic in init or TestMain, a crashed test binary.
func (p *goParser) packageFailure(pkg string, testFailed bool) (Result, bool) {
	fb, failed := p.pkgFail[pkg]
	if !failed {
		return Result{}, false
	}
	if fb == " " {
		if testFailed {
			return Result{}, false
		}
		r := Result{ID: pkg, Name: pkg, Package: pkg, Status: StatusError, Message: "package failed outside any test"}
		if b := p.pkgOut[pkg]; b != nil {
			lines := splitLines([]byte(b.String()))
			r.Excerpt = trimExcerpt(b.String())
			if i := panicLine(lines); i >= 0 {
				r.Message = clip(lines[i], maxMessage)
				if fr := p.frames(lines[i:]); len(fr) > 0 {
					r.File, r.Line, r.Frames = fr[0].File, fr[0].Line, fr[1:]
				}
			} else if l := lastLines(strings.Join(dropStatusLines(lines), "\n"), 3); l != "" {
				r.Message = clip(l, maxMessage)
			}
		}
		return r, true
	}
	b := p.build[fb]
	text := ""
	if b != nil {
		text = b.String()
	}
	return buildFailure(pkg, text, p.n), true
}

func dropStatusLines(lines []string) []string {
	var out []string
	for _, l := range lines {
		if l == "FAIL" || strings.HasPrefix(l, "FAIL\t") || strings.HasPrefix(l, "ok  \t") {
			continue
		}
		out = append(out, l)
	}
	return out
}

var goCompileRe = regexp.MustCompile(`^(?:\./)?([\w./@+-]+\.(?:go|s|c|mod|sum)):(\d+)(?::(\d+))?: (.*)$`)

// buildFailure makes the error result of a package that did not compile.
// Compiler paths are relative to the directory go ran in, the workspace root.
func buildFailure(pkg, text string, n *normalizer) Result {
	r := Result{ID: pkg, Name: "build failed", Package: pkg, Status: StatusError, Message: "build failed"}
	var excerpt []string
	for _, l := range splitLines([]byte(text)) {
		if strings.HasPrefix(l, "# ") {
			continue
		}
		excerpt = append(excerpt, l)
		m := goCompileRe.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		f, ok := n.rel(m[1], "")
		if !ok {
			continue
		}
		line, _ := strconv.Atoi(m[2])
		if r.File == "" {
			r.File, r.Line, r.Message = f, line, clip(m[4], maxMessage)
		} else if len(r.Frames) < maxFrames {
			r.Frames = append(r.Frames, Frame{File: f, Line: line})
		}
	}
	r.Excerpt = trimExcerpt(strings.Join(excerpt, "\n"))
	return r
}

// looseBuild reads non-JSON lines as `go build` output: "# pkg" headers
// followed by compiler errors. Packages already reported are skipped.
func (p *goParser) looseBuild(lines []string) {
	var pkg string
	var body []string
	flush := func() {
		if pkg == "" || len(body) == 0 {
			return
		}
		if fb, ok := p.pkgFail[pkg]; ok && fb != " " {
			return // reported by build-output events
		}
		if _, seen := p.pkgOut[pkg]; !seen {
			if len(p.pkgs) >= 4096 {
				return
			}
			p.pkgOut[pkg] = &boundedBuf{limit: 16 << 10}
			p.pkgs = append(p.pkgs, pkg)
		}
		p.pkgFail[pkg] = "\x00" + pkg
		p.build["\x00"+pkg] = &boundedBuf{limit: 16 << 10}
		p.build["\x00"+pkg].WriteString(strings.Join(body, "\n"))
	}
	for _, l := range lines {
		if strings.HasPrefix(l, "# ") {
			flush()
			pkg, body = strings.Fields(l[2:] + " x")[0], nil
			continue
		}
		if pkg != "" && goCompileRe.MatchString(l) {
			body = append(body, l)
		}
	}
	flush()
}

// exampleOutput reads a failed Example's "got:\n...\nwant:\n..." report.
func exampleOutput(text string) (want, got, msg string) {
	i := strings.Index(text, "got:\n")
	j := strings.Index(text, "\nwant:\n")
	if i < 0 || j < i {
		return "", "", ""
	}
	got = strings.TrimSpace(text[i+len("got:\n") : j])
	want = strings.TrimSpace(text[j+len("\nwant:\n"):])
	return clip(want, maxMessage), clip(got, maxMessage), "example output differs"
}

package memory

import (
	"regexp"
	"strings"
)

// Signature returns the normalised signature of raw failure output: what
// identifies the error, without what changes between two occurrences of it.
//
// It keeps the exception or panic type and its message template, the
// failing test, and the function names of the top frames (user code first,
// runtime and test-harness frames dropped). It strips absolute and
// temporary paths (down to the file name), line and column numbers, hex
// addresses, goroutine ids, timestamps, durations, ports and other
// numbers. lang is "go", "python" or "node" ("javascript", "typescript"
// are treated as node); "" detects it from the output. The result has one
// "key: value" per line, e.g.
//
//	lang: go
//	test: TestParse
//	panic: runtime error: index out of range [N] with length N
//	frames: parser.next < parser.Parse < parser.TestParse
func Signature(lang, raw string) string {
	raw = ansiRE.ReplaceAllString(strings.ReplaceAll(raw, "\r\n", "\n"), "")
	lang = canonicalLang(lang, raw)
	var s sig
	switch lang {
	case "go":
		s = goSignature(raw)
	case "python":
		s = pythonSignature(raw)
	case "node":
		s = nodeSignature(raw)
	}
	if len(s.errors) == 0 {
		s.errors = genericErrors(raw)
	}
	return s.render(lang)
}

// sig collects the parts of a signature.
type sig struct {
	tests  []string
	errors []string // "panic: ...", "TypeError: ...", "build: ..."
	frames []string // innermost first
}

const (
	maxSigTests  = 3
	maxSigErrors = 4
	maxSigFrames = 4
	maxSigLine   = 240
)

func (s *sig) render(lang string) string {
	var b strings.Builder
	if lang != "" {
		b.WriteString("lang: " + lang + "\n")
	}
	for _, t := range dedupe(s.tests, maxSigTests) {
		b.WriteString("test: " + t + "\n")
	}
	for _, e := range dedupe(s.errors, maxSigErrors) {
		b.WriteString(e + "\n")
	}
	if fr := dedupe(s.frames, maxSigFrames); len(fr) > 0 {
		b.WriteString("frames: " + strings.Join(fr, " < ") + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

func dedupe(xs []string, max int) []string {
	seen := map[string]bool{}
	var out []string
	for _, x := range xs {
		x = strings.TrimSpace(x)
		if len(x) > maxSigLine {
			x = strings.ToValidUTF8(x[:maxSigLine], "") + "…"
		}
		if x == "" || seen[x] {
			continue
		}
		seen[x] = true
		out = append(out, x)
		if len(out) == max {
			break
		}
	}
	return out
}

func canonicalLang(lang, raw string) string {
	switch strings.ToLower(lang) {
	case "go", "golang":
		return "go"
	case "python", "py", "python3":
		return "python"
	case "node", "javascript", "js", "typescript", "ts":
		return "node"
	case "":
	default:
		return strings.ToLower(lang)
	}
	switch {
	case strings.Contains(raw, "Traceback (most recent call last)") || pyFileRE.MatchString(raw):
		return "python"
	case strings.Contains(raw, "--- FAIL") || strings.Contains(raw, "goroutine ") || goBuildRE.MatchString(raw):
		return "go"
	case strings.Contains(raw, "node:internal") || strings.Contains(raw, "TAP version") || jsFrameRE.MatchString(raw):
		return "node"
	}
	return ""
}

var (
	ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[a-zA-Z]`)
	// Paths: absolute, home-relative or ./relative, with an extension or a
	// slash inside; replaced by the file name.
	pathRE   = regexp.MustCompile(`(?:[A-Za-z]:)?(?:~|\.{1,2})?(?:[/\\][\w.@+~-]+)+[/\\]([\w.@+-]+)([/\\]?)`)
	relRE    = regexp.MustCompile(`\.{1,2}/([\w.@+-]+)`)
	lineColR = regexp.MustCompile(`(\.\w{1,5})(?::\d+){1,2}\b`)
	hexRE    = regexp.MustCompile(`\b0x[0-9a-fA-F]+\b`)
	// Timestamps before durations and numbers.
	timeRE  = regexp.MustCompile(`\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:?\d{2})?\b|\b\d{2}:\d{2}:\d{2}(?:\.\d+)?\b`)
	durRE   = regexp.MustCompile(`\b\d+(?:\.\d+)?(?:ns|µs|us|ms|s|m|h)\b`)
	ipRE    = regexp.MustCompile(`\b(\d{1,3}(?:\.\d{1,3}){3}|localhost|\[::1?\]):\d{2,5}\b`)
	uuidRE  = regexp.MustCompile(`\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b`)
	longHex = regexp.MustCompile(`\b[0-9a-f]{12,}\b`)
	numRE   = regexp.MustCompile(`(^|[^\w.])-?\d+(?:\.\d+)?\b`)
	spaceRE = regexp.MustCompile(`\s+`)
)

// normLine strips what varies between occurrences of the same error.
func normLine(s string) string {
	s = timeRE.ReplaceAllString(s, "<time>")
	s = uuidRE.ReplaceAllString(s, "<uuid>")
	s = ipRE.ReplaceAllString(s, "<host>:<port>")
	s = pathRE.ReplaceAllStringFunc(s, func(p string) string {
		if strings.HasSuffix(p, "/") || strings.HasSuffix(p, "\\") {
			return "<dir>" // a directory: which one varies between checkouts
		}
		return pathRE.ReplaceAllString(p, "$1")
	})
	s = relRE.ReplaceAllString(s, "$1")
	s = lineColR.ReplaceAllString(s, "$1")
	s = hexRE.ReplaceAllString(s, "0x?")
	s = longHex.ReplaceAllString(s, "<hex>")
	s = durRE.ReplaceAllString(s, "<dur>")
	s = numRE.ReplaceAllString(s, "${1}N")
	return strings.TrimSpace(spaceRE.ReplaceAllString(s, " "))
}

// genericErrors picks lines that look like errors when no language parser
// found any.
func genericErrors(raw string) []string {
	var out []string
	for _, l := range strings.Split(raw, "\n") {
		low := strings.ToLower(l)
		if strings.Contains(low, "error") || strings.Contains(low, "fail") || strings.Contains(low, "panic") || strings.Contains(low, "exception") {
			out = append(out, "error: "+normLine(l))
		}
	}
	if len(out) == 0 {
		for _, l := range strings.Split(strings.TrimSpace(raw), "\n") {
			if n := normLine(l); n != "" {
				out = append(out, "error: "+n)
			}
		}
	}
	return out
}

// Go.

var (
	goFailRE    = regexp.MustCompile(`^\s*--- FAIL: (\S+)`)
	goPanicRE   = regexp.MustCompile(`^(panic|fatal error): (.*)$`)
	goLogRE     = regexp.MustCompile(`^\s+([\w.-]+\.go):\d+: (.*)$`)
	goBuildRE   = regexp.MustCompile(`(?m)^(?:\./|/)?[\w./-]*\.go:\d+(?::\d+)?: (.*)$`)
	goFuncRE    = regexp.MustCompile(`^([\w./()*-]+?)(?:\(.*\))?$`)
	goRunningRE = regexp.MustCompile(`^\s+(Test\w*)(?:/\S+)? \(`)
	goRecovered = regexp.MustCompile(`\s*\[recovered(?:, repanicked)?\]`)
)

func goSignature(raw string) sig {
	var s sig
	lines := strings.Split(raw, "\n")
	inTimeout := false
	for i, l := range lines {
		if m := goFailRE.FindStringSubmatch(l); m != nil {
			s.tests = append(s.tests, m[1])
			continue
		}
		if m := goPanicRE.FindStringSubmatch(l); m != nil {
			msg := goRecovered.ReplaceAllString(m[2], "")
			s.errors = append(s.errors, m[1]+": "+normLine(msg))
			inTimeout = strings.HasPrefix(msg, "test timed out")
			continue
		}
		if inTimeout {
			if m := goRunningRE.FindStringSubmatch(l); m != nil {
				s.tests = append(s.tests, m[1])
				continue
			}
		}
		if m := goLogRE.FindStringSubmatch(l); m != nil {
			s.errors = append(s.errors, "error: "+normLine(m[2]))
			continue
		}
		if !strings.HasPrefix(l, "\t") && !strings.HasPrefix(l, " ") {
			if m := goBuildRE.FindStringSubmatch(l); m != nil {
				s.errors = append(s.errors, "build: "+normLine(m[1]))
				continue
			}
		}
		// A frame is a function line followed by a tab-indented file line.
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\t") && strings.Contains(lines[i+1], ".go:") &&
			!strings.HasPrefix(l, "\t") && !strings.HasPrefix(l, "created by ") {
			if f := goFrame(l); f != "" {
				s.frames = append(s.frames, f)
			}
		}
	}
	return s
}

// goStdPrefixes are frames of the runtime and the test harness.
var goStdPrefixes = []string{"runtime.", "testing.", "panic(", "main.main", "time.", "sync.", "reflect.", "os.", "internal/", "net.", "net/", "syscall.", "fmt.", "io.", "bufio."}

// goFrame turns "example.com/cache.(*Store).Put(0x1, ...)" into
// "cache.(*Store).Put", or "" for a standard-library frame.
func goFrame(l string) string {
	l = strings.TrimSpace(l)
	if strings.HasPrefix(l, "panic(") {
		return ""
	}
	if i := strings.LastIndex(l, "("); i > 0 && strings.HasSuffix(l, ")") {
		// Strip the argument list, not a method receiver: arguments come last.
		l = l[:i]
	}
	l = strings.TrimSuffix(l, "...")
	for _, p := range goStdPrefixes {
		if strings.HasPrefix(l, p) {
			return ""
		}
	}
	if i := strings.LastIndex(l, "/"); i >= 0 {
		l = l[i+1:]
	}
	if m := goFuncRE.FindStringSubmatch(l); m != nil {
		l = m[1]
	}
	// Closures: Foo.func1.2 -> Foo.func
	return goClosureRE.ReplaceAllString(l, ".func")
}

var goClosureRE = regexp.MustCompile(`\.func\d+(?:\.\d+)*`)

// Python.

var (
	pyFileRE  = regexp.MustCompile(`(?m)^\s*File "([^"]+)", line \d+(?:, in (\S+))?`)
	pyExcRE   = regexp.MustCompile(`^([A-Za-z_][\w.]*(?:Error|Exception|Warning|Exit|Interrupt|Iteration|Timeout|Refused|NotFound)?)(?:: (.*))?$`)
	pyTestRE  = regexp.MustCompile(`^(?:FAIL|ERROR): (\w+) \(([\w.]+)\)`)
	pytestRE  = regexp.MustCompile(`^(?:FAILED|ERROR) (\S+?)(?: - (.*))?$`)
	pytestERE = regexp.MustCompile(`^E\s+(.*)$`)
	// Frames in the standard library (not site-packages) are not the
	// project's: /usr/lib/python3.11/json/decoder.py.
	pyStdlibRE = regexp.MustCompile(`[/\\]lib[/\\]python3?[\d.]*[/\\](?:[^/\\]+[/\\])*[^/\\]+\.py$`)
)

func pythonSignature(raw string) sig {
	var s sig
	lines := strings.Split(raw, "\n")
	var frames []string
	for i, l := range lines {
		if m := pyTestRE.FindStringSubmatch(l); m != nil {
			s.tests = append(s.tests, lastDotted(m[2]))
			continue
		}
		if m := pytestRE.FindStringSubmatch(l); m != nil && strings.Contains(m[1], "::") {
			s.tests = append(s.tests, m[1][strings.LastIndex(m[1], "::")+2:])
			continue
		}
		if m := pytestERE.FindStringSubmatch(l); m != nil {
			s.errors = append(s.errors, normLine(m[1]))
			continue
		}
		if m := pyFileRE.FindStringSubmatch(l); m != nil {
			if m[2] != "" && m[2] != "<module>" && !pyStdlibRE.MatchString(m[1]) {
				frames = append(frames, m[2])
			}
			continue
		}
		if strings.HasPrefix(l, " ") || strings.HasPrefix(l, "\t") {
			continue
		}
		if m := pyExcRE.FindStringSubmatch(strings.TrimSpace(l)); m != nil && isPyException(m[1]) {
			e := lastDotted(m[1])
			if m[2] != "" {
				e += ": " + normLine(m[2])
			}
			s.errors = append(s.errors, e)
			// The first lines of a unittest message explain the mismatch.
			for j := i + 1; j < len(lines) && j <= i+2; j++ {
				if t := strings.TrimSpace(lines[j]); t != "" && !strings.HasPrefix(t, "---") && !strings.HasPrefix(t, "===") {
					s.errors = append(s.errors, "detail: "+normLine(t))
				}
			}
		}
	}
	// Innermost frame last in a traceback: reverse.
	for i := len(frames) - 1; i >= 0; i-- {
		s.frames = append(s.frames, frames[i])
	}
	// The exception line is the most telling: put the last one first.
	if n := len(s.errors); n > 1 {
		for i := n - 1; i >= 0; i-- {
			if !strings.HasPrefix(s.errors[i], "detail: ") {
				e := s.errors[i]
				s.errors = append([]string{e}, append(s.errors[:i:i], s.errors[i+1:]...)...)
				break
			}
		}
	}
	return s
}

func isPyException(name string) bool {
	base := lastDotted(name)
	for _, suf := range []string{"Error", "Exception", "Warning", "Exit", "Interrupt", "StopIteration", "Refused", "NotFound", "Timeout"} {
		if strings.HasSuffix(base, suf) {
			return true
		}
	}
	return false
}

func lastDotted(s string) string {
	if i := strings.LastIndex(s, "."); i >= 0 && i+1 < len(s) {
		return s[i+1:]
	}
	return s
}

// Node.

var (
	jsErrRE   = regexp.MustCompile(`^(?:Uncaught )?([A-Z]\w*(?:Error|Exception)|Error)(?: \[(\w+)\])?: (.*)$`)
	jsFrameRE = regexp.MustCompile(`(?m)^\s+at (?:async )?(?:(\S.*?) \()?([^()\s]+?)(?::\d+:\d+)?\)?$`)
	tapFailRE = regexp.MustCompile(`^\s*not ok \d+ - (.*)$`)
	tapKeyRE  = regexp.MustCompile(`^\s+(code|name|operator): '?([^']*)'?$`)
	tapStack  = regexp.MustCompile(`^\s+(\S+(?: \[as \w+\])?) \((.*)\)$`)
	jestRE    = regexp.MustCompile(`^\s*● (.*)$`)
)

func nodeSignature(raw string) sig {
	var s sig
	lines := strings.Split(raw, "\n")
	inTAPError, inTAPStack := false, false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if m := tapFailRE.FindStringSubmatch(l); m != nil {
			s.tests = append(s.tests, m[1])
			continue
		}
		if m := jestRE.FindStringSubmatch(l); m != nil {
			s.tests = append(s.tests, m[1])
			continue
		}
		if strings.HasPrefix(t, "error: |-") || strings.HasPrefix(t, "error: '") {
			inTAPError, inTAPStack = true, false
			if rest := strings.Trim(strings.TrimPrefix(t, "error: "), "'"); rest != "|-" {
				s.errors = append(s.errors, "error: "+normLine(rest))
				inTAPError = false
			}
			continue
		}
		if strings.HasPrefix(t, "stack: |-") {
			inTAPError, inTAPStack = false, true
			continue
		}
		if m := tapKeyRE.FindStringSubmatch(l); m != nil {
			inTAPError, inTAPStack = false, false
			if m[1] == "code" || m[1] == "name" {
				s.errors = append(s.errors, m[1]+": "+m[2])
			}
			continue
		}
		if inTAPError {
			if t != "" {
				s.errors = append(s.errors, "error: "+normLine(t))
			}
			continue
		}
		if inTAPStack {
			if m := tapStack.FindStringSubmatch(l); m != nil {
				if f := jsFrame(m[1], m[2]); f != "" {
					s.frames = append(s.frames, f)
				}
				continue
			}
			inTAPStack = false
		}
		if m := jsErrRE.FindStringSubmatch(t); m != nil && !strings.HasPrefix(l, " ") {
			e := m[1]
			if m[2] != "" {
				e += " [" + m[2] + "]"
			}
			s.errors = append(s.errors, e+": "+normLine(m[3]))
			continue
		}
		if m := jsFrameRE.FindStringSubmatch(l); m != nil {
			if f := jsFrame(m[1], m[2]); f != "" {
				s.frames = append(s.frames, f)
			}
		}
	}
	return s
}

// jsFrame returns the function name of a stack frame, or "" for frames in
// node's internals, node_modules or anonymous top-level code.
func jsFrame(fn, loc string) string {
	if strings.HasPrefix(loc, "node:") || strings.Contains(loc, "node_modules") || strings.HasPrefix(fn, "node:") {
		return ""
	}
	fn = strings.TrimPrefix(fn, "async ")
	if fn == "" || fn == "Object.<anonymous>" || strings.HasPrefix(fn, "Module.") || strings.HasPrefix(fn, "new Promise") {
		return ""
	}
	if i := strings.Index(fn, " [as "); i >= 0 {
		fn = fn[:i]
	}
	return fn
}

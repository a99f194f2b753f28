package golang

import (
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
)

var (
	goFailRE    = regexp.MustCompile(`^\s*--- FAIL: (\S+)`)
	goPanicRE   = regexp.MustCompile(`^(panic|fatal error): (.*)$`)
	goLogRE     = regexp.MustCompile(`^\s+([\w.-]+\.go):\d+: (.*)$`)
	goBuildRE   = regexp.MustCompile(`(?m)^(?:\./|/)?[\w./-]*\.go:\d+(?::\d+)?: (.*)$`)
	goFuncRE    = regexp.MustCompile(`^([\w./()*-]+?)(?:\(.*\))?$`)
	goRunningRE = regexp.MustCompile(`^\s+(Test\w*)(?:/\S+)? \(`)
	goRecovered = regexp.MustCompile(`\s*\[recovered(?:, repanicked)?\]`)
)

// Aliases: "golang".
func (Language) Aliases() []string { return []string{"golang"} }

// LooksLike: a failing test, a goroutine dump or a compiler error.
func (Language) LooksLike(raw string) bool {
	return strings.Contains(raw, "--- FAIL") || strings.Contains(raw, "goroutine ") || goBuildRE.MatchString(raw)
}

// Signature keeps the failing tests (and the running ones of a test
// timeout), panics, t.Error lines and build errors, and the project's
// frames of a goroutine trace.
func (Language) Signature(raw string) lang.Signature { return goSignature(raw) }

func goSignature(raw string) lang.Signature {
	var s lang.Signature
	lines := strings.Split(raw, "\n")
	inTimeout := false
	for i, l := range lines {
		if m := goFailRE.FindStringSubmatch(l); m != nil {
			s.Tests = append(s.Tests, m[1])
			continue
		}
		if m := goPanicRE.FindStringSubmatch(l); m != nil {
			msg := goRecovered.ReplaceAllString(m[2], "")
			s.Errors = append(s.Errors, m[1]+": "+lang.NormLine(msg))
			inTimeout = strings.HasPrefix(msg, "test timed out")
			continue
		}
		if inTimeout {
			if m := goRunningRE.FindStringSubmatch(l); m != nil {
				s.Tests = append(s.Tests, m[1])
				continue
			}
		}
		if m := goLogRE.FindStringSubmatch(l); m != nil {
			s.Errors = append(s.Errors, "error: "+lang.NormLine(m[2]))
			continue
		}
		if !strings.HasPrefix(l, "\t") && !strings.HasPrefix(l, " ") {
			if m := goBuildRE.FindStringSubmatch(l); m != nil {
				s.Errors = append(s.Errors, "build: "+lang.NormLine(m[1]))
				continue
			}
		}
		// A frame is a function line followed by a tab-indented file line.
		if i+1 < len(lines) && strings.HasPrefix(lines[i+1], "\t") && strings.Contains(lines[i+1], ".go:") &&
			!strings.HasPrefix(l, "\t") && !strings.HasPrefix(l, "created by ") {
			if f := goFrame(l); f != "" {
				s.Frames = append(s.Frames, f)
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

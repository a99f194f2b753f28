package memory

import (
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
)

// Signature returns the normalised signature of raw failure output: what
// identifies the error, without what changes between two occurrences of it.
//
// It keeps the exception or panic type and its message template, the
// failing test, and the function names of the top frames (user code first,
// runtime and test-harness frames dropped). It strips absolute and
// temporary paths (down to the file name), line and column numbers, hex
// addresses, goroutine ids, timestamps, durations, ports and other
// numbers. name is a language's name or alias ("golang", "typescript": see
// lang/registry.ByAlias); "" detects it from the output. The result has one
// "key: value" per line, e.g.
//
//	lang: go
//	test: TestParse
//	panic: runtime error: index out of range [N] with length N
//	frames: parser.next < parser.Parse < parser.TestParse
//
// What identifies a failure is the language's (lang.FailureReader); lines
// that look like errors stand in when it finds none.
func Signature(name, raw string) string {
	raw = ansiRE.ReplaceAllString(strings.ReplaceAll(raw, "\r\n", "\n"), "")
	var s lang.Signature
	l := registry.ByAlias(name)
	switch {
	case l != nil:
		name = l.Name()
	case name == "":
		if l = registry.FailureOf(raw); l != nil {
			name = l.Name()
		}
	default:
		name = strings.ToLower(name)
	}
	if r, ok := l.(lang.FailureReader); ok {
		s = r.Signature(raw)
	}
	if len(s.Errors) == 0 {
		s.Errors = genericErrors(raw)
	}
	return render(name, s)
}

var ansiRE = regexp.MustCompile(`\x1b\[[0-9;?]*[a-zA-Z]`)

const (
	maxSigTests  = 3
	maxSigErrors = 4
	maxSigFrames = 4
	maxSigLine   = 240
)

func render(name string, s lang.Signature) string {
	var b strings.Builder
	if name != "" {
		b.WriteString("lang: " + name + "\n")
	}
	for _, t := range dedupe(s.Tests, maxSigTests) {
		b.WriteString("test: " + t + "\n")
	}
	for _, e := range dedupe(s.Errors, maxSigErrors) {
		b.WriteString(e + "\n")
	}
	if fr := dedupe(s.Frames, maxSigFrames); len(fr) > 0 {
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

// genericErrors picks lines that look like errors when no language parser
// found any.
func genericErrors(raw string) []string {
	var out []string
	for _, l := range strings.Split(raw, "\n") {
		low := strings.ToLower(l)
		if strings.Contains(low, "error") || strings.Contains(low, "fail") || strings.Contains(low, "panic") || strings.Contains(low, "exception") {
			out = append(out, "error: "+lang.NormLine(l))
		}
	}
	if len(out) == 0 {
		for _, l := range strings.Split(strings.TrimSpace(raw), "\n") {
			if n := lang.NormLine(l); n != "" {
				out = append(out, "error: "+n)
			}
		}
	}
	return out
}

// Headline is the line of a signature that names the error: the first one
// that is not its "lang:", "test:" or "frames:" line.
func Headline(sig string) string {
	for _, l := range strings.Split(sig, "\n") {
		if l == "" || strings.HasPrefix(l, "lang: ") || strings.HasPrefix(l, "test: ") || strings.HasPrefix(l, "frames: ") {
			continue
		}
		return l
	}
	l, _, _ := strings.Cut(strings.TrimSpace(sig), "\n")
	return l
}

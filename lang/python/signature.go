package python

import (
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
)

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

// Aliases: "py", "python3".
func (Language) Aliases() []string { return []string{"py", "python3"} }

// LooksLike: a traceback or its frames.
func (Language) LooksLike(raw string) bool {
	return strings.Contains(raw, "Traceback (most recent call last)") || pyFileRE.MatchString(raw)
}

// Signature keeps unittest and pytest test names, the exception (last
// one first) with the lines that explain it, pytest's E lines, and the
// project's traceback frames, innermost first.
func (Language) Signature(raw string) lang.Signature { return pythonSignature(raw) }

func pythonSignature(raw string) lang.Signature {
	var s lang.Signature
	lines := strings.Split(raw, "\n")
	var frames []string
	for i, l := range lines {
		if m := pyTestRE.FindStringSubmatch(l); m != nil {
			s.Tests = append(s.Tests, lastDotted(m[2]))
			continue
		}
		if m := pytestRE.FindStringSubmatch(l); m != nil && strings.Contains(m[1], "::") {
			s.Tests = append(s.Tests, m[1][strings.LastIndex(m[1], "::")+2:])
			continue
		}
		if m := pytestERE.FindStringSubmatch(l); m != nil {
			s.Errors = append(s.Errors, lang.NormLine(m[1]))
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
				e += ": " + lang.NormLine(m[2])
			}
			s.Errors = append(s.Errors, e)
			// The first lines of a unittest message explain the mismatch.
			for j := i + 1; j < len(lines) && j <= i+2; j++ {
				if t := strings.TrimSpace(lines[j]); t != "" && !strings.HasPrefix(t, "---") && !strings.HasPrefix(t, "===") {
					s.Errors = append(s.Errors, "detail: "+lang.NormLine(t))
				}
			}
		}
	}
	// Innermost frame last in a traceback: reverse.
	for i := len(frames) - 1; i >= 0; i-- {
		s.Frames = append(s.Frames, frames[i])
	}
	// The exception line is the most telling: put the last one first.
	if n := len(s.Errors); n > 1 {
		for i := n - 1; i >= 0; i-- {
			if !strings.HasPrefix(s.Errors[i], "detail: ") {
				e := s.Errors[i]
				s.Errors = append([]string{e}, append(s.Errors[:i:i], s.Errors[i+1:]...)...)
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

package node

import (
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
)

var (
	jsErrRE   = regexp.MustCompile(`^(?:Uncaught )?([A-Z]\w*(?:Error|Exception)|Error)(?: \[(\w+)\])?: (.*)$`)
	jsFrameRE = regexp.MustCompile(`(?m)^\s+at (?:async )?(?:(\S.*?) \()?([^()\s]+?)(?::\d+:\d+)?\)?$`)
	tapFailRE = regexp.MustCompile(`^\s*not ok \d+ - (.*)$`)
	tapKeyRE  = regexp.MustCompile(`^\s+(code|name|operator): '?([^']*)'?$`)
	tapStack  = regexp.MustCompile(`^\s+(\S+(?: \[as \w+\])?) \((.*)\)$`)
	jestRE    = regexp.MustCompile(`^\s*● (.*)$`)
)

// Aliases: "javascript", "js", "typescript", "ts".
func (Language) Aliases() []string { return []string{"javascript", "js", "typescript", "ts"} }

// LooksLike: node internals in a stack, TAP output or a JS stack frame.
func (Language) LooksLike(raw string) bool {
	return strings.Contains(raw, "node:internal") || strings.Contains(raw, "TAP version") || jsFrameRE.MatchString(raw)
}

// Signature keeps TAP and jest failing tests, errors (with their code),
// and the project's stack frames (not node internals or node_modules).
func (Language) Signature(raw string) lang.Signature { return nodeSignature(raw) }

func nodeSignature(raw string) lang.Signature {
	var s lang.Signature
	lines := strings.Split(raw, "\n")
	inTAPError, inTAPStack := false, false
	for _, l := range lines {
		t := strings.TrimSpace(l)
		if m := tapFailRE.FindStringSubmatch(l); m != nil {
			s.Tests = append(s.Tests, m[1])
			continue
		}
		if m := jestRE.FindStringSubmatch(l); m != nil {
			s.Tests = append(s.Tests, m[1])
			continue
		}
		if strings.HasPrefix(t, "error: |-") || strings.HasPrefix(t, "error: '") {
			inTAPError, inTAPStack = true, false
			if rest := strings.Trim(strings.TrimPrefix(t, "error: "), "'"); rest != "|-" {
				s.Errors = append(s.Errors, "error: "+lang.NormLine(rest))
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
				s.Errors = append(s.Errors, m[1]+": "+m[2])
			}
			continue
		}
		if inTAPError {
			if t != "" {
				s.Errors = append(s.Errors, "error: "+lang.NormLine(t))
			}
			continue
		}
		if inTAPStack {
			if m := tapStack.FindStringSubmatch(l); m != nil {
				if f := jsFrame(m[1], m[2]); f != "" {
					s.Frames = append(s.Frames, f)
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
			s.Errors = append(s.Errors, e+": "+lang.NormLine(m[3]))
			continue
		}
		if m := jsFrameRE.FindStringSubmatch(l); m != nil {
			if f := jsFrame(m[1], m[2]); f != "" {
				s.Frames = append(s.Frames, f)
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

package golang

import (
	"bytes"
	"fmt"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

var goModDirectiveRe = regexp.MustCompile(`^(module|go|toolchain|require|replace|exclude|retract|godebug|tool|ignore)\b\s*(.*)$`)

// SetupChanges: go.mod's go and toolchain lines (a toolchain download
// where GOTOOLCHAIN allows it), replace directives (code from another
// module or a local path), required versions that change, and go.work.
// Go runs no code of a module on download; what the setup step fetches
// is what these lines name.
func (Language) SetupChanges(before, after *sandbox.Snapshot, changed []string) []lang.SetupChange {
	var out []lang.SetupChange
	for _, p := range changed {
		old, hadOld := lang.FileBytes(before, p)
		cur, ok := lang.FileBytes(after, p)
		if !ok || hadOld && bytes.Equal(old, cur) {
			continue
		}
		switch path.Base(p) {
		case "go.mod":
			out = append(out, goModChanges(p, parseGoMod(old), parseGoMod(cur))...)
		case "go.work":
			out = append(out, lang.SetupChange{File: p, What: "changes the Go workspace (which modules and replacements the setup step uses)"})
		}
	}
	return out
}

// goMod is what setup depends on in a go.mod: directive lines by kind.
type goMod struct {
	goLine, toolchain string
	require           map[string]string // module -> version
	replace           map[string]string // old (module[ version]) -> new
}

// parseGoMod reads go.mod's directives, in blocks or not; comments are
// dropped.
func parseGoMod(data []byte) goMod {
	m := goMod{require: map[string]string{}, replace: map[string]string{}}
	block := ""
	for _, line := range strings.Split(string(data), "\n") {
		if i := strings.Index(line, "//"); i >= 0 {
			line = line[:i]
		}
		line = strings.TrimSpace(line)
		if line == "" {
			continue
		}
		if block != "" {
			if line == ")" {
				block = ""
				continue
			}
			m.add(block, line)
			continue
		}
		d := goModDirectiveRe.FindStringSubmatch(line)
		if d == nil {
			m.add("?", line) // not a directive go knows: keep it visible
			continue
		}
		if strings.TrimSpace(d[2]) == "(" {
			block = d[1]
			continue
		}
		m.add(d[1], d[2])
	}
	return m
}

func (m *goMod) add(kind, rest string) {
	f := strings.Fields(rest)
	switch kind {
	case "go":
		m.goLine = rest
	case "toolchain":
		m.toolchain = rest
	case "require":
		if len(f) >= 2 {
			m.require[unquote(f[0])] = f[1]
		}
	case "replace":
		if l, r, ok := strings.Cut(rest, "=>"); ok {
			m.replace[strings.Join(strings.Fields(l), " ")] = strings.Join(strings.Fields(r), " ")
		}
	case "?":
		m.replace["(unknown line) "+rest] = rest
	}
}

func unquote(s string) string { return strings.Trim(s, "\"`") }

func goModChanges(p string, o, n goMod) []lang.SetupChange {
	var out []lang.SetupChange
	add := func(format string, a ...any) {
		out = append(out, lang.SetupChange{File: p, What: fmt.Sprintf(format, a...)})
	}
	if n.goLine != o.goLine {
		add("changes the go line from %s to %s (the Go toolchain the setup step needs)", lang.QuoteSetup(o.goLine), lang.QuoteSetup(n.goLine))
	}
	if n.toolchain != o.toolchain && n.toolchain != "" {
		add("sets the toolchain line %s (a toolchain download)", lang.QuoteSetup(n.toolchain))
	}
	for _, k := range sortedStrings(n.replace) {
		if o.replace[k] != n.replace[k] {
			add("replaces %s with %s (the setup step fetches that instead)", lang.QuoteSetup(k), lang.QuoteSetup(n.replace[k]))
		}
	}
	for _, k := range sortedStrings(n.require) {
		if v, had := o.require[k]; had && v != n.require[k] {
			add("changes the required version of %s from %s to %s", lang.QuoteSetup(k), lang.QuoteSetup(v), lang.QuoteSetup(n.require[k]))
		}
	}
	return out
}

func sortedStrings(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Package judge is how the real-bug bench decides that a prompt shows
// code: the text of a file's "## File:" sections (whole files and
// excerpts) and runs of its non-blank lines. The context builder's tests
// judge their prompts with it too, so that they count what the bench
// counts.
package judge

import (
	"slices"
	"strings"
)

// Shown reports whether code's non-blank lines appear together, in
// order, in the "## File: path" sections of prompt.
func Shown(prompt, path, code string) bool {
	return ContainsRun(CodeLines(Sections(prompt, path)), CodeLines(code))
}

// Sections returns the text of every "## File: path" section of the
// prompt (whole files and excerpts), joined.
func Sections(prompt, path string) string {
	var b strings.Builder
	for _, head := range []string{"## File: " + path + "\n", "## File: " + path + " ("} {
		rest := prompt
		for {
			i := strings.Index(rest, head)
			if i < 0 {
				break
			}
			rest = rest[i+len(head):]
			if j := strings.Index(rest, "```\n"); j >= 0 {
				rest = rest[j+4:] // past the header line's end and the opening fence
			}
			end := strings.Index(rest, "\n```\n")
			if end < 0 {
				end = len(rest)
			}
			b.WriteString(rest[:end] + "\n")
		}
	}
	return b.String()
}

// CodeLines are text's non-blank lines, trimmed.
func CodeLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if t := strings.TrimSpace(l); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// ContainsRun reports whether want occurs in have as consecutive lines
// (an empty want does).
func ContainsRun(have, want []string) bool {
	if len(want) == 0 {
		return true
	}
	for i := 0; i+len(want) <= len(have); i++ {
		if slices.Equal(have[i:i+len(want)], want) {
			return true
		}
	}
	return false
}

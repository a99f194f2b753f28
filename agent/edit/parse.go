// Package edit is fixpoint's edit contract: models reply with
// SEARCH/REPLACE blocks, which [Parse] reads into [Block] values and [Apply]
// applies to a snapshot, all or nothing.
//
// A block names its file on the line before it, relative to the workspace
// root, optionally inside a code fence (with or without a language tag);
// the path may be wrapped in backticks or bold:
//
//	path/to/file.go
//	<<<<<<< SEARCH
//	exact existing lines
//	=======
//	replacement lines
//	>>>>>>> REPLACE
//
// Several blocks may follow one path line: a block whose SEARCH marker is
// separated from the previous block's REPLACE marker only by blank lines or
// fences edits the same file.
//
// Apply matches the SEARCH text exactly first, then tolerating differences
// in whitespace and indentation (re-indenting the replacement to match the
// file). A SEARCH text matching several places, or none, is an
// [*ApplyError] naming the block and quoting the closest lines of the file;
// [FormatFeedback] turns it into a message for the model. An empty SEARCH
// creates a missing file or fills an empty one.
//
// [Diff] renders a unified diff and [LineEdits] minimal line hunks (for LSP
// TextEdits).
package edit

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// Block is one SEARCH/REPLACE block. Search and Replace hold whole lines,
// each ending in "\n" (both "" when empty).
type Block struct {
	Path    string
	Search  string
	Replace string
	// Index is the block's 1-based position in the reply, as error
	// messages name it ("block 2").
	Index int
}

// ParseError is a malformed reply.
type ParseError struct {
	Block int // 1-based block number, 0 when outside a block
	Line  int // 1-based line of the reply
	Msg   string
}

func (e *ParseError) Error() string {
	if e.Block > 0 {
		return fmt.Sprintf("block %d (reply line %d): %s", e.Block, e.Line, e.Msg)
	}
	return fmt.Sprintf("reply line %d: %s", e.Line, e.Msg)
}

var (
	searchRE  = regexp.MustCompile(`^\s*<{5,9} ?SEARCH\s*$`)
	dividerRE = regexp.MustCompile(`^\s*={5,9}\s*$`)
	replaceRE = regexp.MustCompile(`^\s*>{5,9} ?REPLACE\s*$`)
	fenceRE   = regexp.MustCompile("^\\s*(```|~~~)[\\w+#.-]*\\s*$")
	// labelRE ("File:" labels) and bulletRE (headings, bullets, numbers)
	// match the decoration cleanPath strips from around a path.
	labelRE  = regexp.MustCompile(`(?i)^(file(name)?|path)\s*:\s*`)
	bulletRE = regexp.MustCompile(`^(#+|[-*+]|\d+[.)])\s+`)
)

// Parse reads the SEARCH/REPLACE blocks of a model reply. A reply without
// blocks gives an empty slice. Malformed markers give a *ParseError naming
// the block and the line.
func Parse(reply string) ([]Block, error) {
	lines := strings.Split(reply, "\n")
	for i, l := range lines {
		// CRLF tolerant: no parsed line ends in "\r" (a line ending in
		// "\r\r\n" is as ambiguous as it looks).
		lines[i] = strings.TrimRight(l, "\r")
	}
	var (
		blocks   []Block
		lastPath string
		lastEnd  = -1 // line index of the previous REPLACE marker
	)
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		switch {
		case replaceRE.MatchString(line):
			return nil, &ParseError{Line: i + 1, Msg: "\">>>>>>> REPLACE\" without a \"<<<<<<< SEARCH\" before it"}
		case !searchRE.MatchString(line):
			continue
		}
		n := len(blocks) + 1
		path := pathBefore(lines, i)
		if path == "" && lastEnd >= 0 && onlyGlue(lines[lastEnd+1:i]) {
			path = lastPath
		}
		if path == "" {
			return nil, &ParseError{Block: n, Line: i + 1, Msg: "no file path: put the path, relative to the workspace root, on the line before \"<<<<<<< SEARCH\""}
		}
		b := Block{Path: path, Index: n}
		start := i
		var search, replace []string
		// SEARCH part.
		for i++; ; i++ {
			if i >= len(lines) {
				return nil, &ParseError{Block: n, Line: start + 1, Msg: "unterminated: no \"=======\" after \"<<<<<<< SEARCH\""}
			}
			if dividerRE.MatchString(lines[i]) {
				break
			}
			if searchRE.MatchString(lines[i]) || replaceRE.MatchString(lines[i]) {
				return nil, &ParseError{Block: n, Line: i + 1, Msg: fmt.Sprintf("%q before \"=======\": each block needs SEARCH, =======, REPLACE in that order", strings.TrimSpace(lines[i]))}
			}
			search = append(search, lines[i])
		}
		div := i
		// REPLACE part.
		for i++; ; i++ {
			if i >= len(lines) {
				return nil, &ParseError{Block: n, Line: div + 1, Msg: "unterminated: no \">>>>>>> REPLACE\" after \"=======\""}
			}
			if replaceRE.MatchString(lines[i]) {
				break
			}
			if searchRE.MatchString(lines[i]) || dividerRE.MatchString(lines[i]) {
				return nil, &ParseError{Block: n, Line: i + 1, Msg: fmt.Sprintf("%q before \">>>>>>> REPLACE\": each block needs SEARCH, =======, REPLACE in that order", strings.TrimSpace(lines[i]))}
			}
			replace = append(replace, lines[i])
		}
		b.Search, b.Replace = joinLines(search), joinLines(replace)
		blocks = append(blocks, b)
		lastPath, lastEnd = path, i
	}
	return blocks, nil
}

func joinLines(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}

// onlyGlue reports whether lines hold nothing but blank lines and fences.
func onlyGlue(lines []string) bool {
	for _, l := range lines {
		if strings.TrimSpace(l) != "" && !fenceRE.MatchString(l) {
			return false
		}
	}
	return true
}

// pathBefore finds the path line before the SEARCH marker at index i: the
// previous non-blank line, looking past one opening fence (the path may sit
// just inside the fence or just before it).
func pathBefore(lines []string, i int) string {
	j := prevNonBlank(lines, i)
	if j < 0 {
		return ""
	}
	if p := fenceInfoPath(lines[j]); p != "" {
		return p
	}
	if fenceRE.MatchString(lines[j]) {
		j = prevNonBlank(lines, j)
		if j < 0 {
			return ""
		}
	}
	return cleanPath(lines[j])
}

// fenceInfoPath returns the path in a fence's info string: "```go:a/b.go",
// "```python a/b.py", "```a/b.go".
func fenceInfoPath(line string) string {
	t := strings.TrimSpace(line)
	if !strings.HasPrefix(t, "```") && !strings.HasPrefix(t, "~~~") {
		return ""
	}
	fields := strings.FieldsFunc(t[3:], func(r rune) bool { return r == ' ' || r == ':' || r == '\t' })
	if len(fields) == 0 {
		return ""
	}
	last := fields[len(fields)-1]
	if !strings.ContainsAny(last, "./") {
		return "" // a language tag
	}
	return cleanPath(last)
}

func prevNonBlank(lines []string, i int) int {
	for j := i - 1; j >= 0; j-- {
		if strings.TrimSpace(lines[j]) != "" {
			return j
		}
	}
	return -1
}

// cleanPath strips decoration from a path line and returns "" when what is
// left does not look like a path.
func cleanPath(line string) string {
	s := strings.TrimSpace(line)
	s = bulletRE.ReplaceAllString(s, "")
	s = labelRE.ReplaceAllString(s, "")
	for {
		t := strings.TrimSuffix(strings.TrimSpace(s), ":")
		for _, w := range []string{"**", "__", "`", "*", "'", "\""} {
			if len(t) >= 2*len(w) && strings.HasPrefix(t, w) && strings.HasSuffix(t, w) {
				t = t[len(w) : len(t)-len(w)]
			}
		}
		t = labelRE.ReplaceAllString(strings.TrimSpace(t), "")
		if t == s {
			break
		}
		s = t
	}
	s = strings.TrimPrefix(s, "./")
	if s == "" || strings.ContainsAny(s, " \t`<>|") || fenceRE.MatchString(s) || dividerRE.MatchString(s) || replaceRE.MatchString(s) || searchRE.MatchString(s) {
		return ""
	}
	if !strings.ContainsFunc(s, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
		return "" // ".", "/", "--"
	}
	if !strings.ContainsAny(s, "./") && !isBareName(s) {
		return "" // "Fix:" or "Changes" is prose, not a path
	}
	return s
}

// isBareName reports file names without a dot that are accepted as paths.
func isBareName(s string) bool {
	switch s {
	case "Makefile", "makefile", "GNUmakefile", "Dockerfile", "Containerfile", "Gemfile", "Rakefile",
		"Procfile", "Jenkinsfile", "Justfile", "LICENSE", "README", "CODEOWNERS", "Vagrantfile", "BUILD", "WORKSPACE":
		return true
	}
	return false
}

// Format writes one SEARCH/REPLACE block on path, the inverse of Parse for
// a single block; a missing final newline is added to search and replace.
func Format(path, search, replace string) string {
	nl := func(s string) string {
		if s != "" && s[len(s)-1] != '\n' {
			return s + "\n"
		}
		return s
	}
	return path + "\n<<<<<<< SEARCH\n" + nl(search) + "=======\n" + nl(replace) + ">>>>>>> REPLACE\n"
}

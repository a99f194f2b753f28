package node

import (
	"regexp"
	"strings"
)

// sandboxPlatform is process.platform in every sandbox.
const sandboxPlatform = "linux"

var (
	jsPlatCmp   = regexp.MustCompile(`^(?:process\.platform|os\.platform\(\))\s*(===|==|!==|!=)\s*['"]([\w-]*)['"]$`)
	jsIfOpen    = regexp.MustCompile(`^\s*(?:\}\s*else\s+)?if\s*\((.+)\)\s*\{\s*(?://.*)?$`)
	jsElseOpen  = regexp.MustCompile(`^\s*\}\s*else\s*\{\s*(?://.*)?$`)
	jsElseIf    = regexp.MustCompile(`^\s*\}\s*else\s+if\s*\(`)
	jsPlatAlias = regexp.MustCompile(`^\s*(?:export\s+)?(?:const|let|var)\s+([A-Za-z_$][\w$]*)\s*=\s*(.+?);?\s*(?://.*)?$`)
)

// platformValue is what a JavaScript condition is on the sandbox's
// platform; ok is false when it is not a platform test this knows.
func platformValue(e string, aliases map[string]bool) (val, ok bool) {
	e = strings.TrimSpace(e)
	for strings.HasPrefix(e, "(") && strings.HasSuffix(e, ")") {
		e = strings.TrimSpace(e[1 : len(e)-1])
	}
	if rest, found := strings.CutPrefix(e, "!"); found && !strings.HasPrefix(rest, "=") {
		v, ok := platformValue(rest, aliases)
		return !v, ok
	}
	if v, found := aliases[e]; found {
		return v, true
	}
	if m := jsPlatCmp.FindStringSubmatch(e); m != nil {
		eq := m[2] == sandboxPlatform
		return eq == (m[1] == "===" || m[1] == "=="), true
	}
	return false, false
}

// OtherPlatformLines returns the branches of a JavaScript or TypeScript
// file's platform tests (if (process.platform === 'win32') { … } else
// { … }, and names bound to such a test) that linux does not take.
func (Language) OtherPlatformLines(p string, data []byte) [][2]int {
	if !isSource(p) {
		return nil
	}
	ls := strings.Split(string(data), "\n")
	aliases := map[string]bool{}
	for _, l := range ls {
		if m := jsPlatAlias.FindStringSubmatch(l); m != nil {
			if v, ok := platformValue(m[2], aliases); ok {
				aliases[m[1]] = v
			}
		}
	}
	// closeOf is the line (0-based) whose braces close the block opened
	// on line i: braces counted naively (strings and comments aside).
	closeOf := func(i int) int {
		depth := 0
		for j := i; j < len(ls); j++ {
			l := ls[j]
			if j == i {
				// Count from the opening brace of this clause only (a
				// "} else {" line first closes the clause before).
				if k := strings.LastIndexByte(l, '{'); k >= 0 {
					l = l[k:]
				}
			}
			for _, r := range l {
				switch r {
				case '{':
					depth++
				case '}':
					depth--
					if depth == 0 {
						return j
					}
				}
			}
		}
		return len(ls) - 1
	}
	var out [][2]int
	for i := 0; i < len(ls); i++ {
		m := jsIfOpen.FindStringSubmatch(ls[i])
		if m == nil || jsElseIf.MatchString(ls[i]) {
			continue
		}
		type clause struct {
			from, to  int
			val, know bool
		}
		var chain []clause
		j := i
		for {
			end := closeOf(j)
			c := clause{from: j, to: end, know: true, val: true}
			if cm := jsIfOpen.FindStringSubmatch(ls[j]); cm != nil {
				c.val, c.know = platformValue(cm[1], aliases)
			}
			chain = append(chain, c)
			if end >= len(ls) || end == j {
				break
			}
			if jsElseIf.MatchString(ls[end]) || jsElseOpen.MatchString(ls[end]) {
				j = end
				if c.from == end {
					break
				}
				continue
			}
			break
		}
		taken := -1
		for ci, c := range chain {
			if !c.know {
				taken = -2
				break
			}
			if c.val {
				taken = ci
				break
			}
		}
		if taken == -2 {
			continue
		}
		for ci, c := range chain {
			if ci != taken {
				// The clause's lines after its opening line, up to the
				// line that closes it (shared with the next clause).
				out = append(out, [2]int{c.from + 1, c.to + 1})
			}
		}
	}
	return out
}

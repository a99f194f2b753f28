package python

import (
	"path"
	"strings"
)

// HeaderLines is the number of lines a Python module's header takes: the
// comments and shebang at its top, its docstring, and its imports (a
// parenthesised import list, imports inside a module-level try/except
// ImportError), up to the last of them. 0 for other files.
func (Language) HeaderLines(p string, data []byte) int {
	if path.Ext(p) != ".py" && path.Ext(p) != ".pyi" {
		return 0
	}
	ls := strings.Split(string(data), "\n")
	last := 0
	for i := 0; i < len(ls); i++ {
		t := strings.TrimSpace(ls[i])
		indented := len(ls[i]) > 0 && (ls[i][0] == ' ' || ls[i][0] == '\t')
		switch {
		case t == "":
			continue
		case strings.HasPrefix(t, "#"):
		case !indented && docstringStart(t) != "":
			q := docstringStart(t)
			rest := t[strings.Index(t, q)+3:]
			for !strings.Contains(rest, q) && i+1 < len(ls) {
				i++
				rest = ls[i]
			}
		case strings.HasPrefix(t, "import ") || strings.HasPrefix(t, "from ") && strings.Contains(t, " import"):
			// A parenthesised list or a backslash continuation.
			if strings.Contains(t, "(") && !strings.Contains(t, ")") {
				for i+1 < len(ls) && !strings.Contains(ls[i], ")") {
					i++
				}
			}
			for strings.HasSuffix(strings.TrimSpace(ls[i]), "\\") && i+1 < len(ls) {
				i++
			}
		case !indented && (t == "try:" || strings.HasPrefix(t, "except") && strings.HasSuffix(t, ":") || t == "else:"):
			// Optional imports: try: import x / except ImportError: x = None.
			if !importBlock(ls, i) {
				return last
			}
			for i+1 < len(ls) && (strings.TrimSpace(ls[i+1]) == "" || ls[i+1][0] == ' ' || ls[i+1][0] == '\t') {
				i++
			}
			for i > 0 && strings.TrimSpace(ls[i]) == "" {
				i--
			}
		default:
			return last
		}
		last = i + 1
	}
	return last
}

// docstringStart returns the triple quotes that open a docstring on
// line t (after a string prefix such as r), or "".
func docstringStart(t string) string {
	t = strings.TrimLeft(t, "rRuUbB")
	for _, q := range []string{`"""`, `'''`} {
		if strings.HasPrefix(t, q) {
			return q
		}
	}
	return ""
}

// importBlock reports whether the block opened or continued at line i
// (try:, except …:, else:) holds only imports, pass and simple
// assignments (the fallback of an optional import).
func importBlock(ls []string, i int) bool {
	for j := i + 1; j < len(ls); j++ {
		l := ls[j]
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		if l[0] != ' ' && l[0] != '\t' {
			return true
		}
		if !(strings.HasPrefix(t, "import ") || strings.HasPrefix(t, "from ") || t == "pass" || pyAssign.MatchString(t)) {
			return false
		}
	}
	return true
}

// TestSetupNames are the setup methods and functions unittest and pytest
// run before a test.
func (Language) TestSetupNames() []string {
	return []string{"setUp", "asyncSetUp", "setUpClass", "setUpModule", "setup_method", "setup_class", "setup_module", "setup_function"}
}

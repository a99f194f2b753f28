package python

import (
	"path"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
)

var _ lang.Footers = Language{}

// footerMax bounds a footer ([lang.Footers]): a long main block is a
// program's command line, not module state.
const footerMax = 15

// FooterLines is the number of lines of a Python module's main guard
// when it ends the module: the last top-level `if __name__ == '__main__':`
// (or "__main__" == __name__) with its body and its elif/else branches
// (module state set when the module is imported rather than run, round 9:
// `else: _check_arch()` where the fix sets a global every function
// reads), through the end of the file, when that is at most footerMax
// lines; 0 otherwise.
func (Language) FooterLines(p string, data []byte) int {
	if path.Ext(p) != ".py" {
		return 0
	}
	ls := strings.Split(strings.TrimRight(string(data), "\n\r\t "), "\n")
	for i := len(ls) - 1; i >= 0 && len(ls)-i <= footerMax; i-- {
		l := ls[i]
		t := strings.TrimSpace(l)
		if t == "" || l[0] == ' ' || l[0] == '\t' || strings.HasPrefix(t, "#") {
			continue
		}
		if strings.HasPrefix(t, "else") || strings.HasPrefix(t, "elif ") {
			continue // a branch of the guard above
		}
		if mainGuard(t) {
			return len(ls) - i
		}
		return 0
	}
	return 0
}

// mainGuard reports whether the top-level line t tests __name__ against
// "__main__".
func mainGuard(t string) bool {
	if !strings.HasPrefix(t, "if ") || !strings.HasSuffix(t, ":") {
		return false
	}
	c := strings.NewReplacer(" ", "", "(", "", ")", "", "'", `"`).Replace(t[3 : len(t)-1])
	return c == `__name__=="__main__"` || c == `"__main__"==__name__`
}

package golang

import (
	"fmt"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// importsC reports whether Go source imports the pseudo-package "C",
// which turns cgo on for the file: `import "C"`, or "C" in an import
// group. Comments after the import are allowed; a "C" in a string or a
// comment elsewhere is not an import.
func importsC(src string) bool {
	inGroup := false
	for _, l := range strings.Split(src, "\n") {
		l = strings.TrimSpace(l)
		if i := strings.Index(l, "//"); i >= 0 {
			l = strings.TrimSpace(l[:i])
		}
		switch {
		case inGroup && l == ")":
			inGroup = false
		case inGroup && (l == `"C"` || l == `_ "C"`):
			return true
		case l == `import "C"` || l == `import ("C")` || l == `import ( "C" )`:
			return true
		case strings.HasPrefix(l, "import (") || l == "import(":
			inGroup = true
		case strings.HasPrefix(l, "func ") || strings.HasPrefix(l, "type ") || strings.HasPrefix(l, "var "):
			return false // imports come first
		}
	}
	return false
}

// CgoFile returns the first non-test .go file of the workspace that
// imports "C" (outside vendor/ and testdata/), "" when none does. Such a
// module needs a C compiler and CGO_ENABLED=1 to build.
func CgoFile(snap *sandbox.Snapshot) string {
	for _, p := range snap.Paths() {
		if !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") || underDir(p, "vendor") || underDir(p, "testdata") {
			continue
		}
		text, ok := snap.Text(p)
		if ok && strings.Contains(text, `"C"`) && importsC(text) {
			return p
		}
	}
	return ""
}

func underDir(p, dir string) bool {
	return strings.HasPrefix(p, dir+"/") || strings.Contains(p, "/"+dir+"/")
}

// Notes tells doctor what the sandbox does about the project's Go code
// that a user would otherwise find out from a failing build: cgo.
func (Language) Notes(snap *sandbox.Snapshot) []string {
	if f := CgoFile(snap); f != "" {
		return []string{fmt.Sprintf("%s uses cgo (import \"C\"): tests build with CGO_ENABLED=1, with the go image's gcc (docker) or the host's C compiler (bwrap); an image of your own ([sandbox] image) needs gcc and libc6-dev", f)}
	}
	return nil
}

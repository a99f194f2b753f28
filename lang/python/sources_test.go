package python

import (
	"slices"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

func TestSymbols(t *testing.T) {
	src := `import sys
PY2 = sys.version_info[0] == 2
DEFAULT_TIMEOUT: float = 5.0
__all__ = ["x"]

if PY2:
    def text_type(s):
        return unicode(s)
else:
    def text_type(s):
        return str(s)

try:
    from fast import parse
except ImportError:
    def parse(s):
        return s

class Box:
    limit = 3
    def size(self):
        def inner():
            pass
        return 1

def top():
    local = 1
`
	got := Language{}.Symbols("m.py", []byte(src))
	want := []string{"var PY2", "var DEFAULT_TIMEOUT", "def text_type", "def parse", "class Box", "def Box.size", "def top"}
	if !slices.Equal(got, want) {
		t.Errorf("Symbols = %q, want %q", got, want)
	}
}

func TestRelativeImports(t *testing.T) {
	s := &sandbox.Snapshot{Files: map[string]sandbox.File{
		"pkg/__init__.py":        {Data: []byte("")},
		"pkg/core.py":            {Data: []byte("from .util import helper\nfrom . import fmt, compat as c\nfrom ..top import X\n")},
		"pkg/util.py":            {Data: []byte("")},
		"pkg/fmt.py":             {Data: []byte("")},
		"pkg/compat/__init__.py": {Data: []byte("")},
		"top.py":                 {Data: []byte("")},
	}}
	files, _ := Language{}.LocalImports(s, "pkg/core.py")
	for _, want := range []string{"pkg/util.py", "pkg/fmt.py", "pkg/compat/__init__.py", "top.py"} {
		if !slices.Contains(files, want) {
			t.Errorf("LocalImports(pkg/core.py) = %q, lacks %s", files, want)
		}
	}
}

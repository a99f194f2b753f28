package python

import (
	"bufio"
	"bytes"
	"path"
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

var (
	pyDecl          = regexp.MustCompile(`^(\s*)(?:async\s+)?(def|class)\s+([A-Za-z_]\w*)`)
	pyLocalImportRe = regexp.MustCompile(`(?m)^\s*(?:from\s+([\w.]+)\s+import|import\s+([\w.]+))`)
)

// Symbols lists a Python file's "def name" and "class Name" declarations,
// and methods as "def Class.name"; nil for other files.
func (Language) Symbols(p string, data []byte) []string {
	if path.Ext(p) != ".py" {
		return nil
	}
	return pySymbols(data)
}

func pySymbols(data []byte) []string {
	var out []string
	class := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		m := pyDecl.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		indent, kind, name := m[1], m[2], m[3]
		switch {
		case indent == "" && kind == "class":
			class = name
			out = append(out, "class "+name)
		case indent == "":
			class = ""
			out = append(out, "def "+name)
		case class != "" && kind == "def" && len(indent) <= 4:
			out = append(out, "def "+class+"."+name)
		}
	}
	return out
}

// LocalImports resolves the workspace files a Python file imports:
// "from pkg.mod import x" → pkg/mod.py or pkg/mod/__init__.py (also under
// src/ and next to the importer).
func (Language) LocalImports(snap *sandbox.Snapshot, p string) (files, dirs []string) {
	if path.Ext(p) != ".py" {
		return nil, nil
	}
	data, _ := snap.Text(p)
	try := resolver(snap, &files)
	for _, m := range pyLocalImportRe.FindAllStringSubmatch(data, -1) {
		mod := m[1] + m[2]
		if strings.HasPrefix(mod, ".") {
			continue
		}
		rel := strings.ReplaceAll(mod, ".", "/")
		try(rel+".py", rel+"/__init__.py", "src/"+rel+".py", "src/"+rel+"/__init__.py", path.Join(path.Dir(p), rel+".py"))
	}
	return files, nil
}

// resolver returns a function that appends the first candidate snap has
// to out.
func resolver(snap *sandbox.Snapshot, out *[]string) func(cands ...string) {
	return func(cands ...string) {
		for _, c := range cands {
			c = path.Clean(c)
			if _, ok := snap.Files[c]; ok {
				*out = append(*out, c)
				return
			}
		}
	}
}

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
	pyBlock         = regexp.MustCompile(`^(if|elif|else|try|except|finally|with|for|while)\b.*:\s*(?:#.*)?$`)
	pyAssign        = regexp.MustCompile(`^([A-Za-z_]\w*)\s*(?::[^=]+)?=[^=]`)
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
	// blocks are the openers enclosing the current line: a def inside a
	// module-level if/try/with (py2/py3 branches, optional imports) is a
	// module-level function.
	type block struct {
		indent int
		kind   string
	}
	var blocks []block
	seen := map[string]bool{}
	emit := func(s string) {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		trimmed := strings.TrimLeft(line, " \t")
		if trimmed == "" || strings.HasPrefix(trimmed, "#") {
			continue
		}
		indent := len(line) - len(trimmed)
		for len(blocks) > 0 && blocks[len(blocks)-1].indent >= indent {
			blocks = blocks[:len(blocks)-1]
		}
		moduleLevel := true
		for _, b := range blocks {
			if b.kind == "def" || b.kind == "class" {
				moduleLevel = false
			}
		}
		if m := pyDecl.FindStringSubmatch(line); m != nil {
			kind, name := m[2], m[3]
			switch {
			case moduleLevel && kind == "class":
				class = name
				emit("class " + name)
			case moduleLevel:
				class = ""
				emit("def " + name)
			case class != "" && kind == "def" && len(blocks) > 0 && blocks[len(blocks)-1].kind == "class":
				emit("def " + class + "." + name)
			}
			blocks = append(blocks, block{indent, kind})
			continue
		}
		if kw := pyBlock.FindStringSubmatch(trimmed); kw != nil {
			blocks = append(blocks, block{indent, kw[1]})
			continue
		}
		// Module-level assignments name things too: NAME = …, name: T = ….
		if m := pyAssign.FindStringSubmatch(trimmed); m != nil && moduleLevel && !strings.HasPrefix(m[1], "__") {
			emit("var " + m[1])
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
			// from .mod import x, from ..pkg.mod import y: relative to the
			// importer's package; from . import name: a sibling module.
			dots := len(mod) - len(strings.TrimLeft(mod, "."))
			base := path.Dir(p)
			for range dots - 1 {
				base = path.Dir(base)
			}
			if rest := strings.TrimLeft(mod, "."); rest != "" {
				rel := path.Join(base, strings.ReplaceAll(rest, ".", "/"))
				try(rel+".py", rel+"/__init__.py")
			} else if names := pyFromNames(data, m[0]); len(names) > 0 {
				for _, n := range names {
					try(path.Join(base, n+".py"), path.Join(base, n, "__init__.py"))
				}
			}
			continue
		}
		rel := strings.ReplaceAll(mod, ".", "/")
		try(rel+".py", rel+"/__init__.py", "src/"+rel+".py", "src/"+rel+"/__init__.py", path.Join(path.Dir(p), rel+".py"))
	}
	return files, nil
}

// pyFromNames returns the names a "from . import a, b as c" statement
// imports (the text after import on the statement's line).
func pyFromNames(data, stmt string) []string {
	i := strings.Index(data, stmt)
	if i < 0 {
		return nil
	}
	rest := data[i+len(stmt):]
	if j := strings.IndexByte(rest, '\n'); j >= 0 {
		rest = rest[:j]
	}
	rest = strings.Trim(strings.TrimSpace(rest), "()")
	var out []string
	for _, part := range strings.Split(rest, ",") {
		f := strings.Fields(part)
		if len(f) > 0 && f[0] != "*" {
			out = append(out, f[0])
		}
	}
	return out
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

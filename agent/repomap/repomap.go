// Package repomap renders a compact map of a workspace for a model prompt:
// the file tree plus the top-level symbols of each source file.
//
// [Build] renders a [sandbox.Snapshot] within a byte budget; [Symbols]
// extracts the declarations of one file (Go through go/ast, Python and
// JavaScript/TypeScript through a simple declaration scan).
package repomap

import (
	"bufio"
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// Options bound a map. Zero values are documented defaults.
type Options struct {
	// MaxBytes bounds the rendered map; default 8000.
	MaxBytes int
	// Include reports whether a path may appear at all (secret and ignored
	// files are filtered out by the caller); nil includes everything.
	Include func(path string) bool
	// Relevant paths get their symbols listed first, before budget runs out.
	Relevant []string
}

// Build renders the map: one line per file, "path: sym; sym" for files with
// symbols. Symbols are dropped from the least relevant files first when the
// budget is short, then files are elided with a final "… N more files" line.
func Build(snap *sandbox.Snapshot, opts *Options) string {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 8000
	}
	var paths []string
	for _, p := range snap.Paths() {
		if o.Include == nil || o.Include(p) {
			paths = append(paths, p)
		}
	}
	rank := map[string]int{}
	for i, p := range o.Relevant {
		if _, ok := rank[p]; !ok {
			rank[p] = i + 1
		}
	}
	// Symbol lines, granted in relevance order while they fit.
	order := append([]string(nil), paths...)
	sort.SliceStable(order, func(i, j int) bool {
		ri, rj := rank[order[i]], rank[order[j]]
		if ri == 0 {
			ri = 1 << 30
		}
		if rj == 0 {
			rj = 1 << 30
		}
		return ri < rj
	})
	base := 0
	for _, p := range paths {
		base += len(p) + 1
	}
	syms := map[string]string{}
	budget := o.MaxBytes - base
	for _, p := range order {
		data, _ := snap.Read(p)
		s := Symbols(p, data)
		if len(s) == 0 {
			continue
		}
		line := ": " + strings.Join(s, "; ")
		if len(line) > budget {
			continue
		}
		budget -= len(line)
		syms[p] = line
	}
	var b strings.Builder
	for i, p := range paths {
		line := p + syms[p] + "\n"
		if b.Len()+len(line) > o.MaxBytes {
			fmt.Fprintf(&b, "… %d more files\n", len(paths)-i)
			break
		}
		b.WriteString(line)
	}
	return b.String()
}

var (
	pyDecl = regexp.MustCompile(`^(\s*)(?:async\s+)?(def|class)\s+([A-Za-z_]\w*)`)
	jsDecl = regexp.MustCompile(`^(?:export\s+)?(?:default\s+)?(?:async\s+)?(function\*?|class|interface|type|const|let)\s+([A-Za-z_$][\w$]*)`)
)

// Symbols lists the top-level declarations of one file, in source order:
// "func Name(params) results", "type Name", "method (T) Name" for Go;
// "def name", "class Name" (and methods as "Class.name") for Python;
// "function name", "class Name", "const name" for JavaScript/TypeScript.
// Unknown file kinds and unparsable Go files give nil.
func Symbols(p string, data []byte) []string {
	switch path.Ext(p) {
	case ".go":
		return goSymbols(p, data)
	case ".py":
		return pySymbols(data)
	case ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".mts":
		return jsSymbols(data)
	}
	return nil
}

func goSymbols(p string, data []byte) []string {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, data, parser.SkipObjectResolution)
	if err != nil {
		return nil
	}
	var out []string
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			sig := string(data[fset.Position(d.Type.Params.Pos()).Offset:fset.Position(d.Type.End()).Offset])
			name := d.Name.Name
			if d.Recv != nil && len(d.Recv.List) > 0 {
				r := d.Recv.List[0].Type
				name = "(" + string(data[fset.Position(r.Pos()).Offset:fset.Position(r.End()).Offset]) + ") " + name
			}
			out = append(out, "func "+name+oneLine(sig))
		case *ast.GenDecl:
			for _, s := range d.Specs {
				switch s := s.(type) {
				case *ast.TypeSpec:
					kind := "type"
					switch s.Type.(type) {
					case *ast.StructType:
						kind = "struct"
					case *ast.InterfaceType:
						kind = "interface"
					}
					out = append(out, kind+" "+s.Name.Name)
				case *ast.ValueSpec:
					for _, n := range s.Names {
						if n.Name != "_" {
							out = append(out, d.Tok.String()+" "+n.Name)
						}
					}
				}
			}
		}
	}
	return out
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
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

func jsSymbols(data []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if m := jsDecl.FindStringSubmatch(sc.Text()); m != nil {
			kind := strings.TrimSuffix(m[1], "*")
			if kind == "let" {
				kind = "const"
			}
			out = append(out, kind+" "+m[2])
		}
	}
	return out
}

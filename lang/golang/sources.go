package golang

import (
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// Symbols lists a Go file's top-level declarations: "func Name(params)
// results", "func (T) Name(...)", "type/struct/interface Name", "var/const
// Name". Other files and unparsable Go files give nil.
func (Language) Symbols(p string, data []byte) []string {
	if path.Ext(p) != ".go" {
		return nil
	}
	return goSymbols(p, data)
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

// LocalImports resolves the imports of a Go file that name packages of
// this workspace (by the module path in go.mod) to their directories.
func (Language) LocalImports(snap *sandbox.Snapshot, p string) (files, dirs []string) {
	return nil, goLocalImportDirs(snap, p)
}

var goImportRe = regexp.MustCompile(`"([^"\s]+)"`)

// goLocalImportDirs resolves the imports of a Go file that name packages of
// this workspace (by the module path in go.mod) to their directories.
func goLocalImportDirs(snap *sandbox.Snapshot, p string) []string {
	if path.Ext(p) != ".go" {
		return nil
	}
	mod := ""
	gomod, _ := snap.Text("go.mod")
	for _, line := range strings.Split(gomod, "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			mod = f[1]
		}
	}
	if mod == "" {
		return nil
	}
	data, _ := snap.Text(p)
	// Only the import block(s): everything before the first declaration.
	if i := strings.Index(data, "\nfunc "); i >= 0 {
		data = data[:i]
	}
	var out []string
	for _, m := range goImportRe.FindAllStringSubmatch(data, -1) {
		if m[1] == mod {
			out = append(out, ".")
		} else if rest, ok := strings.CutPrefix(m[1], mod+"/"); ok {
			out = append(out, rest)
		}
	}
	return out
}

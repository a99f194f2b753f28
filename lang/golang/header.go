package golang

import (
	"go/parser"
	"go/token"
	"path"
)

// HeaderLines is the number of lines from a Go file's start to the end
// of its import declarations (its package clause when it imports
// nothing): the license comment, build constraints, package clause and
// imports. 0 for other files and for files whose header does not parse.
func (Language) HeaderLines(p string, data []byte) int {
	if path.Ext(p) != ".go" {
		return 0
	}
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, p, data, parser.ImportsOnly|parser.SkipObjectResolution)
	if err != nil || f.Name == nil {
		return 0
	}
	end := f.Name.End()
	for _, d := range f.Decls {
		end = max(end, d.End())
	}
	return fset.Position(end).Line
}

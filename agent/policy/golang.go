package policy

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strconv"
)

// checkGo parses src with go/ast. A file that does not parse gives no
// findings: the compiler will report it, and a policy check must not turn
// a syntax error into a block.
func checkGo(rel string, src []byte) ([]Finding, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, nil
	}
	var out []Finding
	osName := ""
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		line := fset.Position(imp.Pos()).Line
		add := func(rule, msg string) { out = append(out, Finding{Rule: rule, Line: line, Message: msg}) }
		switch p {
		case "os/exec":
			add("go.os-exec", "importing os/exec")
		case "syscall", "golang.org/x/sys/unix":
			add("go.syscall", "importing "+p)
		case "unsafe":
			add("go.unsafe", "importing unsafe")
		case "net":
			add("go.net", "importing net")
		case "plugin":
			add("go.plugin", "importing plugin")
		case "testing":
			add("go.testing-import", "importing testing in a non-test file")
		case "os":
			osName = "os"
			if imp.Name != nil {
				osName = imp.Name.Name
			}
		}
	}
	if osName == "" {
		return out, nil
	}
	out = append(out, initExits(fset, f, osName)...)
	ast.Inspect(f, func(n ast.Node) bool {
		call, ok := n.(*ast.CallExpr)
		if !ok || len(call.Args) != 1 {
			return true
		}
		sel, ok := call.Fun.(*ast.SelectorExpr)
		if !ok || sel.Sel.Name != "RemoveAll" {
			return true
		}
		if id, ok := sel.X.(*ast.Ident); !ok || id.Name != osName {
			return true
		}
		if lit, ok := call.Args[0].(*ast.BasicLit); ok && lit.Kind == token.STRING {
			if s, err := strconv.Unquote(lit.Value); err == nil && outside(s) {
				out = append(out, Finding{Rule: "go.remove-all", Line: fset.Position(call.Pos()).Line,
					Message: "os.RemoveAll(" + strconv.Quote(s) + ") outside the workspace"})
			}
		}
		return true
	})
	return out, nil
}

// initExits finds os.Exit in func init: a package that exits while it is
// initialised ends its test binary before any test runs, with the exit
// code it chooses.
func initExits(fset *token.FileSet, f *ast.File, osName string) []Finding {
	var out []Finding
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || fn.Name.Name != "init" || fn.Body == nil {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Exit" {
				if id, ok := sel.X.(*ast.Ident); ok && id.Name == osName {
					out = append(out, Finding{Rule: "go.init-exit", Line: fset.Position(call.Pos()).Line, Message: "os.Exit in func init"})
				}
			}
			return true
		})
	}
	return out
}

package golang

import (
	"context"
	"go/ast"
	"go/parser"
	"go/token"
	"path"
	"strconv"

	"github.com/fixpoint-dev/fixpoint/lang"
)

// PolicyRules: processes, raw system calls, unsafe, sockets, plugins,
// deleting outside the workspace, and what ends a test binary early.
func (Language) PolicyRules() []lang.PolicyRule {
	rules := []lang.PolicyRule{
		{Name: "go.os-exec", Description: "imports os/exec (starts processes)", Block: true},
		{Name: "go.syscall", Description: "imports syscall or golang.org/x/sys/unix", Block: true},
		{Name: "go.unsafe", Description: "imports unsafe"},
		{Name: "go.net", Description: "imports net (raw sockets)"},
		{Name: "go.plugin", Description: "imports plugin (loads code at run time)", Block: true},
		{Name: "go.remove-all", Description: "os.RemoveAll on an absolute path or one with ..", Block: true},
		{Name: "go.testing-import", Description: "imports testing in a non-test file", NonTestOnly: true},
		// The helper-process pattern of Go tests; a test binary that exits
		// early loses its tests, which the verdict catches.
		{Name: "go.init-exit", Description: "os.Exit in func init or a package-level variable's initialiser (ends the test binary before any test runs, with the exit code it chooses)", Block: true, NonTestOnly: true},
		{Name: "go.exit", Description: "os.Exit (called or taken as a value) in a package other than main: library code that ends the test binary chooses its exit code", Block: true, NonTestOnly: true, PerUse: true},
	}
	return append(rules, lang.ForgeRules("go")...)
}

// CheckPolicy checks a .go file with go/ast; other files give nil.
func (Language) CheckPolicy(_ context.Context, rel string, src []byte, _ lang.PolicyOptions) ([]lang.PolicyFinding, error) {
	if path.Ext(rel) != ".go" {
		return nil, nil
	}
	out, err := checkGo(rel, src)
	return append(out, lang.ForgeFindings("go", src)...), err
}

// checkGo parses src with go/ast. A file that does not parse gives no
// findings: the compiler will report it, and a policy check must not turn
// a syntax error into a block.
func checkGo(rel string, src []byte) ([]lang.PolicyFinding, error) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, rel, src, parser.SkipObjectResolution)
	if err != nil {
		return nil, nil
	}
	var out []lang.PolicyFinding
	osName := ""
	for _, imp := range f.Imports {
		p, _ := strconv.Unquote(imp.Path.Value)
		line := fset.Position(imp.Pos()).Line
		add := func(rule, msg string) { out = append(out, lang.PolicyFinding{Rule: rule, Line: line, Message: msg}) }
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
	if f.Name.Name != "main" {
		out = append(out, exits(fset, f, osName)...)
	}
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
			if s, err := strconv.Unquote(lit.Value); err == nil && lang.OutsideWorkspace(s) {
				out = append(out, lang.PolicyFinding{Rule: "go.remove-all", Line: fset.Position(call.Pos()).Line,
					Message: "os.RemoveAll(" + strconv.Quote(s) + ") outside the workspace"})
			}
		}
		return true
	})
	return out, nil
}

// initExits finds os.Exit in func init and in package-level variable
// initialisers (var _ = func() int { os.Exit(0); return 0 }()): a package
// that exits while it is initialised ends its test binary before any test
// runs, with the exit code it chooses. A reference to os.Exit counts as
// well as a call (f := os.Exit; f(0)).
func initExits(fset *token.FileSet, f *ast.File, osName string) []lang.PolicyFinding {
	var out []lang.PolicyFinding
	find := func(n ast.Node, where string) {
		ast.Inspect(n, func(n ast.Node) bool {
			if isOsExit(n, osName) {
				out = append(out, lang.PolicyFinding{Rule: "go.init-exit", Line: fset.Position(n.Pos()).Line, Message: "os.Exit in " + where})
			}
			return true
		})
	}
	for _, d := range f.Decls {
		switch d := d.(type) {
		case *ast.FuncDecl:
			if d.Recv == nil && d.Name.Name == "init" && d.Body != nil {
				find(d.Body, "func init")
			}
		case *ast.GenDecl:
			if d.Tok != token.VAR {
				continue
			}
			for _, sp := range d.Specs {
				for _, v := range sp.(*ast.ValueSpec).Values {
					find(v, "a package-level variable's initialiser")
				}
			}
		}
	}
	return out
}

// exits finds every os.Exit of a non-main package outside what initExits
// reports.
func exits(fset *token.FileSet, f *ast.File, osName string) []lang.PolicyFinding {
	var out []lang.PolicyFinding
	for _, d := range f.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Body == nil || (fn.Recv == nil && fn.Name.Name == "init") {
			continue
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if isOsExit(n, osName) {
				out = append(out, lang.PolicyFinding{Rule: "go.exit", Line: fset.Position(n.Pos()).Line, Message: "os.Exit in package " + f.Name.Name + " (not main)"})
			}
			return true
		})
	}
	return out
}

func isOsExit(n ast.Node, osName string) bool {
	sel, ok := n.(*ast.SelectorExpr)
	if !ok || sel.Sel.Name != "Exit" {
		return false
	}
	id, ok := sel.X.(*ast.Ident)
	return ok && id.Name == osName
}

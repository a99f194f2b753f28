package testrun_test

import (
	"fmt"

	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

func ExampleParse() {
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{
		"go.mod":          {Data: []byte("module example.com/calc\n")},
		"sub/add_test.go": {Data: []byte("package sub")},
	}}
	r := registry.TestCommand(snap, "")
	out := `{"Action":"run","Package":"example.com/calc/sub","Test":"TestAdd"}
{"Action":"output","Package":"example.com/calc/sub","Test":"TestAdd","Output":"    add_test.go:9: Add(1, 2) = -1, want 3\n"}
{"Action":"fail","Package":"example.com/calc/sub","Test":"TestAdd","Elapsed":0.01}
{"Action":"fail","Package":"example.com/calc/sub","Elapsed":0.2}
`
	rep := testrun.Parse(r, &sandbox.Result{ExitCode: 1, Stdout: []byte(out)}, nil)
	fmt.Println(r.Args, rep.OK())
	for _, f := range rep.Failures() {
		fmt.Printf("%s at %s:%d: %s (expected %s, actual %s)\n", f.ID, f.File, f.Line, f.Message, f.Expected, f.Actual)
	}
	// Output:
	// [go test -json ./...] false
	// example.com/calc/sub.TestAdd at sub/add_test.go:9: Add(1, 2) = -1, want 3 (expected 3, actual -1)
}

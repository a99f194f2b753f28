package testrun

import (
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// goNoCC is `go test -json ./...` of a cgo module with no C compiler
// (go 1.26, CC=nogcc).
const goNoCC = `{"ImportPath":"runtime/cgo","Action":"build-output","Output":"# runtime/cgo\n"}
{"ImportPath":"runtime/cgo","Action":"build-output","Output":"cgo: C compiler \"nogcc\" not found: exec: \"nogcc\": executable file not found in $PATH\n"}
{"ImportPath":"runtime/cgo","Action":"build-fail"}
{"Time":"2026-11-26T23:18:21.412079561Z","Action":"start","Package":"example.com/cg/lib"}
{"Time":"2026-11-26T23:18:21.412298137Z","Action":"output","Package":"example.com/cg/lib","Output":"FAIL\texample.com/cg/lib [build failed]\n"}
{"Time":"2026-11-26T23:18:21.412310475Z","Action":"fail","Package":"example.com/cg/lib","Elapsed":0,"FailedBuild":"runtime/cgo"}
`

// TestCgoWithoutCompiler: the build failure of a cgo package without a C
// compiler says so and what to do, not only "build failed".
func TestCgoWithoutCompiler(t *testing.T) {
	rep := Parse(Runner{Name: RunnerGo, Format: GoTestJSON("example.com/cg", nil)}, &sandbox.Result{ExitCode: 1, Stdout: []byte(goNoCC)}, nil)
	f := rep.Failures()
	if len(f) != 1 || f[0].ID != "example.com/cg/lib" {
		t.Fatalf("failures %+v, want the package's build failure", f)
	}
	if !strings.Contains(f[0].Message, `uses cgo and the sandbox has no C compiler ("nogcc" not found)`) || !strings.Contains(f[0].Message, "libc6-dev") {
		t.Errorf("message %q does not name the missing C compiler and the fix", f[0].Message)
	}
}

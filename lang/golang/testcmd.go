package golang

import (
	"regexp"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

var goModuleRe = regexp.MustCompile(`(?m)^\s*module\s+("?)([^\s"]+)("?)\s*(?://.*)?$`)

// TestCommand is `go test -json ./...`, read per test in the go test
// JSON format. Module is go.mod's module path, which turns the
// package-relative file names of go test into workspace-relative ones.
func (Language) TestCommand(snap *sandbox.Snapshot) testrun.Runner {
	r := testrun.Runner{Name: testrun.RunnerGo, Args: []string{"go", "test", "-json", "./..."}}
	if gomod, ok := snap.Text("go.mod"); ok {
		if m := goModuleRe.FindSubmatch([]byte(gomod)); m != nil {
			r.Module = string(m[2])
		}
	}
	return r
}

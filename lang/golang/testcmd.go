package golang

import (
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

var goModuleRe = regexp.MustCompile(`(?m)^\s*module\s+("?)([^\s"]+)("?)\s*(?://.*)?$`)

// TestCommand is `go test -json ./...`, read per test in the go test
// JSON format (testrun.GoTestJSON). go.mod's module path turns the
// package-relative file names of go test into workspace-relative ones.
//
// A module that uses cgo (CgoFile) runs with CGO_ENABLED=1, over the go
// image's CGO_ENABLED=0: its build then needs the image's gcc, and says
// so when there is none, instead of failing on undefined C names.
func (Language) TestCommand(snap *sandbox.Snapshot) testrun.Runner {
	r := testrun.Runner{Name: testrun.RunnerGo, Args: []string{"go", "test", "-json", "./..."}, Format: testrun.GoTestJSON("", nil)}
	if CgoFile(snap) != "" {
		r.Env = append(r.Env, "CGO_ENABLED=1")
	}
	if mods, patterns := workspaceModules(snap); len(mods) > 0 {
		// A workspace: every member module, as `go test` in each would.
		r.Args = append([]string{"go", "test", "-json"}, patterns...)
		r.Format = testrun.GoTestJSON("", mods)
		return r
	}
	if gomod, ok := snap.Text("go.mod"); ok {
		if m := goModuleRe.FindSubmatch([]byte(gomod)); m != nil {
			r.Format = testrun.GoTestJSON(string(m[2]), nil)
		}
	}
	return r
}

// Untrusted adds -count=1 to a `go test` runner, so no test result is read
// from Go's test cache: a test binary run in an earlier iteration of a fix
// could have written one into GOCACHE, which the project's sessions
// share. Compiled packages stay cached (their cache keys hash the inputs
// a build reads). A custom test command given as one shell string is
// left as written.
func (Language) Untrusted(r testrun.Runner) testrun.Runner {
	if len(r.Args) < 2 || r.Args[0] != "go" || r.Args[1] != "test" {
		return r
	}
	for _, a := range r.Args[2:] {
		if a == "-count" || strings.HasPrefix(a, "-count=") || strings.HasPrefix(a, "--count") {
			return r
		}
	}
	r.Args = append([]string{"go", "test", "-count=1"}, r.Args[2:]...)
	return r
}

// TestFormats is the format a configured test command's output is
// recognised as when it is go test's JSON ([lang.ResultFormats]).
func (Language) TestFormats() []*testrun.Format {
	return []*testrun.Format{testrun.GoTestJSON("", nil)}
}

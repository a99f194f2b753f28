package golang

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

var goModuleRe = regexp.MustCompile(`(?m)^\s*module\s+("?)([^\s"]+)("?)\s*(?://.*)?$`)

// cgoDefault leaves cgo to go's own default (on where a C compiler is on
// PATH); the go image's build cache is prebuilt for it too (Image).
const cgoDefault = "CGO_ENABLED="

// TestCommand is `go test -json ./...`, read per test in the go test
// JSON format (testrun.GoTestJSON). go.mod's module path turns the
// package-relative file names of go test into workspace-relative ones.
//
// A module that uses cgo (CgoFile) runs with CGO_ENABLED=1, over the go
// image's CGO_ENABLED=0: its build then needs the image's gcc, and says
// so when there is none, instead of failing on undefined C names. Any
// other module runs with CGO_ENABLED empty, which is go's own default, as
// on a developer's machine: cgo on where a C compiler is on PATH (the go
// image has gcc; bwrap, the host's), off where none is. The tests then
// see the go a native run sees: stretchr/testify's suite tests run
// `go test -race`, which needs cgo, and failed under the image's
// CGO_ENABLED=0 where `go test ./...` passes natively.
func (Language) TestCommand(snap *sandbox.Snapshot) testrun.Runner {
	r := testrun.Runner{Name: testrun.RunnerGo, Args: goArgs(snap, "test", "-json", "./..."), Format: testrun.GoTestJSON("", nil)}
	if dirs := nestedModules(snap); len(dirs) > 1 {
		return testrun.Runner{Name: testrun.RunnerCustom, Missing: fmt.Sprintf("Go modules in %s/ and no go.mod at the root: choose one, e.g. test_cmd = \"go -C %s test ./...\"", strings.Join(dirs, "/, "), dirs[0])}
	}
	if CgoFile(snap) != "" {
		r.Env = append(r.Env, "CGO_ENABLED=1")
	} else {
		r.Env = append(r.Env, cgoDefault)
	}
	if mods, patterns := workspaceModules(snap); len(mods) > 0 {
		// A workspace: every member module, as `go test` in each would.
		r.Args = append([]string{"go", "test", "-json"}, patterns...)
		r.Format = testrun.GoTestJSON("", mods)
		return r
	}
	if d := nestedModule(snap); d != "" {
		// Packages are named by module path; their files are under d.
		if gomod, ok := snap.Text(path.Join(d, "go.mod")); ok {
			if m := goModuleRe.FindStringSubmatch(gomod); m != nil {
				r.Format = testrun.GoTestJSON("", map[string]string{m[2]: d})
			}
		}
		return r
	}
	if gomod, ok := snap.Text("go.mod"); ok {
		if m := goModuleRe.FindSubmatch([]byte(gomod)); m != nil {
			r.Format = testrun.GoTestJSON(string(m[2]), nil)
		}
	}
	return r
}

// ConfiguredRunner recognises `go test …` (and `go -C dir test …`) in a
// configured test command and runs it as the detected command is run:
// with -json added when it is not there (go test's text output is not
// read per test), the project's result paths and its cgo setting
// ([lang.ConfiguredRunners]). Other commands are not Go's.
func (l Language) ConfiguredRunner(snap *sandbox.Snapshot, args []string) (testrun.Runner, bool) {
	head := 1
	if len(args) >= 4 && args[0] == "go" && args[1] == "-C" {
		head = 3
	}
	if len(args) < head+1 || args[0] != "go" || args[head] != "test" {
		return testrun.Runner{}, false
	}
	out := append([]string(nil), args[:head+1]...)
	hasJSON := false
	for _, a := range args[head+1:] {
		if a == "-args" || a == "--args" {
			break // what follows goes to the test binary
		}
		if a == "-json" || a == "--json" || a == "-json=true" || a == "--json=true" {
			hasJSON = true
		}
	}
	if !hasJSON {
		out = append(out, "-json")
	}
	out = append(out, args[head+1:]...)
	def := l.TestCommand(snap)
	r := testrun.Runner{Name: testrun.RunnerGo, Args: out, Env: append([]string(nil), def.Env...), Format: def.Format}
	if r.Format == nil {
		r.Format = testrun.GoTestJSON("", nil)
	}
	return r, true
}

// Untrusted adds -count=1 to a `go test` runner, so no test result is read
// from Go's test cache: a test binary run in an earlier iteration of a fix
// could have written one into GOCACHE, which the project's sessions
// share. Compiled packages stay cached (their cache keys hash the inputs
// a build reads). A custom test command given as one shell string is
// left as written.
func (Language) Untrusted(r testrun.Runner) testrun.Runner {
	head := 1 // go test, or go -C dir test (a nested module)
	if len(r.Args) >= 4 && r.Args[0] == "go" && r.Args[1] == "-C" {
		head = 3
	}
	if len(r.Args) < head+1 || r.Args[0] != "go" || r.Args[head] != "test" {
		return r
	}
	for _, a := range r.Args[head+1:] {
		if a == "-count" || strings.HasPrefix(a, "-count=") || strings.HasPrefix(a, "--count") {
			return r
		}
	}
	args := append([]string(nil), r.Args[:head+1]...)
	r.Args = append(append(args, "-count=1"), r.Args[head+1:]...)
	return r
}

// TestFormats is the format a configured test command's output is
// recognised as when it is go test's JSON ([lang.ResultFormats]).
func (Language) TestFormats() []*testrun.Format {
	return []*testrun.Format{testrun.GoTestJSON("", nil)}
}

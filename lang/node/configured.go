package node

import (
	"path"
	"slices"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// ConfiguredRunner recognises jest, vitest, mocha or ava in a configured
// test command (`npx jest --json`, `mocha test/*.js`, `npx --no ava`), when
// package.json declares that runner, and runs it as a detected test
// script is run ([jsRunner]): from node_modules/.bin (`npx --no --`,
// never a download), with fixpoint's report flags, so that its results
// are read per test, its failing tests narrowed ([Language.SelectTests])
// and traced ([Language.TraceTests]) as a detected runner's are. A
// command that chooses its own reporter or report file, a watch mode, or
// a runner the package does not declare stays a custom command
// ([lang.ConfiguredRunners]). jest's `--json` is dropped: the runner adds
// it with the report file.
func (Language) ConfiguredRunner(snap *sandbox.Snapshot, args []string) (testrun.Runner, bool) {
	words := slices.Clone(args)
	if len(words) > 0 && words[0] == "npx" {
		words = words[1:]
		for len(words) > 0 && strings.HasPrefix(words[0], "-") {
			words = words[1:] // npx's own flags: --no, --no-install, --
		}
	}
	if len(words) == 0 {
		return testrun.Runner{}, false
	}
	prog := path.Base(words[0])
	if words[0] != prog && words[0] != "node_modules/.bin/"+prog && words[0] != "./node_modules/.bin/"+prog {
		return testrun.Runner{}, false // a path to some other program of that name
	}
	if !declaresRunner(snap, prog) || ownsReport(prog, words[1:]) {
		return testrun.Runner{}, false
	}
	words[0] = prog
	if prog == "jest" {
		words = slices.DeleteFunc(words, func(w string) bool { return w == "--json" })
	}
	return jsRunner(prog, words, append([]string{"npx", "--no", "--"}, words...))
}

// declaresRunner reports whether the snapshot's package.json declares
// prog, one of the runners jsRunner knows.
func declaresRunner(snap *sandbox.Snapshot, prog string) bool {
	if !slices.Contains([]string{"jest", "vitest", "mocha", "ava"}, prog) || snap == nil {
		return false
	}
	data, ok := snap.Text("package.json")
	return ok && declaredIn([]byte(data))(prog)
}

// ownsReport reports whether a runner's arguments choose its reporter or
// report file, which fixpoint's report flags would clash with.
func ownsReport(prog string, args []string) bool {
	flags := map[string][]string{
		"jest":   {"--outputFile", "--reporters", "--testResultsProcessor"},
		"vitest": {"--reporter", "--outputFile"},
		"mocha":  {"--reporter", "-R", "--reporter-option", "--reporter-options", "-O"},
	}[prog]
	for _, a := range args {
		name, _, _ := strings.Cut(a, "=")
		if slices.Contains(flags, name) {
			return true
		}
	}
	return false
}

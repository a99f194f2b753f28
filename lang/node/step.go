package node

import (
	"encoding/json"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// The runner step of a test script. A test script that composes commands
// (`npm run lint && npm run test-cov`, `standard && tape test.js`,
// `nyc mocha`, `istanbul cover _mocha -- -R spec`) is run whole for the
// baseline and the verification, and judged as npm reports it. To trace
// its failing tests, fixpoint finds the one command of the script that
// runs the tests (testStep: through `npm run X` to the scripts it names,
// past coverage wrappers), and runs that command alone (stepExec), with
// the runner's narrowing and coverage flags as a detected runner gets
// them. The command's words are package.json's, run in the same sandbox
// as `npm test` would run them: nothing new runs, nothing is installed.

// stepRunners are the programs testStep takes for a script's test
// command: the runners lang/node traces by their name, and programs whose
// tests run in node processes (traced through NODE_V8_COVERAGE).
var stepRunners = []string{"jest", "vitest", "mocha", "_mocha", "ava", "tape", "tap", "node"}

// coverageWrappers are programs that run the test command given after
// their own flags under coverage: testStep looks through them.
var coverageWrappers = []string{"nyc", "c8", "istanbul", "cross-env", "env", "npx"}

var (
	commandSepRe = regexp.MustCompile(`&&|\|\||;`)
	varNameRe    = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	testScriptRe = regexp.MustCompile(`(^|/)(tests?|spec|__tests__)(/|\.|$)|[._-](test|spec)\.`)
)

// maxStepDepth bounds how many `npm run X` testStep follows.
const maxStepDepth = 4

// step is a test script's runner command: its program, its words from
// the program on, and the VAR=value assignments before it.
type step struct {
	prog  string
	words []string
	env   []string
}

// testStep returns the runner command of the package's test script
// (found as described above), and false when the script runs none that
// testStep knows, or only in shapes it does not read (pipes,
// substitutions, redirections, subshells).
func testStep(pkgJSON []byte) (step, bool) {
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	if json.Unmarshal(pkgJSON, &pkg) != nil {
		return step{}, false
	}
	return scriptStep(pkg.Scripts, pkg.Scripts["test"], 0)
}

// npmScriptRe reads `npm run X`, `npm run-script X`, `npm test` and the
// yarn and pnpm forms in a command's words.
func npmScript(words []string) (string, bool) {
	if len(words) < 2 || !slices.Contains([]string{"npm", "yarn", "pnpm"}, words[0]) {
		return "", false
	}
	args := slices.DeleteFunc(slices.Clone(words[1:]), func(w string) bool { return strings.HasPrefix(w, "-") })
	switch {
	case len(args) == 0:
		return "", false
	case args[0] == "test" || args[0] == "t" || args[0] == "tst":
		return "test", true
	case (args[0] == "run" || args[0] == "run-script") && len(args) > 1:
		return args[1], true
	case words[0] != "npm":
		return args[0], true // yarn X, pnpm X
	}
	return "", false
}

// scriptStep is testStep for one script's text.
func scriptStep(scripts map[string]string, script string, depth int) (step, bool) {
	if depth > maxStepDepth {
		return step{}, false
	}
	for _, cmd := range commandSepRe.Split(script, -1) {
		cmd = strings.TrimSpace(cmd)
		// globs are the runner's to expand (stepExec)
		if cmd == "" || testrun.HasShellSyntax(strings.NewReplacer("*", "", "?", "").Replace(cmd)) {
			continue
		}
		words, err := testrun.SplitWords(cmd)
		if err != nil {
			continue
		}
		var env []string
		for len(words) > 0 && assignment(words[0]) {
			env = append(env, words[0])
			words = words[1:]
		}
		if name, ok := npmScript(words); ok {
			if s, ok := scripts[name]; ok && name != "test" {
				if st, ok := scriptStep(scripts, s, depth+1); ok {
					st.env = append(env, st.env...)
					return st, true
				}
			}
			continue
		}
		if st, ok := runnerWords(words); ok {
			st.env = append(env, st.env...)
			return st, true
		}
	}
	return step{}, false
}

// assignment reports whether a word is a shell variable assignment.
func assignment(w string) bool {
	k, _, ok := strings.Cut(w, "=")
	return ok && varNameRe.MatchString(k)
}

// runnerWords finds the runner in a command's words, past coverage
// wrappers and their flags (`nyc --reporter=lcov mocha`, `istanbul cover
// node_modules/mocha/bin/_mocha -- -R spec`: istanbul's "--" before the
// runner's arguments is dropped).
func runnerWords(words []string) (step, bool) {
	if len(words) == 0 {
		return step{}, false
	}
	first := path.Base(words[0])
	wrapped := slices.Contains(coverageWrappers, first)
	var env []string
	for i, w := range words {
		prog := path.Base(w)
		if i > 0 && !wrapped {
			break
		}
		if i > 0 && assignment(w) {
			env = append(env, w) // cross-env's, env's
			continue
		}
		if !slices.Contains(stepRunners, prog) {
			continue
		}
		// a runner named as a path is the package's own (node_modules/mocha/bin/_mocha)
		if w != prog && !strings.HasPrefix(strings.TrimPrefix(w, "./"), "node_modules/") {
			return step{}, false
		}
		if prog == "node" && !nodeTests(words[i+1:]) {
			return step{}, false
		}
		rest := slices.Clone(words[i:])
		if first == "istanbul" {
			if j := slices.Index(rest, "--"); j > 0 {
				rest = slices.Delete(rest, j, j+1)
			}
		}
		if prog == "_mocha" {
			prog = "mocha"
		}
		return step{prog: prog, words: rest, env: env}, true
	}
	return step{}, false
}

// nodeTests reports whether node's arguments run tests: node --test, or
// a script under a test directory or named as a test (`node test.js`,
// `node test/index.js`), not a build or a lint script.
func nodeTests(args []string) bool {
	for _, a := range args {
		if a == "--test" {
			return true
		}
		if strings.HasPrefix(a, "-") {
			continue
		}
		f := strings.TrimPrefix(a, "./")
		return isSource(f) && testScriptRe.MatchString(f)
	}
	return false
}

// stepExec runs its arguments as a command of an npm script would run:
// node_modules/.bin first on PATH, and a word with a glob character
// expanded by the shell as npm's shell would have (without field
// splitting: IFS is empty; nothing else in a word is expanded).
const stepExec = `PATH="$PWD/node_modules/.bin:$PATH"; n=$#; IFS=
while [ "$n" -gt 0 ]; do a=$1; shift; n=$((n-1)); case $a in *[*?]*) set -- "$@" $a ;; *) set -- "$@" "$a" ;; esac; done
exec "$@"`

// stepRunner is the runner that runs st alone: a runner lang/node traces
// by name (jest, vitest, mocha, ava) as that runner, so TraceTests
// narrows and traces it as it does a detected one; anything else (tape,
// tap, node) as testrun.RunnerNode's generic trace (Name "").
func stepRunner(st step) testrun.Runner {
	words := slices.Clone(st.words)
	if st.prog == "vitest" && (len(words) < 2 || words[1] != "run") && !slices.Contains(words, "--run") {
		words = append(words, "--run")
	}
	r := testrun.Runner{Args: append([]string{"sh", "-c", stepExec, "sh"}, words...), Env: slices.DeleteFunc(slices.Clone(st.env), func(e string) bool {
		return strings.HasPrefix(e, "NODE_V8_COVERAGE=")
	}), Format: testrun.NPM("")}
	switch st.prog {
	case "jest":
		r.Name = testrun.RunnerJest
	case "vitest":
		r.Name = testrun.RunnerVitest
	case "mocha":
		r.Name = testrun.RunnerMocha
	case "ava":
		r.Name = RunnerAva
	}
	return r
}

// scriptStepOf is the runner step of r when r runs the package's test
// script through npm and the script composes or wraps its runner, or
// when r is a configured command testStep can read (a runner with its
// own reporter); false otherwise.
func scriptStepOf(snap *sandbox.Snapshot, r testrun.Runner) (step, bool) {
	if snap == nil {
		return step{}, false
	}
	switch r.Name {
	case testrun.RunnerNPM:
		if len(r.Args) < 2 || r.Args[0] != "npm" || r.Args[1] != "test" {
			return step{}, false
		}
		pkg, ok := snap.Text("package.json")
		if !ok {
			return step{}, false
		}
		return testStep([]byte(pkg))
	case testrun.RunnerCustom:
		if len(r.Args) == 0 || r.Args[0] == "sh" {
			return step{}, false
		}
		if name, ok := npmScript(r.Args); ok {
			pkg, ok := snap.Text("package.json")
			if !ok {
				return step{}, false
			}
			var p struct {
				Scripts map[string]string `json:"scripts"`
			}
			if json.Unmarshal([]byte(pkg), &p) != nil {
				return step{}, false
			}
			return scriptStep(p.Scripts, p.Scripts[name], 1)
		}
		var env []string
		words := slices.Clone(r.Args)
		for len(words) > 0 && assignment(words[0]) {
			env = append(env, words[0])
			words = words[1:]
		}
		st, ok := runnerWords(words)
		st.env = append(env, st.env...)
		return st, ok
	}
	return step{}, false
}

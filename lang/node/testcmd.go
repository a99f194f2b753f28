package node

import (
	"encoding/json"
	"path"
	"slices"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// npmDefaultTest is the "test" script `npm init` writes.
const npmDefaultTest = `echo "Error: no test specified" && exit 1`

// TestCommand runs the package's test script through npm, with JSON
// reports for jest, vitest and mocha and TAP for ava and node --test (see
// nodeRunner), or node --test when there is no script.
func (Language) TestCommand(snap *sandbox.Snapshot) testrun.Runner {
	pkg, _ := snap.Text("package.json")
	r := nodeRunner([]byte(pkg))
	if len(r.Args) > 1 && r.Args[0] == "npm" && r.Args[1] == "test" {
		// npm runs the pre and post scripts around the tests (hooks.go).
		var p struct {
			Scripts map[string]string `json:"scripts"`
		}
		_ = json.Unmarshal([]byte(pkg), &p)
		npmrc, _ := snap.Text(".npmrc")
		r.StepShell = hooksFor(p.Scripts, npmrc)
	}
	return r
}

// nodeRunner runs the package's test script through npm, as its authors
// do. When the script ends in a runner fixpoint reads per test (jest,
// vitest, mocha, ava, node --test), reporter flags are appended after "--",
// which npm passes to the script's last command; the runner's own output
// stays as it is. The environment is left alone: nothing is injected that
// could change what the tests see (NO_COLOR, FORCE_COLOR, CI, TERM).
// startedReporter is a node --test reporter, given inline as a data: URL
// (nothing is written to the workspace), that prints a line to stderr
// when a test starts: node's TAP reporter names a test only once it has
// finished, so a suite stopped at its time limit would not say which test
// hung (testrun.TAPStartedPrefix). node 18.19+ emits test:dequeue; an
// older node emits none, and the reporter prints nothing. The source
// holds no '?', '#', '"' or backslash: it is a URL, and it also travels
// double-quoted in NODE_OPTIONS.
const startedReporter = "data:text/javascript,export default async function*(s){for await(const e of s){" +
	"if(e.type==='test:dequeue')yield '" + testrun.TAPStartedPrefix + "'+JSON.stringify({n:e.data.name,f:e.data.file,l:e.data.nesting})+String.fromCharCode(10);" +
	"else yield ''}}"

// tapReporters are node --test's reporter flags: TAP on stdout, which
// the results are read from, and startedReporter on stderr.
var tapReporters = []string{"--test-reporter=tap", "--test-reporter-destination=stdout", "--test-reporter=" + startedReporter, "--test-reporter-destination=stderr"}

// tapReportersOption is tapReporters as NODE_OPTIONS carries them.
var tapReportersOption = `--test-reporter=tap --test-reporter-destination=stdout --test-reporter="` + startedReporter + `" --test-reporter-destination=stderr`

func nodeRunner(pkgJSON []byte) testrun.Runner {
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	_ = json.Unmarshal(pkgJSON, &pkg) // a broken package.json still gets node --test
	declared := declaredIn(pkgJSON)
	script := strings.TrimSpace(pkg.Scripts["test"])
	if script == "" || script == npmDefaultTest {
		// No test script: a declared runner is run from node_modules/.bin
		// (npx --no never downloads; after "--" npx parses no flags of the
		// runner as its own), else node's own runner.
		for _, prog := range []string{"jest", "vitest", "mocha", "ava"} {
			if declared(prog) {
				r, _ := jsRunner(prog, []string{prog}, []string{"npx", "--no", "--", prog})
				return r
			}
		}
		return testrun.Runner{Name: testrun.RunnerNode, Args: append([]string{"node", "--test"}, tapReporters...), Format: testrun.TAP}
	}
	npmTest := []string{"npm", "test", "--silent"}
	prog, words := scriptRunner(script)
	switch {
	case prog == "node" && len(words) > 1 && words[1] == "--test" && !slices.ContainsFunc(words, func(w string) bool { return strings.HasPrefix(w, "--test-reporter") }):
		if slices.ContainsFunc(words[2:], func(w string) bool { return !strings.HasPrefix(w, "-") }) {
			// "node --test test/": node reads a flag after a file as
			// another file ("Could not find '--test-reporter=tap'"), so the
			// reporter goes through NODE_OPTIONS, which allows it.
			return testrun.Runner{Name: testrun.RunnerNPM, Args: npmTest, Env: []string{"NODE_OPTIONS=" + tapReportersOption}, Format: testrun.NPM("")}
		}
		return testrun.Runner{Name: testrun.RunnerNPM, Args: append(append(npmTest, "--"), tapReporters...), Format: testrun.NPM("")}
	case prog == "" || !declared(prog):
		// A runner the package does not declare would come from a global
		// install the sandbox does not have; read whatever it prints.
		return testrun.Runner{Name: testrun.RunnerNPM, Args: npmTest, Format: npmFormat(composedRunner(script, declared))}
	}
	if r, ok := jsRunner(prog, words, append(npmTest, "--")); ok {
		return r
	}
	return testrun.Runner{Name: testrun.RunnerNPM, Args: npmTest, Format: npmFormat(composedRunner(script, declared))}
}

// declaredIn returns whether the package.json pkgJSON declares a program
// as a dependency or devDependency (none when it does not parse).
func declaredIn(pkgJSON []byte) func(prog string) bool {
	var pkg struct {
		Dependencies    map[string]string `json:"dependencies"`
		DevDependencies map[string]string `json:"devDependencies"`
	}
	_ = json.Unmarshal(pkgJSON, &pkg)
	return func(prog string) bool {
		_, dev := pkg.DevDependencies[prog]
		_, dep := pkg.Dependencies[prog]
		return dev || dep
	}
}

// npmFormat is the format of `npm test` whose script runs composed before
// its last command: ava's default reporter is read here (AvaHuman), the
// others' in testrun.
func npmFormat(composed string) *testrun.Format {
	if composed == RunnerAva {
		return testrun.NPMWith(AvaHuman)
	}
	return testrun.NPM(composed)
}

// composedRunner returns the runner (testrun.RunnerJest, RunnerVitest,
// RunnerMocha, RunnerAva: its default reporter, AvaHuman) of a command
// before the last one of a composed script,
// "jest && tsc --noEmit" or "mocha && npm run lint": npm appends no
// reporter flags there, so its default output is read (see
// testrun.NPM). "" when no earlier command is a declared
// runner.
func composedRunner(script string, declared func(string) bool) string {
	cmds := strings.FieldsFunc(script, func(r rune) bool { return r == '&' || r == '|' || r == ';' })
	for _, c := range cmds[:max(len(cmds)-1, 0)] {
		prog, words := scriptRunner(c)
		if prog == "" || !declared(prog) || slices.ContainsFunc(words, func(w string) bool { return strings.HasPrefix(w, "--watch") }) {
			continue
		}
		switch prog {
		case "jest":
			return testrun.RunnerJest
		case "vitest":
			return testrun.RunnerVitest
		case "mocha":
			return testrun.RunnerMocha
		case "ava":
			if !slices.Contains(words, "--tap") && !slices.Contains(words, "-t") && !slices.Contains(words, "-w") {
				return RunnerAva
			}
		}
	}
	return ""
}

// jsRunner is the runner for jest, vitest, mocha or ava invoked as words
// (program first), run as prefix plus the reporter flags. ok is false
// for other programs and for watch modes, which never end.
func jsRunner(prog string, words, prefix []string) (r testrun.Runner, ok bool) {
	args := slices.Clone(prefix)
	switch {
	case prog == "jest" && !slices.Contains(words, "--watch") && !slices.Contains(words, "--watchAll"):
		return testrun.Runner{Name: testrun.RunnerJest, Args: append(args, "--json", "--outputFile="+testrun.JestReportPath), ReportPath: testrun.JestReportPath, Format: testrun.Jest}, true
	case prog == "vitest" && !slices.Contains(words, "--watch"):
		if (len(words) < 2 || words[1] != "run") && !slices.Contains(words, "--run") {
			args = append(args, "--run")
		}
		return testrun.Runner{Name: testrun.RunnerVitest, Args: append(args, "--reporter=default", "--reporter=json", "--outputFile="+testrun.VitestReportPath), ReportPath: testrun.VitestReportPath, Format: testrun.Vitest}, true
	case prog == "mocha" && !slices.Contains(words, "--watch"):
		return testrun.Runner{Name: testrun.RunnerMocha, Args: append(args, "--reporter", "json", "--reporter-option", "output="+testrun.MochaReportPath), ReportPath: testrun.MochaReportPath, Format: testrun.Mocha}, true
	case prog == "ava" && !slices.Contains(words, "--watch") && !slices.Contains(words, "-w"):
		// ava's TAP names each test as its default reporter does (Ava).
		if !slices.Contains(words, "--tap") && !slices.Contains(words, "-t") {
			args = append(args, "--tap")
		}
		return testrun.Runner{Name: RunnerAva, Args: args, Format: Ava}, true
	}
	return testrun.Runner{}, false
}

// scriptRunner returns the program of an npm script's last command and
// that command's words from the program on: the command npm appends
// arguments to. Leading VAR=value words and the wrappers npx, env and
// cross-env are skipped. It returns "" for scripts it cannot read that
// far: pipes, redirections, subshells, substitutions, a trailing "&".
func scriptRunner(script string) (string, []string) {
	last := script
	for _, sep := range []string{"&&", "||", ";"} {
		if i := strings.LastIndex(last, sep); i >= 0 {
			last = last[i+len(sep):]
		}
	}
	if testrun.HasShellSyntax(last) {
		return "", nil
	}
	words, err := testrun.SplitWords(last)
	if err != nil {
		return "", nil
	}
	for len(words) > 0 {
		w := words[0]
		if k, _, ok := strings.Cut(w, "="); ok && k != "" && !strings.HasPrefix(w, "-") {
			words = words[1:]
			continue
		}
		if w == "npx" || w == "env" || w == "cross-env" {
			words = words[1:]
			for len(words) > 0 && strings.HasPrefix(words[0], "-") {
				words = words[1:]
			}
			continue
		}
		break
	}
	if len(words) == 0 {
		return "", nil
	}
	return path.Base(words[0]), words
}

// TestFormats are the formats a configured test command's output is
// recognised as when it is a JavaScript runner's: jest's (and vitest's)
// and mocha's JSON reports, ava's TAP (before node's, whose reader it
// builds on), node's TAP ([lang.ResultFormats]).
func (Language) TestFormats() []*testrun.Format {
	return []*testrun.Format{testrun.Jest, testrun.Mocha, Ava, testrun.TAP}
}

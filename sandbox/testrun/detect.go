package testrun

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// Runner names. A [Report] carries the same name, except that a "custom"
// runner reports the format its output was recognised as ("go", "pytest",
// "unittest", "node") or "exit-code".
const (
	RunnerGo       = "go"
	RunnerPytest   = "pytest"
	RunnerUnittest = "unittest"
	RunnerNode     = "node"
	RunnerNPM      = "npm"
	RunnerJest     = "jest"
	RunnerVitest   = "vitest"
	RunnerMocha    = "mocha"
	RunnerCustom   = "custom"
	RunnerExitCode = "exit-code"
)

// JUnitPath is the workspace-relative report file pytest writes. Snapshots
// skip .fixpoint, so the report never enters a workspace snapshot.
const JUnitPath = ".fixpoint/junit.xml"

// Report files of the JavaScript runners, workspace-relative like JUnitPath.
const (
	JestReportPath   = ".fixpoint/jest.json"
	VitestReportPath = ".fixpoint/vitest.json"
	MochaReportPath  = ".fixpoint/mocha.json"
)

// Runner is a test command and how to read its results.
type Runner struct {
	Name string   // RunnerGo, RunnerPytest, ...; RunnerCustom for a configured test_cmd
	Args []string // argv, run from the workspace root
	// ReportPath is a workspace-relative report file written by the command
	// (JUnit XML), "" if none.
	ReportPath string
	// Env holds extra KEY=VALUE pairs for the command (added field: quiet,
	// colourless, reproducible output).
	Env []string
	// Module is the Go module path from go.mod (added field), used to turn
	// the package-relative file names of `go test` into workspace-relative ones.
	Module string
	// Root is the absolute workspace directory as the command sees it
	// (added field). "" means /workspace, the sandbox convention; Run fills
	// it from sessions that implement WorkDir() string.
	Root string
}

// WithEnv returns r with the configured variables added to its Env, in
// key order, after the runner's own: a configured value wins over one
// Detect chose. These are the only variables fixpoint adds on request
// (config [test] env).
func (r Runner) WithEnv(env map[string]string) Runner {
	keys := make([]string, 0, len(env))
	for k := range env {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := slices.DeleteFunc(slices.Clone(r.Env), func(e string) bool {
		k, _, _ := strings.Cut(e, "=")
		_, set := env[k]
		return set
	})
	for _, k := range keys {
		out = append(out, k+"="+env[k])
	}
	r.Env = out
	return r
}

// npmDefaultTest is the "test" script `npm init` writes.
const npmDefaultTest = `echo "Error: no test specified" && exit 1`

var goModuleRe = regexp.MustCompile(`(?m)^\s*module\s+("?)([^\s"]+)("?)\s*(?://.*)?$`)

// Detect chooses the test command for a workspace. A non-empty override (the
// config's test_cmd, shell words with quotes) always wins and gives a
// RunnerCustom whose output is recognised by sniffing. Otherwise: go.mod →
// go test -json; package.json → its test script through npm, with JSON
// reports for jest, vitest and mocha and TAP for node --test (see
// nodeRunner), or node --test when there is no script;
// pytest markers → pytest with a JUnit report; other Python → unittest.
// A workspace with none of these gets RunnerCustom with no Args.
func Detect(snap *sandbox.Snapshot, override string) Runner {
	if strings.TrimSpace(override) != "" {
		return customRunner(override)
	}
	if snap == nil {
		return Runner{Name: RunnerCustom}
	}
	if gomod, ok := snap.Text("go.mod"); ok {
		r := Runner{Name: RunnerGo, Args: []string{"go", "test", "-json", "./..."}}
		if m := goModuleRe.FindSubmatch([]byte(gomod)); m != nil {
			r.Module = string(m[2])
		}
		return r
	}
	if pkg, ok := snap.Text("package.json"); ok {
		return nodeRunner([]byte(pkg))
	}
	if isPytest(snap) {
		return Runner{
			Name: RunnerPytest,
			Args: []string{"python3", "-m", "pytest", "-q", "-rA", "--junitxml=" + JUnitPath, "-p", "no:cacheprovider"},
			Env:  []string{"PYTHONDONTWRITEBYTECODE=1"},

			ReportPath: JUnitPath,
		}
	}
	if snap.Language() == "python" {
		return Runner{
			Name: RunnerUnittest,
			Args: []string{"python3", "-m", "unittest", "discover", "-v"},
			Env:  []string{"PYTHONDONTWRITEBYTECODE=1"},
		}
	}
	return Runner{Name: RunnerCustom}
}

// nodeRunner runs the package's test script through npm, as its authors
// do. When the script ends in a runner fixpoint reads per test (jest,
// vitest, mocha, node --test), reporter flags are appended after "--",
// which npm passes to the script's last command; the runner's own output
// stays as it is. The environment is left alone: nothing is injected that
// could change what the tests see (NO_COLOR, FORCE_COLOR, CI, TERM).
func nodeRunner(pkgJSON []byte) Runner {
	var pkg struct {
		Scripts         map[string]string `json:"scripts"`
		Dependencies    map[string]string `json:"dependencies"`
		DevDependencies map[string]string `json:"devDependencies"`
	}
	_ = json.Unmarshal(pkgJSON, &pkg) // a broken package.json still gets node --test
	declared := func(prog string) bool {
		_, dev := pkg.DevDependencies[prog]
		_, dep := pkg.Dependencies[prog]
		return dev || dep
	}
	script := strings.TrimSpace(pkg.Scripts["test"])
	if script == "" || script == npmDefaultTest {
		// No test script: a declared runner is run from node_modules/.bin
		// (npx --no never downloads; after "--" npx parses no flags of the
		// runner as its own), else node's own runner.
		for _, prog := range []string{"jest", "vitest", "mocha"} {
			if declared(prog) {
				r, _ := jsRunner(prog, []string{prog}, []string{"npx", "--no", "--", prog})
				return r
			}
		}
		return Runner{Name: RunnerNode, Args: []string{"node", "--test", "--test-reporter=tap"}}
	}
	npmTest := []string{"npm", "test", "--silent"}
	prog, words := scriptRunner(script)
	switch {
	case prog == "node" && len(words) > 1 && words[1] == "--test" && !slices.ContainsFunc(words, func(w string) bool { return strings.HasPrefix(w, "--test-reporter") }):
		return Runner{Name: RunnerNPM, Args: append(npmTest, "--", "--test-reporter=tap")}
	case prog == "" || !declared(prog):
		// A runner the package does not declare would come from a global
		// install the sandbox does not have; read whatever it prints.
		return Runner{Name: RunnerNPM, Args: npmTest}
	}
	if r, ok := jsRunner(prog, words, append(npmTest, "--")); ok {
		return r
	}
	return Runner{Name: RunnerNPM, Args: npmTest}
}

// jsRunner is the runner for jest, vitest or mocha invoked as words
// (program first), run as prefix plus the reporter flags. ok is false
// for other programs and for watch modes, which never end.
func jsRunner(prog string, words, prefix []string) (r Runner, ok bool) {
	args := slices.Clone(prefix)
	switch {
	case prog == "jest" && !slices.Contains(words, "--watch") && !slices.Contains(words, "--watchAll"):
		return Runner{Name: RunnerJest, Args: append(args, "--json", "--outputFile="+JestReportPath), ReportPath: JestReportPath}, true
	case prog == "vitest" && !slices.Contains(words, "--watch"):
		if (len(words) < 2 || words[1] != "run") && !slices.Contains(words, "--run") {
			args = append(args, "--run")
		}
		return Runner{Name: RunnerVitest, Args: append(args, "--reporter=default", "--reporter=json", "--outputFile="+VitestReportPath), ReportPath: VitestReportPath}, true
	case prog == "mocha" && !slices.Contains(words, "--watch"):
		return Runner{Name: RunnerMocha, Args: append(args, "--reporter", "json", "--reporter-option", "output="+MochaReportPath), ReportPath: MochaReportPath}, true
	}
	return Runner{}, false
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
	if hasShellSyntax(last) {
		return "", nil
	}
	words, err := SplitWords(last)
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

func isPytest(snap *sandbox.Snapshot) bool {
	text := func(p string) string { t, _ := snap.Text(p); return t }
	for p := range snap.Files {
		base := path.Base(p)
		switch base {
		case "pytest.ini", "conftest.py":
			return true
		case "pyproject.toml":
			if strings.Contains(text(p), "[tool.pytest") {
				return true
			}
		case "setup.cfg":
			if strings.Contains(text(p), "[tool:pytest]") {
				return true
			}
		case "tox.ini":
			if strings.Contains(text(p), "[pytest]") {
				return true
			}
		}
		if strings.HasSuffix(base, ".py") && (strings.HasPrefix(base, "test_") || strings.HasSuffix(base, "_test.py")) {
			return true
		}
	}
	return false
}

func customRunner(cmd string) Runner {
	r := Runner{Name: RunnerCustom}
	words, err := SplitWords(cmd)
	if err != nil || hasShellSyntax(cmd) {
		r.Args = []string{"sh", "-c", cmd}
	} else {
		r.Args = words
	}
	for i, w := range words {
		switch {
		case strings.HasPrefix(w, "--junitxml=") || strings.HasPrefix(w, "--junit-xml="):
			r.ReportPath = w[strings.IndexByte(w, '=')+1:]
		case (w == "--junitxml" || w == "--junit-xml") && i+1 < len(words):
			r.ReportPath = words[i+1]
		case strings.HasPrefix(w, "--outputFile="): // jest --json, vitest --reporter=json
			r.ReportPath = w[len("--outputFile="):]
		case strings.HasPrefix(w, "output=") && i > 0 && (words[i-1] == "--reporter-option" || words[i-1] == "--reporter-options"): // mocha
			r.ReportPath = w[len("output="):]
		}
	}
	if r.ReportPath != "" {
		if c, err := sandbox.CleanRel(r.ReportPath); err == nil {
			r.ReportPath = c
		} else {
			r.ReportPath = "" // absolute or escaping: not readable through the session
		}
	}
	return r
}

// hasShellSyntax reports whether cmd uses operators that need a shell:
// pipes, lists, redirections, substitutions, globs or variables, outside
// single quotes.
func hasShellSyntax(cmd string) bool {
	inSingle, inDouble := false, false
	for i := 0; i < len(cmd); i++ {
		c := cmd[i]
		switch {
		case inSingle:
			inSingle = c != '\''
		case c == '\\':
			i++
		case c == '\'' && !inDouble:
			inSingle = true
		case c == '"':
			inDouble = !inDouble
		case c == '$' || c == '`':
			return true
		case !inDouble && strings.IndexByte("|&;<>()*?~", c) >= 0:
			return true
		}
	}
	return false
}

// SplitWords splits s into words as a POSIX shell would, without
// expansions: blanks separate words, single quotes keep everything
// literally, double quotes allow \" \\ \$ \` escapes, and a backslash
// outside quotes escapes the next character.
func SplitWords(s string) ([]string, error) {
	var (
		words  []string
		cur    strings.Builder
		inWord bool
	)
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case c == '\\':
			inWord = true
			if i+1 < len(s) {
				i++
				if s[i] != '\n' {
					cur.WriteByte(s[i])
				}
			}
		case c == '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, fmt.Errorf("split %q: unterminated single quote", s)
			}
			cur.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case c == '"':
			inWord = true
			i++
			for ; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' && i+1 < len(s) && strings.IndexByte("\"\\$`\n", s[i+1]) >= 0 {
					i++
				}
				cur.WriteByte(s[i])
			}
			if i >= len(s) {
				return nil, fmt.Errorf("split %q: unterminated double quote", s)
			}
		default:
			inWord = true
			cur.WriteByte(c)
		}
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}

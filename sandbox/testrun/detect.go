package testrun

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
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
	RunnerCustom   = "custom"
	RunnerExitCode = "exit-code"
)

// JUnitPath is the workspace-relative report file pytest writes. Snapshots
// skip .fixpoint, so the report never enters a workspace snapshot.
const JUnitPath = ".fixpoint/junit.xml"

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

// npmDefaultTest is the "test" script `npm init` writes.
const npmDefaultTest = `echo "Error: no test specified" && exit 1`

var goModuleRe = regexp.MustCompile(`(?m)^\s*module\s+("?)([^\s"]+)("?)\s*(?://.*)?$`)

// Detect chooses the test command for a workspace. A non-empty override (the
// config's test_cmd, shell words with quotes) always wins and gives a
// RunnerCustom whose output is recognised by sniffing. Otherwise: go.mod →
// go test -json; package.json → its test script or node --test with TAP;
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

func nodeRunner(pkgJSON []byte) Runner {
	var pkg struct {
		Scripts map[string]string `json:"scripts"`
	}
	_ = json.Unmarshal(pkgJSON, &pkg) // a broken package.json still gets node --test
	env := []string{"NO_COLOR=1", "FORCE_COLOR=0"}
	script := strings.TrimSpace(pkg.Scripts["test"])
	switch {
	case script == "" || script == npmDefaultTest:
		return Runner{Name: RunnerNode, Args: []string{"node", "--test", "--test-reporter=tap"}, Env: env}
	case isNodeTest(script):
		return Runner{Name: RunnerNPM, Args: []string{"npm", "test", "--silent", "--", "--test-reporter=tap"}, Env: env}
	default:
		return Runner{Name: RunnerNPM, Args: []string{"npm", "test", "--silent"}, Env: env}
	}
}

// isNodeTest reports whether an npm script is a plain `node --test ...`,
// which accepts reporter flags appended after `--`.
func isNodeTest(script string) bool {
	if strings.ContainsAny(script, "&|;") {
		return false
	}
	w, err := SplitWords(script)
	return err == nil && len(w) >= 2 && w[0] == "node" && w[1] == "--test" && !strings.Contains(script, "--test-reporter")
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

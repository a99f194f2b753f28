package testrun

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// Runner names. A [Report] carries its runner's name, or the name of the
// [Format] a configured ("custom") command's output was recognised as, or
// "exit-code". The names of the formats testrun declares are here; a
// language's own format names itself (lang/rust: "cargo").
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
	// Name is the report's runner name; "" is Format's. [RunnerCustom]
	// for a configured test_cmd, whose report is named after the format
	// its output is recognised as.
	Name string
	Args []string // argv, run from the workspace root
	// Format reads the command's output and report file. nil: the output
	// is recognised among Formats (a configured test_cmd).
	Format *Format
	// Formats are the formats a command without a Format may report in,
	// in the order they are tried: every registered language's
	// (lang/registry.Formats). Nil with no Format: the exit code and
	// output only.
	Formats []*Format
	// ReportPath is a workspace-relative report file written by the
	// command (JUnit XML, a JSON report), "" if none. Run removes an
	// earlier run's file before the command starts.
	ReportPath string
	// TracePath is a workspace-relative file a traced run writes what it
	// executed to (lang.Tracer), "" if none. Run removes an earlier run's
	// file before the command starts and reads this run's back into
	// Report.Trace.
	TracePath string
	// Env holds extra KEY=VALUE pairs for the command (added field: quiet,
	// colourless, reproducible output).
	Env []string
	// Root is the absolute workspace directory as the command sees it
	// (added field). "" means /workspace, the sandbox convention; Run fills
	// it from sessions that implement WorkDir() string.
	Root string
	// Git, when set, gives the workspace copy a minimal repository before
	// the command runs, when it has none and the sandbox has git: scripts
	// that run `git remote -v` or `lefthook install` work as in the
	// user's clone. See sandbox.GitInfo for what it holds (never
	// credentials).
	Git *sandbox.GitInfo
	// StepShell, when set, is the step-marking shell the command runs
	// its scripts through (steps.go): Run writes it into the workspace
	// copy and exports its path before the command starts.
	StepShell *StepShell
	// Missing says, for a Runner without Args, why the language found no
	// command and what to set (Go modules in several sub-directories and
	// none at the root); Run reports it with ErrNoRunner.
	Missing string
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

// Custom is the runner of a configured test command (the config's
// test_cmd, shell words with quotes): argv when the words need no shell,
// else `sh -c`. Its output is recognised among formats (Format.Sniff, in
// order: lang/registry passes every language's); a report file named
// by a JUnit, jest/vitest or mocha flag is read back when it stays inside
// the workspace. Which command a detected language runs is the language's
// (lang.Language.TestCommand).
func Custom(cmd string, formats []*Format) Runner {
	r := Runner{Name: RunnerCustom, Formats: formats}
	words, err := SplitWords(cmd)
	// A leading assignment (FOO=1 npm test) is the shell's to apply:
	// executed as a word it names no program.
	if err != nil || HasShellSyntax(cmd) || (len(words) > 0 && assignmentRe.MatchString(words[0])) {
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

// assignmentRe is a shell environment assignment word (NAME=value).
var assignmentRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// HasShellSyntax reports whether cmd uses operators that need a shell:
// pipes, lists, redirections, substitutions, globs or variables, outside
// single quotes.
func HasShellSyntax(cmd string) bool {
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

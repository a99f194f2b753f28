// Package policy checks model-written code before it runs, as defence in
// depth behind the sandbox.
//
// A [Checker] holds the project's rule actions (block, warn or off, from
// .fixpoint.toml [policy.rules]) and checks each changed file with a real
// parser where one exists: go/ast for Go, Python's own ast module for Python
// (parsing only; nothing is executed), and a comment- and string-aware
// scanner for JavaScript and TypeScript. [Findings] with action block stop
// the edit from running; their [Feedback] goes back to the model.
//
// [DepsAdded] finds dependencies an edit adds, for the approval flow.
package policy

import (
	"context"
	"fmt"
	"os"
	"path"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/config"
)

// Action is what a rule does when it matches.
type Action string

const (
	Block Action = "block"
	Warn  Action = "warn"
	Off   Action = "off"
)

// Rule is one check.
type Rule struct {
	Name        string // "python.subprocess"
	Lang        string // "go", "python", "js"
	Description string // what it catches, for docs and messages
	Default     Action
}

// Rules returns the rule catalogue, sorted by name.
func Rules() []Rule {
	r := []Rule{
		{"go.os-exec", "go", "imports os/exec (starts processes)", Block},
		{"go.syscall", "go", "imports syscall or golang.org/x/sys/unix", Block},
		{"go.unsafe", "go", "imports unsafe", Warn},
		{"go.net", "go", "imports net (raw sockets)", Warn},
		{"go.plugin", "go", "imports plugin (loads code at run time)", Block},
		{"go.remove-all", "go", "os.RemoveAll on an absolute path or one with ..", Block},
		{"python.subprocess", "python", "imports subprocess", Block},
		{"python.os-system", "python", "os.system, os.popen, os.exec*, os.spawn*", Block},
		{"python.socket", "python", "imports socket", Block},
		{"python.shutil-rmtree", "python", "shutil.rmtree (block on an absolute path or one with ..)", Warn},
		{"python.ctypes", "python", "imports ctypes", Block},
		{"python.eval-exec", "python", "eval or exec on something other than a literal", Block},
		{"js.child-process", "js", "requires or imports child_process", Block},
		{"js.net", "js", "requires or imports net, dgram or tls", Block},
		{"js.fs-rm", "js", "fs.rm/rmSync/rmdir/rmdirSync on an absolute path or one with ..", Block},
		{"python.assert-tamper", "python", "rebinds unittest, pytest or builtins.AssertionError members (assignment, setattr, patch) in non-test code", Block},
		{"python.constant-eq", "python", "__eq__ that always returns true, __ne__ always false, or __hash__ a constant, in non-test code", Block},
		{"js.assert-tamper", "js", "reassigns, deletes or redefines members of assert/node:assert/expect, or calls expect.extend, in non-test code", Block},
		{"go.testing-import", "go", "imports testing in a non-test file", Warn},
		{"go.init-exit", "go", "os.Exit in func init (ends the test binary before any test runs)", Block},
	}
	sort.Slice(r, func(i, j int) bool { return r[i].Name < r[j].Name })
	return r
}

// nonTestOnly are the rules that do not apply to test files (see
// Options.IsTest): tests may legitimately patch their own framework.
var nonTestOnly = map[string]bool{
	"python.assert-tamper": true, "python.constant-eq": true, "js.assert-tamper": true, "go.testing-import": true,
	"go.init-exit": true, // the helper-process pattern of Go tests; a test binary that exits early loses its tests, which the verdict catches
}

// Finding is one rule match.
type Finding struct {
	Rule    string `json:"rule"`
	Path    string `json:"path"`
	Line    int    `json:"line"` // 1-based; 0 when unknown
	Message string `json:"message"`
	Action  Action `json:"action"`
	// always: blocked whatever the rule's action, unless the rule is off
	// (an rmtree of an absolute path is never ordinary code).
	always bool
}

func (f Finding) String() string {
	loc := f.Path
	if f.Line > 0 {
		loc = fmt.Sprintf("%s:%d", f.Path, f.Line)
	}
	return fmt.Sprintf("%s: %s (%s)", loc, f.Message, f.Rule)
}

// Findings is a list of matches.
type Findings []Finding

// Blocked returns the findings whose action is block.
func (fs Findings) Blocked() Findings {
	var out Findings
	for _, f := range fs {
		if f.Action == Block {
			out = append(out, f)
		}
	}
	return out
}

// Feedback is the message for the model about blocked findings; "" if none.
func (fs Findings) Feedback() string {
	b := fs.Blocked()
	if len(b) == 0 {
		return ""
	}
	var sb strings.Builder
	sb.WriteString("Your edit was not run: it is blocked by project policy.\n")
	for _, f := range b {
		fmt.Fprintf(&sb, "- blocked by project policy: %s is not allowed (%s); see .fixpoint.toml [policy.rules] %q\n",
			f.Message, locString(f), f.Rule)
	}
	sb.WriteString("Rewrite the change without these constructs.\n")
	return sb.String()
}

func locString(f Finding) string {
	if f.Line > 0 {
		return fmt.Sprintf("%s:%d", f.Path, f.Line)
	}
	return f.Path
}

// Options configure a Checker. Zero values are defaults.
type Options struct {
	// Python is the interpreter used to parse Python (never to run the
	// checked code); "" means the system's (/usr/bin/python3 or
	// /usr/local/bin/python3), else python3 on PATH: a version manager's
	// shim on PATH (pyenv's is a shell script) costs ~80 ms per check, and
	// any Python 3 parses the same. When none is found, a token scanner is
	// used instead.
	Python string
	// IsTest reports whether a workspace path is a test file; the rules
	// against tampering with the test framework skip test files. nil
	// means no file is a test file.
	IsTest func(rel string) bool
	// Parser, when set, parses Python in one persistent process shared
	// with other Checkers instead of a process per file; the caller owns
	// it (and closes it). nil starts a process per checked file.
	Parser *PythonParser
}

// Checker checks files against the project's rules.
type Checker struct {
	actions map[string]Action
	python  string
	isTest  func(string) bool
	parser  *PythonParser
}

// New returns a Checker with the rule actions of cfg over the defaults.
// Unknown rule names in cfg are an error naming the rule.
func New(cfg config.Policy, opts *Options) (*Checker, error) {
	c := &Checker{actions: map[string]Action{}}
	if opts != nil {
		c.python, c.isTest, c.parser = opts.Python, opts.IsTest, opts.Parser
	}
	if c.python == "" {
		c.python = systemPython()
	}
	for _, r := range Rules() {
		c.actions[r.Name] = r.Default
	}
	for name, a := range cfg.Rules {
		if _, ok := c.actions[name]; !ok {
			return nil, fmt.Errorf("%w: policy.rules.%s: unknown rule (known: %s)", config.ErrInvalid, name, ruleNames())
		}
		c.actions[name] = Action(a)
	}
	return c, nil
}

// systemPython is the first system interpreter found, or "" (then
// checkPython looks on PATH).
func systemPython() string {
	for _, p := range []string{"/usr/bin/python3", "/usr/local/bin/python3"} {
		if st, err := os.Stat(p); err == nil && st.Mode().IsRegular() {
			return p
		}
	}
	return ""
}

func ruleNames() string {
	var n []string
	for _, r := range Rules() {
		n = append(n, r.Name)
	}
	return strings.Join(n, ", ")
}

// Check checks one file. Files of other languages give no findings.
func (c *Checker) Check(ctx context.Context, rel string, src []byte) (Findings, error) {
	var raw []Finding
	var err error
	switch lang(rel) {
	case "go":
		raw, err = checkGo(rel, src)
	case "python":
		raw, err = c.checkPython(ctx, rel, src)
	case "js":
		raw = checkJS(rel, src)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	test := c.isTest != nil && c.isTest(rel)
	var out Findings
	for _, f := range raw {
		if test && nonTestOnly[f.Rule] {
			continue
		}
		f.Path = rel
		f.Action = c.actions[f.Rule]
		if f.always && f.Action != Off {
			f.Action = Block
		}
		if f.Action != Off {
			out = append(out, f)
		}
	}
	return out, nil
}

// CheckAll checks every changed file (path → new content).
func (c *Checker) CheckAll(ctx context.Context, changed map[string][]byte) (Findings, error) {
	paths := make([]string, 0, len(changed))
	for p := range changed {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var out Findings
	for _, p := range paths {
		if changed[p] == nil {
			continue
		}
		fs, err := c.Check(ctx, p, changed[p])
		if err != nil {
			return nil, fmt.Errorf("policy check %s: %w", p, err)
		}
		out = append(out, fs...)
	}
	return out, nil
}

func lang(rel string) string {
	switch path.Ext(rel) {
	case ".go":
		return "go"
	case ".py", ".pyi":
		return "python"
	case ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".mts", ".cts":
		return "js"
	}
	return ""
}

// outside reports whether a literal path leaves the workspace.
func outside(p string) bool {
	return strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || p == ".." ||
		strings.HasPrefix(p, "../") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/..")
}

// Package policy checks model-written code before it runs, as defence in
// depth behind the sandbox.
//
// A [Checker] holds the project's rule actions (block, warn or off, from
// .fixpoint.toml [policy.rules]) and checks each changed file with the
// checks of its language (lang.Policy, in lang/<name>/policy.go): a real
// parser where one exists, go/ast for Go, Python's own ast module for
// Python (parsing only; nothing is executed), and a comment- and
// string-aware scanner for JavaScript and TypeScript. [Findings] with action block stop
// the edit from running; their [Feedback] goes back to the model.
//
// [DepsAdded] finds dependencies an edit adds and [SetupChanges] what it
// changes in the networked setup phase, for the approval flow
// (agent.Approval).
package policy

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/python"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
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
	Lang        string // the language's name: "go", "python", "node"
	Description string // what it catches, for docs and messages
	Default     Action
	// nonTestOnly rules do not apply to test files (see Options.IsTest):
	// tests may legitimately patch their own framework.
	nonTestOnly bool
	// perUse rules count only what an edit adds ([Checker.Added]).
	perUse bool
}

// Rules returns the rule catalogue of every language ([lang.Policy]),
// sorted by name.
func Rules() []Rule {
	var r []Rule
	for _, l := range registry.All() {
		p, ok := l.(lang.Policy)
		if !ok {
			continue
		}
		for _, pr := range p.PolicyRules() {
			def := Warn
			if pr.Block {
				def = Block
			}
			r = append(r, Rule{Name: pr.Name, Lang: l.Name(), Description: pr.Description, Default: def, nonTestOnly: pr.NonTestOnly, perUse: pr.PerUse})
		}
	}
	sort.Slice(r, func(i, j int) bool { return r[i].Name < r[j].Name })
	return r
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
	// The first line alone reaches progress and stop reasons: it names
	// the first finding, its place and its rule, so that a user sees what
	// was refused and which key of .fixpoint.toml decides it.
	more := ""
	if len(b) > 1 {
		more = fmt.Sprintf(" and %d more", len(b)-1)
	}
	fmt.Fprintf(&sb, "Your edit was not run: it is blocked by project policy (%s: %s, rule %q%s).\n", locString(b[0]), b[0].Message, b[0].Rule, more)
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
	// it (and closes it): lang/python's Parser. nil starts a process per
	// checked file.
	Parser lang.PolicyParser
}

// Checker checks files against the project's rules.
type Checker struct {
	actions     map[string]Action
	nonTestOnly map[string]bool
	perUse      map[string]bool
	python      string
	isTest      func(string) bool
	parser      lang.PolicyParser
}

// New returns a Checker with the rule actions of cfg over the defaults.
// Unknown rule names and actions other than block, warn and off (in that
// case) are an error naming the rule.
func New(cfg config.Policy, opts *Options) (*Checker, error) {
	c := &Checker{actions: map[string]Action{}, nonTestOnly: map[string]bool{}, perUse: map[string]bool{}}
	if opts != nil {
		c.python, c.isTest, c.parser = opts.Python, opts.IsTest, opts.Parser
	}
	if c.python == "" {
		c.python = python.SystemPython()
	}
	for _, r := range Rules() {
		c.actions[r.Name] = r.Default
		c.nonTestOnly[r.Name] = r.nonTestOnly
		c.perUse[r.Name] = r.perUse
	}
	for name, a := range cfg.Rules {
		if _, ok := c.actions[name]; !ok {
			return nil, fmt.Errorf("%w: policy.rules.%s: unknown rule (known: %s)", config.ErrInvalid, name, ruleNames())
		}
		switch act := Action(a); act {
		case Block, Warn, Off:
			c.actions[name] = act
		default:
			// Exactly these words: "Block" accepted here would match no
			// case below and never block.
			return nil, fmt.Errorf("%w: policy.rules.%s: %q is not one of block, warn, off", config.ErrInvalid, name, a)
		}
	}
	return c, nil
}

func ruleNames() string {
	var n []string
	for _, r := range Rules() {
		n = append(n, r.Name)
	}
	return strings.Join(n, ", ")
}

// Check checks one file with the checks of the language it belongs to
// ([lang.Policy]). Files of no language with a policy give no findings.
// Without Options.Parser a language may start a process per call: check
// the files of one reply with a Batch.
func (c *Checker) Check(ctx context.Context, rel string, src []byte) (Findings, error) {
	return c.check(ctx, rel, src, func(lang.Language) lang.PolicyParser { return c.parser })
}

// Batch checks the files of one reply with at most one parser process per
// language ([lang.PolicyParsers]), started on the language's first file
// and ended by Close, instead of a process per file: a reply of 100,000
// files must not start 100,000 interpreters. A Checker made with
// Options.Parser uses that parser instead. A Batch is not safe for
// concurrent use.
type Batch struct {
	c       *Checker
	parsers map[string]lang.ClosingPolicyParser // by language; a nil entry: the language has none
}

// Batch returns a Batch; the caller closes it.
func (c *Checker) Batch() *Batch {
	return &Batch{c: c, parsers: map[string]lang.ClosingPolicyParser{}}
}

// Check checks one file, like Checker.Check.
func (b *Batch) Check(ctx context.Context, rel string, src []byte) (Findings, error) {
	return b.c.check(ctx, rel, src, b.parser)
}

func (b *Batch) parser(l lang.Language) lang.PolicyParser {
	if b.c.parser != nil {
		return b.c.parser
	}
	p, seen := b.parsers[l.Name()]
	if !seen {
		if pp, ok := l.(lang.PolicyParsers); ok {
			p = pp.NewPolicyParser(b.c.python)
		}
		b.parsers[l.Name()] = p
	}
	if p == nil {
		return nil
	}
	return p
}

// Close ends the batch's parser processes.
func (b *Batch) Close() error {
	var errs []error
	for _, p := range b.parsers {
		if p != nil {
			errs = append(errs, p.Close())
		}
	}
	clear(b.parsers)
	return errors.Join(errs...)
}

func (c *Checker) check(ctx context.Context, rel string, src []byte, parser func(lang.Language) lang.PolicyParser) (Findings, error) {
	var raw []lang.PolicyFinding
	for _, l := range registry.All() {
		p, ok := l.(lang.Policy)
		if !ok {
			continue
		}
		fs, err := p.CheckPolicy(ctx, rel, src, lang.PolicyOptions{Python: c.python, Parser: parser(l)})
		if err != nil {
			return nil, err
		}
		raw = append(raw, fs...)
	}
	test := c.isTest != nil && c.isTest(rel)
	nonTestOnly := c.nonTestOnly
	var out Findings
	for _, lf := range raw {
		if test && nonTestOnly[lf.Rule] {
			continue
		}
		f := Finding{Rule: lf.Rule, Line: lf.Line, Message: lf.Message, always: lf.Always}
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

// Added drops from after (the findings of a file as edited) the findings
// of per-use rules that before (those of the user's own version of the
// file) already has, by rule and message, as many times as before has
// them: what remains is what the edit added, and every finding of the
// other rules.
func (c *Checker) Added(before, after Findings) Findings {
	type key struct{ rule, msg string }
	had := map[key]int{}
	for _, f := range before {
		if c.perUse[f.Rule] {
			had[key{f.Rule, f.Message}]++
		}
	}
	var out Findings
	for _, f := range after {
		if k := (key{f.Rule, f.Message}); had[k] > 0 {
			had[k]--
			continue
		}
		out = append(out, f)
	}
	return out
}

// CheckAll checks every changed file (path → new content) in one Batch.
func (c *Checker) CheckAll(ctx context.Context, changed map[string][]byte) (Findings, error) {
	b := c.Batch()
	defer b.Close()
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
		fs, err := b.Check(ctx, p, changed[p])
		if err != nil {
			return nil, fmt.Errorf("policy check %s: %w", p, err)
		}
		out = append(out, fs...)
	}
	return out, nil
}

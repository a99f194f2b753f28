package policy

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/txtar"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

var update = flag.Bool("update", false, "rewrite golden files")

// corpus is one txtar of policy cases with its golden findings: this
// package's testdata/rules.txtar (cases that belong to no language), and
// each language's own lang/<language>/testdata/policy.txtar (a language
// brings its cases in its folder; nothing here names one).
type corpus struct {
	txtar string
	base  string // the golden files' path without ".golden"
}

// golden is the corpus's golden file for a golden mode: base.<mode>.golden
// where the mode finds otherwise (the token scanner on Python), else
// base.golden.
func (cp corpus) golden(mode string) (path string, own bool) {
	if p := cp.base + "." + mode + ".golden"; fileExists(p) {
		return p, true
	}
	return cp.base + ".golden", false
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

func corpora(t *testing.T) []corpus {
	t.Helper()
	out := []corpus{{txtar: "testdata/rules.txtar", base: filepath.Join("testdata", "rules")}}
	langs, err := filepath.Glob("../../lang/*/testdata/policy.txtar")
	if err != nil {
		t.Fatal(err)
	}
	if len(langs) == 0 {
		t.Fatal("no lang/*/testdata/policy.txtar: the languages' policy cases are missing")
	}
	for _, p := range langs {
		out = append(out, corpus{txtar: p, base: filepath.Join(filepath.Dir(p), "policy")})
	}
	return out
}

// mustLines are a txtar comment's findings for a golden mode, as
// "action file:line rule": its "must: " lines (every mode) and its
// "must(mode): " lines.
func mustLines(comment []byte, mode string) []string {
	var out []string
	for _, l := range strings.Split(string(comment), "\n") {
		m, ok := strings.CutPrefix(l, "must: ")
		if !ok {
			m, ok = strings.CutPrefix(l, "must("+mode+"): ")
		}
		if ok {
			out = append(out, strings.TrimSpace(m))
		}
	}
	return out
}

func TestRulesGolden(t *testing.T) {
	// python-server is python-ast through one persistent PythonParser: the
	// same findings, the same golden file.
	for _, mode := range []string{"python-ast", "python-server", "scanner"} {
		t.Run(mode, func(t *testing.T) {
			opts := &Options{IsTest: func(p string) bool { return strings.HasPrefix(p, "ok_test_") }}
			golden := mode
			switch mode {
			case "scanner":
				opts.Python = "/nonexistent/python3"
			case "python-server":
				golden = "python-ast"
				opts.Parser = requireParser(t)
			}
			c, err := New(config.Policy{}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if mode == "scanner" {
				c.python = ""
				t.Setenv("PATH", t.TempDir())
			}
			for _, cp := range corpora(t) {
				ar, err := txtar.ParseFile(cp.txtar)
				if err != nil {
					t.Fatal(err)
				}
				var sb strings.Builder
				hits := map[string]bool{}
				for _, f := range ar.Files {
					fs, err := c.Check(t.Context(), f.Name, f.Data)
					if err != nil {
						t.Fatalf("Check(%s): %v", f.Name, err)
					}
					// The token scanner cannot tell a file that does not parse.
					fallbackBlind := mode == "scanner" && strings.HasPrefix(f.Name, "ok_syntax_error.")
					if strings.HasPrefix(f.Name, "ok_") && len(fs) > 0 && !fallbackBlind {
						t.Errorf("%s: Check(%s) = %v, want no findings (false positive)", cp.txtar, f.Name, fs)
					}
					fmt.Fprintf(&sb, "-- %s --\n", f.Name)
					for _, x := range fs {
						fmt.Fprintf(&sb, "%s %s\n", x.Action, x)
						hits[fmt.Sprintf("%s %s:%d %s", x.Action, f.Name, x.Line, x.Rule)] = true
					}
				}
				// Independent of the golden file, which -update rewrites: the
				// hits every mode must keep (a rule that stops firing cannot
				// be blessed by re-running -update).
				must := mustLines(ar.Comment, golden)
				if len(must) == 0 && slices.ContainsFunc(ar.Files, func(f txtar.File) bool { return !strings.HasPrefix(f.Name, "ok_") }) {
					t.Errorf("%s: no findings to check apart from its golden file (must: lines)", cp.txtar)
				}
				for _, want := range must {
					if !hits[want] {
						t.Errorf("%s: %s: no finding %q (action file:line rule)", mode, cp.txtar, want)
					}
				}
				gf, own := cp.golden(golden)
				if *update && mode == "python-ast" || *update && mode == "scanner" && own {
					if err := os.WriteFile(gf, []byte(sb.String()), 0o644); err != nil {
						t.Fatal(err)
					}
				}
				want, err := os.ReadFile(gf)
				if err != nil {
					t.Fatal(err)
				}
				if sb.String() != string(want) {
					t.Errorf("findings differ from %s (run with -update):\n%s", gf, sb.String())
				}
			}
		})
	}
}

func TestEveryRuleHasAGoldenHit(t *testing.T) {
	var want []byte
	for _, cp := range corpora(t) {
		gf, _ := cp.golden("python-ast")
		b, err := os.ReadFile(gf)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, b...)
	}
	for _, r := range Rules() {
		if !strings.Contains(string(want), "("+r.Name+")") {
			t.Errorf("rule %s has no case in testdata/rules.txtar or its language's lang/*/testdata/policy.txtar", r.Name)
		}
	}
}

func TestRuleActions(t *testing.T) {
	src := []byte("import subprocess\nimport shutil\nshutil.rmtree(d)\n")
	tests := []struct {
		name      string
		rules     map[string]string
		wantBlock int
		wantAll   int
	}{
		{name: "defaults", wantBlock: 1, wantAll: 2},
		{name: "subprocess off", rules: map[string]string{"python.subprocess": "off"}, wantBlock: 0, wantAll: 1},
		{name: "rmtree block", rules: map[string]string{"python.shutil-rmtree": "block"}, wantBlock: 2, wantAll: 2},
		{name: "subprocess warn", rules: map[string]string{"python.subprocess": "warn"}, wantBlock: 0, wantAll: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := New(config.Policy{Rules: tt.rules}, nil)
			if err != nil {
				t.Fatal(err)
			}
			fs, err := c.Check(t.Context(), "x.py", src)
			if err != nil {
				t.Fatal(err)
			}
			if len(fs) != tt.wantAll || len(fs.Blocked()) != tt.wantBlock {
				t.Errorf("Check = %v, want %d findings, %d blocked", fs, tt.wantAll, tt.wantBlock)
			}
			if tt.wantBlock > 0 && !strings.Contains(fs.Feedback(), "blocked by project policy: importing subprocess is not allowed") {
				t.Errorf("Feedback() = %q", fs.Feedback())
			}
		})
	}
	if _, err := New(config.Policy{Rules: map[string]string{"python.nope": "off"}}, nil); err == nil || !strings.Contains(err.Error(), "python.nope") {
		t.Errorf("New with unknown rule: err = %v, want one naming the rule", err)
	}
}

func TestDepsAdded(t *testing.T) {
	before := &sandbox.Snapshot{Files: map[string]sandbox.File{
		"go.mod":           {Data: []byte("module x\n\ngo 1.22\n\nrequire github.com/a/b v1.0.0\n")},
		"requirements.txt": {Data: []byte("requests==2.0\n")},
		"package.json":     {Data: []byte(`{"dependencies":{"left-pad":"1.0.0"}}`)},
	}}
	after := before.With(map[string][]byte{
		"go.mod":           []byte("module x\n\ngo 1.22\n\nrequire (\n\tgithub.com/a/b v1.0.0\n\tgolang.org/x/text v0.3.0\n)\n"),
		"requirements.txt": []byte("requests==2.0\n# comment\nnumpy>=1.0\n"),
		"package.json":     []byte(`{"dependencies":{"left-pad":"1.0.0"},"devDependencies":{"lodash":"4"}}`),
		"pyproject.toml":   []byte("[project]\nname = \"x\"\ndependencies = [\"attrs>=1\", 'rich']\n"),
	})
	got := DepsAdded(before, after)
	var names []string
	for _, d := range got {
		names = append(names, d.String())
	}
	want := "go:golang.org/x/text npm:lodash python:attrs python:numpy python:rich"
	if strings.Join(names, " ") != want {
		t.Errorf("DepsAdded = %v, want %s", names, want)
	}
	ok, need := Allowed(got, []string{"numpy", "npm:lodash"})
	if len(ok) != 2 || len(need) != 3 {
		t.Errorf("Allowed = %v, %v; want 2 allowed, 3 needing approval", ok, need)
	}
}

// Per-use rules judge what an edit adds: a CLI package that already exits,
// or prints a status that looks like a runner's, stays editable; one more
// such use, or a use of another kind, is still blocked.
func TestAddedKeepsTheUsersOwnFindings(t *testing.T) {
	c, err := New(config.Policy{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	user := "package cli\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\nfunc Main() {\n\tfmt.Println(\"3 passed\")\n\tos.Exit(run())\n}\n"
	tests := []struct {
		name, edited string
		want         []string // rules of the findings that remain
	}{
		{name: "an unrelated edit", edited: strings.Replace(user, "func Main() {", "// Main runs the tool.\nfunc Main() {", 1)},
		{name: "a second exit", edited: strings.Replace(user, "\tos.Exit(run())\n", "\tos.Exit(run())\n\tos.Exit(0)\n", 1), want: []string{"go.exit"}},
		{name: "framed output added", edited: strings.Replace(user, "\"3 passed\"", "\"3 passed\", \"\\x16--- PASS: TestX\"", 1), want: []string{"go.runner-output", "go.runner-output"}},
		{name: "an init exit is never the user's", edited: user + "\nfunc init() { os.Exit(0) }\n", want: []string{"go.init-exit"}},
	}
	before, err := c.Check(t.Context(), "cli/cli.go", []byte(user))
	if err != nil || len(before) != 2 {
		t.Fatalf("Check(user's file) = %v, %v; want its go.exit and go.runner-output", before, err)
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			after, err := c.Check(t.Context(), "cli/cli.go", []byte(tt.edited))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, f := range c.Added(before, after) {
				got = append(got, f.Rule)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("Added = %v, want %v", got, tt.want)
			}
		})
	}
}

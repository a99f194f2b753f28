package ruby_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/lang/ruby"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

func snap(files map[string]string) *sandbox.Snapshot {
	s := &sandbox.Snapshot{Files: map[string]sandbox.File{}}
	for p, c := range files {
		s.Files[p] = sandbox.File{Data: []byte(c)}
	}
	return s
}

// Ruby is detected by its minitest files, through the registry, without
// taking JavaScript apps that carry a Gemfile.
func TestDetect(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"minitest project", map[string]string{"Gemfile": "", "lib/calc.rb": "", "test/calc_test.rb": ""}, "ruby"},
		{"test_ prefix, no Gemfile", map[string]string{"test/test_calc.rb": ""}, "ruby"},
		{"rails app with a package.json", map[string]string{"package.json": "{}", "test/models/user_test.rb": ""}, "ruby"},
		{"react native app with a Gemfile", map[string]string{"package.json": `{"scripts":{"test":"jest"}}`, "Gemfile": "gem 'cocoapods'"}, "node"},
		{"go module with a ruby script", map[string]string{"go.mod": "module m\n", "test/gen_test.rb": ""}, "go"},
	}
	for _, tt := range tests {
		if got := registry.Name(snap(tt.files)); got != tt.want {
			t.Errorf("%s: registry.Name = %q, want %q", tt.name, got, tt.want)
		}
	}
}

func TestRequirement(t *testing.T) {
	l := ruby.Language{}
	for files, want := range map[*map[string]string]string{
		{".ruby-version": "ruby-3.1.2\n"}:                       "ruby >= 3.1.2 (from .ruby-version)",
		{"Gemfile": "source 'x'\nruby '3.2.0'\n"}:               "ruby >= 3.2.0 (from Gemfile (ruby))",
		{"Gemfile": "source 'x'\n", "test/a_test.rb": ""}:       "",
		{".ruby-version": "3.1.2", "Gemfile": "ruby '9.9.9'\n"}: "ruby >= 3.1.2 (from .ruby-version)",
	} {
		req, err := l.Requirement(snap(*files))
		got := ""
		if req != nil {
			got = req.String()
		}
		if err != nil || got != want {
			t.Errorf("Requirement(%v) = %q, %v; want %q", *files, got, err, want)
		}
	}
	v, err := l.ParseVersion("ruby 3.1.2p20 (2022-04-12 revision 4491bb740a) [x86_64-linux-gnu]\n")
	if err != nil || v.String() != "3.1.2" {
		t.Errorf("ParseVersion = %v, %v", v, err)
	}
}

func TestSources(t *testing.T) {
	src := "require \"calc/util\"\nrequire_relative 'helper'\nrequire 'json'\n\nmodule Calc\n  class Stats < Base\n    def self.mean(xs)\n      xs.sum / xs.size\n    end\n\n    def median xs\n    end\n  end\nend\n"
	s := snap(map[string]string{"lib/calc.rb": src, "lib/calc/util.rb": "", "lib/helper.rb": ""})
	l := ruby.Language{}
	want := []string{"module Calc", "class Stats < Base", "def self.mean(xs)", "def median xs"}
	if got := l.Symbols("lib/calc.rb", []byte(src)); !slices.Equal(got, want) {
		t.Errorf("Symbols = %q, want %q", got, want)
	}
	if got := l.Symbols("calc.py", []byte(src)); got != nil {
		t.Errorf("Symbols(calc.py) = %q, want nil", got)
	}
	files, _ := l.LocalImports(s, "lib/calc.rb")
	if !slices.Equal(files, []string{"lib/calc/util.rb", "lib/helper.rb"}) {
		t.Errorf("LocalImports = %q", files)
	}
}

// The policy rules by attack class: patching minitest by name and by a
// computed name, exiting around its report, rewriting the output, and
// imitating its lines; none of them in ordinary code.
func TestPolicy(t *testing.T) {
	tests := []struct {
		name, src, rule string // rule "" wants no finding
	}{
		{"reopen Minitest::Test", "class Minitest::Test\n  def run; end\nend\n", "ruby.minitest-patch"},
		{"reopen module Minitest", "module Minitest\n  def self.run(*) = true\nend\n", "ruby.minitest-patch"},
		{"prepend to the reporter", "Minitest::SummaryReporter.prepend(Green)\n", "ruby.minitest-patch"},
		{"after_run hook", "Minitest.after_run { exit 0 }\n", "ruby.minitest-patch"},
		{"computed constant", "Object.const_get(\"Minitest\")::Test\n", "ruby.minitest-patch"},
		{"computed constant, split", "Object.const_get('Mini' + 'test')\n", "ruby.minitest-patch"},
		{"exit!", "def add(a, b)\n  exit!(0)\nend\n", "ruby.exit"},
		{"at_exit", "at_exit { puts 'ok' }\n", "ruby.exit"},
		{"stdout reopened", "$stdout.reopen('/dev/null')\n", "ruby.exit"},
		{"stdout replaced", "$stdout = StringIO.new\n", "ruby.exit"},
		{"fd 1", "IO.new(1, 'w').write('x')\n", "ruby.exit"},
		{"minitest line", "puts 'CalcTest#test_add = 0.00 s = .'\n", "ruby.runner-output"},
		{"minitest summary", "puts \"3 runs, 3 assertions, 0 failures, 0 errors, 0 skips\"\n", "ruby.runner-output"},
		{"report path", "File.write('.fixpoint/x', '')\n", "ruby.report-write"},
		{"send a computed name", "Kernel.send(name, 0)\n", "ruby.eval"},
		{"ordinary code", "module Calc\n  def self.add(a, b)\n    a + b\n  end\nend\n", ""},
		{"ordinary comparison", "return $stdout == x\n", ""},
	}
	l := ruby.Language{}
	for _, tt := range tests {
		got, err := l.CheckPolicy(t.Context(), "lib/calc.rb", []byte(tt.src), lang.PolicyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var rules []string
		for _, f := range got {
			rules = append(rules, f.Rule)
		}
		if tt.rule == "" && len(got) > 0 || tt.rule != "" && !slices.Contains(rules, tt.rule) {
			t.Errorf("%s: CheckPolicy = %v, want %q", tt.name, rules, tt.rule)
		}
	}
	if got, _ := l.CheckPolicy(t.Context(), "lib/calc.py", []byte("exit!"), lang.PolicyOptions{}); got != nil {
		t.Errorf("CheckPolicy(.py) = %v, want nil", got)
	}
}

func TestTestFiles(t *testing.T) {
	l := ruby.Language{}
	for p, want := range map[string]bool{"test/calc_test.rb": true, "test/test_helper.rb": true, "spec/a_spec.rb": true, "lib/calc.rb": false, "test/x.py": false} {
		if got := l.IsTestFile(p); got != want {
			t.Errorf("IsTestFile(%s) = %v", p, got)
		}
	}
	for _, p := range []string{"test/test_helper.rb", "Rakefile", "lib/tasks/test.rake", ".ruby-version"} {
		if l.TestInfra(p, nil, []byte("x")) == "" {
			t.Errorf("TestInfra(%s) = \"\", want a reason", p)
		}
	}
	if why := l.TestInfra("lib/calc.rb", nil, nil); why != "" {
		t.Errorf("TestInfra(lib/calc.rb) = %q", why)
	}
	n := l.Notes(snap(map[string]string{"Gemfile.lock": "GEM\n  specs:\n    minitest (5.15.0)\n    nokogiri (1.15.0)\n"}))
	if len(n) != 1 || !strings.Contains(n[0], "nokogiri") || strings.Contains(n[0], "minitest,") {
		t.Errorf("Notes = %q, want nokogiri named", n)
	}
}

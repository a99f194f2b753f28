// Package ruby is fixpoint's knowledge of Ruby projects tested with
// minitest: detection (minitest test files under test/), the runtime
// requirement (.ruby-version, the Gemfile's ruby line), the test command
// (Debian's ruby with its bundled minitest, no bundler: nothing is
// installed, the sandbox has no network for gems), minitest's verbose
// output as a result format ([Format]), the test files and test
// infrastructure, repo-map symbols and require resolution, the policy
// rules for model-written Ruby, the image recipe and the editors' names.
//
// Everything fixpoint knows about Ruby is in this folder; the rest of
// fixpoint asks it through lang/registry. Adding it takes one line there
// (registry.All) and `go generate ./editors`, which writes its editor
// names into the recipes; TestRubyLivesInItsFolder fails when a file
// outside this folder, other than those and the docs, mentions Ruby.
package ruby

import (
	"fmt"
	"path"
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// Language is Ruby. The zero value is ready to use.
type Language struct{}

// The optional interfaces of package lang that Ruby implements.
var (
	_ lang.Language      = Language{}
	_ lang.ResultFormats = Language{}
	_ lang.TestFiles     = Language{}
	_ lang.Sources       = Language{}
	_ lang.Policy        = Language{}
	_ lang.RuntimeHelp   = Language{}
	_ lang.Notes         = Language{}
	_ lang.Editors       = Language{}
	_ lang.HostPackages  = Language{}
)

func (Language) Name() string             { return "ruby" }
func (Language) VersionCommand() []string { return []string{"ruby", "--version"} }

var rubyVersionOut = regexp.MustCompile(`\bruby ([0-9]+\.[0-9]+\.[0-9]+)`)

// ParseVersion reads `ruby --version` output ("ruby 3.1.2p20 (...)").
func (Language) ParseVersion(out string) (lang.Version, error) {
	m := rubyVersionOut.FindStringSubmatch(out)
	if m == nil {
		return lang.Version{}, fmt.Errorf("no ruby version in %q", strings.TrimSpace(out))
	}
	return lang.ParseVersion(m[1])
}

// Detect reports a project with minitest test files (test/**/*_test.rb
// or test_*.rb). A Gemfile alone is not enough: a React Native app
// carries one for CocoaPods, and its tests are JavaScript.
func (Language) Detect(snap *sandbox.Snapshot) bool {
	for _, p := range snap.Paths() {
		if isMinitestFile(p) {
			return true
		}
	}
	return false
}

// isMinitestFile reports a test file the test command loads.
func isMinitestFile(p string) bool {
	if !strings.HasPrefix(p, "test/") || path.Ext(p) != ".rb" || strings.Contains(p, "/vendor/") {
		return false
	}
	base := path.Base(p)
	return strings.HasSuffix(base, "_test.rb") || strings.HasPrefix(base, "test_")
}

var gemfileRubyRe = regexp.MustCompile(`(?m)^\s*ruby\s+["']([0-9][0-9.]*)["']`)

// Requirement reads the Ruby version a project asks for, as a minimum:
// .ruby-version ("3.1.2", "ruby-3.1.2"), else the Gemfile's ruby line.
func (Language) Requirement(snap *sandbox.Snapshot) (*lang.Requirement, error) {
	v, src := "", ""
	if text, ok := snap.Text(".ruby-version"); ok {
		v, src = strings.TrimPrefix(strings.TrimSpace(text), "ruby-"), ".ruby-version"
	} else if text, ok := snap.Text("Gemfile"); ok {
		if m := gemfileRubyRe.FindStringSubmatch(text); m != nil {
			v, src = m[1], "Gemfile (ruby)"
		}
	}
	if v == "" {
		return nil, nil
	}
	ver, err := lang.ParseVersion(v)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	return &lang.Requirement{Runtime: "ruby", Constraint: ">= " + v, Source: src, Range: lang.AtLeast(ver)}, nil
}

// RuntimeFix says how to get a Ruby that satisfies req.
func (Language) RuntimeFix(req *lang.Requirement) string {
	return "fixpoint-sandbox-ruby has Debian's ruby and nothing can be downloaded; change " + req.Source +
		", or set [sandbox] image (or sandbox.dockerfile) to an image with a matching Ruby"
}

// SetupStep is nil: the tests run on the image's ruby and the gems it
// bundles (minitest, rake, test-unit); bundler never runs, so nothing is
// fetched.
func (Language) SetupStep(*sandbox.Snapshot) *lang.Setup { return nil }

// Notes says which gems of Gemfile.lock the sandbox does not have.
func (Language) Notes(snap *sandbox.Snapshot) []string {
	lock, ok := snap.Text("Gemfile.lock")
	if !ok {
		return nil
	}
	var missing []string
	for _, g := range lockedGems(lock) {
		if !bundled[g] {
			missing = append(missing, g)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("Gemfile.lock lists gems the sandbox does not install (no network; bundler is not run): %s. "+
		"Tests that require them fail with LoadError; set [sandbox] image to an image that has them.", strings.Join(missing, ", "))}
}

// bundled are the gems Debian's ruby ships with.
var bundled = map[string]bool{"minitest": true, "rake": true, "test-unit": true, "power_assert": true, "bundler": true}

var lockGemRe = regexp.MustCompile(`(?m)^    ([A-Za-z0-9_.-]+) \(`)

// lockedGems lists the gems of a Gemfile.lock's specs.
func lockedGems(lock string) []string {
	var out []string
	for _, m := range lockGemRe.FindAllStringSubmatch(lock, -1) {
		out = append(out, m[1])
	}
	return out
}

// loadTests is the Ruby the test command runs: minitest verbose (a line
// per test, written before the test runs, so that a test that never ends
// is named), output unbuffered (a killed run keeps what it printed), then
// every test file, sorted, as minitest's rake task would.
const loadTests = `$stdout.sync = $stderr.sync = true; ARGV.replace(%w[-v]); require "minitest/autorun"; ` +
	`Dir.glob("test/**/{*_test,test_*}.rb").sort.each { |f| require File.expand_path(f) }`

// TestCommand runs every minitest file with lib/ and test/ on the load
// path, read by [Format].
func (Language) TestCommand(*sandbox.Snapshot) testrun.Runner {
	return testrun.Runner{Name: Format.Name, Args: []string{"ruby", "-Ilib", "-Itest", "-e", loadTests}, Format: Format}
}

// TestFormats is minitest's format ([lang.ResultFormats]).
func (Language) TestFormats() []*testrun.Format { return []*testrun.Format{Format} }

// Image is Debian bookworm's ruby (3.1, with minitest bundled).
func (Language) Image() lang.Image {
	return lang.Image{Extra: []string{"ruby"}}
}

// EditorNames implements lang.Editors.
func (Language) EditorNames() lang.EditorNames {
	return lang.EditorNames{
		VSCode:      []string{"ruby"},
		Helix:       []string{"ruby"},
		Zed:         []string{"Ruby"},
		Emacs:       []string{"ruby-mode", "ruby-ts-mode"},
		RootMarkers: []string{"Gemfile"},
		HelixServer: "ruby-lsp",
		ZedServer:   "ruby-lsp",
	}
}

// HostPackages implements lang.HostPackages: the bwrap e2e test
// (e2e_bwrap_test.go) runs the host's ruby, Debian's 3.1 with minitest
// bundled.
func (Language) HostPackages() []lang.HostPackage {
	return []lang.HostPackage{{Command: "ruby", Package: "ruby"}}
}

// Package registry declares the languages fixpoint knows, once, and asks
// them on behalf of the rest of fixpoint: sandbox, agent, memory and cmd
// call these functions instead of comparing language names. Adding a
// language is a new folder under lang/ plus one line in [All].
package registry

import (
	"regexp"
	"slices"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/golang"
	"github.com/fixpoint-dev/fixpoint/lang/node"
	"github.com/fixpoint-dev/fixpoint/lang/python"
	"github.com/fixpoint-dev/fixpoint/lang/ruby"
	"github.com/fixpoint-dev/fixpoint/lang/rust"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// All returns every language, in detection order: a Go module with a
// package.json for tooling is a Go project, a Node project with helper
// scripts in Python is a Node project. A crate with a package.json (a
// wasm-pack project) or Python scripts is a Rust project: cargo's output
// is also told apart before node's, whose stack-frame pattern matches the
// paths in a Rust backtrace. A Ruby project is told by its minitest
// files, so a JavaScript app with a Gemfile (React Native's, for
// CocoaPods) stays a Node project, and a Ruby one with a package.json a
// Ruby project.
func All() []lang.Language {
	return []lang.Language{golang.Language{}, rust.Language{}, ruby.Language{}, node.Language{}, python.Language{}}
}

// Fallback is the language whose image runs a workspace in no known
// language (sandbox/backends.SpecFor's fallback): Python's image has a
// shell, git and python3, what a configured test command ("make test", a
// script) most often calls. Only its image is used, not its knowledge.
func Fallback() lang.Language { return python.Language{} }

// Detect returns the language of snap, or nil.
func Detect(snap *sandbox.Snapshot) lang.Language {
	if snap == nil {
		return nil
	}
	for _, l := range All() {
		if l.Detect(snap) {
			return l
		}
	}
	// No root manifest: a project in a sub-directory ([lang.Nested]).
	for _, l := range All() {
		if n, ok := l.(lang.Nested); ok && n.DetectNested(snap) {
			return l
		}
	}
	return nil
}

// Name is the name of snap's language, or "" when none is detected.
func Name(snap *sandbox.Snapshot) string {
	if l := Detect(snap); l != nil {
		return l.Name()
	}
	return ""
}

// ByName returns the language called name, or nil.
func ByName(name string) lang.Language {
	for _, l := range All() {
		if l.Name() == name {
			return l
		}
	}
	return nil
}

// Names lists the languages' names in registry order.
func Names() []string {
	var out []string
	for _, l := range All() {
		out = append(out, l.Name())
	}
	return out
}

// TestCommand chooses the test command for a workspace. A non-empty
// override (the config's test_cmd, shell words with quotes) always wins
// and gives a [testrun.Custom] runner whose output is recognised by
// sniffing. Otherwise the detected language's command
// ([lang.Language.TestCommand]); a workspace in no known language gets
// testrun.RunnerCustom with no Args.
func TestCommand(snap *sandbox.Snapshot, override string) testrun.Runner {
	return TestCommandFor(Detect(snap), snap, override)
}

// TestCommandFor is [TestCommand] for snap in the language l, detected
// before (nil: none): a caller that detected once passes it down.
func TestCommandFor(l lang.Language, snap *sandbox.Snapshot, override string) testrun.Runner {
	if strings.TrimSpace(override) != "" {
		if r, ok := configuredRunner(l, snap, override); ok {
			return r
		}
		return testrun.Custom(override, Formats())
	}
	if l != nil {
		return l.TestCommand(snap)
	}
	return testrun.Runner{Name: testrun.RunnerCustom, Formats: Formats()}
}

// assignmentRe is a shell environment assignment word (NAME=value).
var assignmentRe = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)

// configuredRunner asks the languages ([lang.ConfiguredRunners]), the
// detected one first, whether override is their runner, after taking off
// leading environment assignments (`env A=1 B=2`, `A=1`), which go to the
// runner's Env. A command with shell syntax (pipes, lists, variables) or
// env options (-i, -u) stays a custom command.
func configuredRunner(l lang.Language, snap *sandbox.Snapshot, override string) (testrun.Runner, bool) {
	if testrun.HasShellSyntax(override) {
		return testrun.Runner{}, false
	}
	words, err := testrun.SplitWords(override)
	if err != nil || len(words) == 0 {
		return testrun.Runner{}, false
	}
	if words[0] == "env" {
		words = words[1:]
	}
	var env []string
	for len(words) > 0 && assignmentRe.MatchString(words[0]) {
		env, words = append(env, words[0]), words[1:]
	}
	if len(words) == 0 || strings.HasPrefix(words[0], "-") {
		return testrun.Runner{}, false
	}
	langs := All()
	if l != nil {
		langs = append([]lang.Language{l}, langs...)
	}
	for _, c := range langs {
		if cr, ok := c.(lang.ConfiguredRunners); ok {
			if r, ok := cr.ConfiguredRunner(snap, words); ok {
				// The command's own variables win over the runner's
				// (`CGO_ENABLED=0 go test` over go's default): the
				// runner's copy of a key the command sets is dropped,
				// so no exec layer has two values to choose from.
				r.Env = slices.DeleteFunc(r.Env, func(e string) bool {
					k, _, _ := strings.Cut(e, "=")
					return slices.ContainsFunc(env, func(c string) bool { return strings.HasPrefix(c, k+"=") })
				})
				r.Env = append(r.Env, env...)
				return r, true
			}
		}
	}
	return testrun.Runner{}, false
}

// Formats lists the result formats of every language
// ([lang.ResultFormats]), in registry order: those a configured test
// command's output is recognised among.
func Formats() []*testrun.Format {
	var out []*testrun.Format
	for _, l := range All() {
		if f, ok := l.(lang.ResultFormats); ok {
			out = append(out, f.TestFormats()...)
		}
	}
	return out
}

// ProtectedFile says what kind of protected file rel (a workspace-
// relative slash path, lower-cased) is for any language
// ([lang.ProtectedFiles]), or "".
func ProtectedFile(rel string) string {
	for _, l := range All() {
		if p, ok := l.(lang.ProtectedFiles); ok {
			if kind := p.ProtectedFile(rel); kind != "" {
				return kind
			}
		}
	}
	return ""
}

// GeneratedDir reports whether a directory name is one a language's tools
// make in a project ([lang.ProjectDirs]).
func GeneratedDir(name string) bool {
	for _, l := range All() {
		if d, ok := l.(lang.ProjectDirs); ok && slices.Contains(d.GeneratedDirs(), name) {
			return true
		}
	}
	return false
}

// GeneratedDirs lists the directory names every language's tools make
// ([lang.ProjectDirs]), for sandbox.SnapshotOptions.GeneratedDirs (a
// project Dockerfile's build context leaves them out).
func GeneratedDirs() []string {
	var out []string
	for _, l := range All() {
		if d, ok := l.(lang.ProjectDirs); ok {
			out = append(out, d.GeneratedDirs()...)
		}
	}
	return out
}

// CacheDirs lists the languages' interpreter caches ([lang.CacheDirs]),
// for sandbox.SnapshotOptions.SkipDirs (no snapshot enters them).
func CacheDirs() []string {
	var out []string
	for _, l := range All() {
		if d, ok := l.(lang.CacheDirs); ok {
			out = append(out, d.CacheDirs()...)
		}
	}
	return out
}

// Symbols lists the top-level declarations of a source file, from the
// language whose file it is ([lang.Sources]); nil for other files.
func Symbols(p string, data []byte) []string {
	for _, l := range All() {
		if s, ok := l.(lang.Sources); ok {
			if out := s.Symbols(p, data); out != nil {
				return out
			}
		}
	}
	return nil
}

// LocalImports resolves what file p imports from the workspace, asking
// every language ([lang.Sources]).
func LocalImports(snap *sandbox.Snapshot, p string) (files, dirs []string) {
	for _, l := range All() {
		if s, ok := l.(lang.Sources); ok {
			f, d := s.LocalImports(snap, p)
			files, dirs = append(files, f...), append(dirs, d...)
		}
	}
	return files, dirs
}

// OtherPlatform reports whether a source file is built only for other
// platforms than the sandbox's ([lang.Platforms]).
func OtherPlatform(p string, data []byte) bool {
	for _, l := range All() {
		if pl, ok := l.(lang.Platforms); ok && pl.OtherPlatform(p, data) {
			return true
		}
	}
	return false
}

// OtherPlatformLines returns the line ranges of a source file that only
// other platforms than the sandbox's run ([lang.PlatformBranches]).
func OtherPlatformLines(p string, data []byte) [][2]int {
	for _, l := range All() {
		if pb, ok := l.(lang.PlatformBranches); ok {
			if rs := pb.OtherPlatformLines(p, data); rs != nil {
				return rs
			}
		}
	}
	return nil
}

// ImportAliases maps the local names a source file gives what it imports
// to the names they are declared under ([lang.ImportAliases]); nil when
// no language knows the file or it renames nothing.
func ImportAliases(p string, data []byte) map[string]string {
	for _, l := range All() {
		if a, ok := l.(lang.ImportAliases); ok {
			if m := a.ImportAliases(p, data); len(m) > 0 {
				return m
			}
		}
	}
	return nil
}

// TestHelperFiles lists the files whose declarations test file p calls
// without importing them ([lang.TestHelpers]).
func TestHelperFiles(snap *sandbox.Snapshot, p string) []string {
	var out []string
	for _, l := range All() {
		if h, ok := l.(lang.TestHelpers); ok {
			out = append(out, h.TestHelperFiles(snap, p)...)
		}
	}
	return out
}

// TestSetupNames are the names of every language's test setup methods
// and hooks ([lang.TestSetup]).
func TestSetupNames() map[string]bool {
	out := map[string]bool{}
	for _, l := range All() {
		if t, ok := l.(lang.TestSetup); ok {
			for _, n := range t.TestSetupNames() {
				out[n] = true
			}
		}
	}
	return out
}

// HeaderLines returns how many of the first lines of a source file are
// its header: package clause, imports, crate attributes
// ([lang.Headers]); 0 when no language knows the file.
func HeaderLines(p string, data []byte) int {
	for _, l := range All() {
		if h, ok := l.(lang.Headers); ok {
			if n := h.HeaderLines(p, data); n > 0 {
				return n
			}
		}
	}
	return 0
}

// FooterLines is the number of last lines of source file p that are its
// footer by any language that knows the file ([lang.Footers]), 0 none.
func FooterLines(p string, data []byte) int {
	for _, l := range All() {
		if h, ok := l.(lang.Footers); ok {
			if n := h.FooterLines(p, data); n > 0 {
				return n
			}
		}
	}
	return 0
}

// MissingNames is the names message says are missing by any language
// ([lang.MissingNames]), each once.
func MissingNames(message string) []string {
	var out []string
	for _, l := range All() {
		if m, ok := l.(lang.MissingNames); ok {
			for _, n := range m.MissingNames(message) {
				if !slices.Contains(out, n) {
					out = append(out, n)
				}
			}
		}
	}
	return out
}

// DataDecl reports whether line, which starts a declaration in source
// file p, declares data by any language that knows the file
// ([lang.DataDecls]).
func DataDecl(p, line string) bool {
	for _, l := range All() {
		if d, ok := l.(lang.DataDecls); ok && d.DataDecl(p, line) {
			return true
		}
	}
	return false
}

// PropertyHint is the solve-mode hint on property-based tests of the
// language called name ([lang.Prompter]); "" when it has none.
func PropertyHint(name string) string {
	if p, ok := ByName(name).(lang.Prompter); ok {
		return p.PropertyHint()
	}
	return ""
}

// IsTestFile reports whether a workspace-relative slash path is a test
// file: under a test directory ([lang.InTestDir]) or a test file by the
// naming convention of any language ([lang.TestFiles]) — a Go workspace
// may hold JavaScript tests.
func IsTestFile(p string) bool {
	if lang.InTestDir(p) {
		return true
	}
	for _, l := range All() {
		if t, ok := l.(lang.TestFiles); ok && t.IsTestFile(p) {
			return true
		}
	}
	return false
}

// TestInfra explains why a new, changed or deleted file is test
// infrastructure (test data, test snapshots, or what a language's
// [lang.TestFiles] says), or returns "". before or after is nil when the
// file did not exist or is deleted.
func TestInfra(p string, before, after []byte) string {
	if lang.InTestData(p) {
		return "is test data (under testdata/)"
	}
	if lang.IsSnapshot(p) {
		return "is a test snapshot (the output the tests compare against)"
	}
	for _, l := range All() {
		if t, ok := l.(lang.TestFiles); ok {
			if why := t.TestInfra(p, before, after); why != "" {
				return why
			}
		}
	}
	return ""
}

// TestCode holds one expression per kind of test code, each joining the
// alternatives of every language ([lang.TestPatterns]).
type TestCode struct {
	Funcs, Asserts, Skips *regexp.Regexp
}

// TestCodePatterns compiles the languages' test patterns. Callers keep the
// result: the list of languages does not change while fixpoint runs.
func TestCodePatterns() TestCode {
	var funcs, asserts, skips []string
	for _, l := range All() {
		t, ok := l.(lang.TestFiles)
		if !ok {
			continue
		}
		p := t.TestPatterns()
		for _, x := range []struct {
			dst *[]string
			re  string
		}{{&funcs, p.Funcs}, {&asserts, p.Asserts}, {&skips, p.Skips}} {
			if x.re != "" {
				*x.dst = append(*x.dst, x.re)
			}
		}
	}
	union := func(alts []string) *regexp.Regexp {
		if len(alts) == 0 {
			return regexp.MustCompile(`[^\s\S]`) // matches nothing
		}
		return regexp.MustCompile(`(?m)` + strings.Join(alts, "|"))
	}
	return TestCode{Funcs: union(funcs), Asserts: union(asserts), Skips: union(skips)}
}

// ByAlias returns the language called name or one of its aliases
// ([lang.FailureReader]: "golang", "typescript"), ignoring case; nil when
// none is.
func ByAlias(name string) lang.Language {
	name = strings.ToLower(name)
	if name == "" {
		return nil
	}
	for _, l := range All() {
		if l.Name() == name {
			return l
		}
		if r, ok := l.(lang.FailureReader); ok && slices.Contains(r.Aliases(), name) {
			return l
		}
	}
	return nil
}

// FailureOf returns the language whose failure output raw looks like
// ([lang.FailureReader]), or nil.
func FailureOf(raw string) lang.Language {
	for _, l := range All() {
		if r, ok := l.(lang.FailureReader); ok && r.LooksLike(raw) {
			return l
		}
	}
	return nil
}

// SetupChanges lists what the edit from before to after changes in what
// the setup phase executes or downloads, asking every language
// ([lang.SetupChanges]): a Go workspace's package.json scripts count too,
// since a later edit may make it a Node project.
func SetupChanges(before, after *sandbox.Snapshot, changed []string) []lang.SetupChange {
	var out []lang.SetupChange
	for _, l := range All() {
		if s, ok := l.(lang.SetupChanges); ok {
			out = append(out, s.SetupChanges(before, after, changed)...)
		}
	}
	return out
}

// HostPackages lists the Debian packages the languages' host-toolchain
// tests need ([lang.HostPackages]), in registry order.
func HostPackages() []lang.HostPackage {
	var out []lang.HostPackage
	for _, l := range All() {
		if h, ok := l.(lang.HostPackages); ok {
			out = append(out, h.HostPackages()...)
		}
	}
	return out
}

// Package lang holds what fixpoint knows about each language, one folder
// per language (lang/golang, lang/node, lang/python, lang/rust, ...), behind the
// [Language] interface. The list of languages is declared once, in
// lang/registry; sandbox, agent and memory ask lang/registry instead of
// comparing language names.
//
// # What a new language implements
//
// Adding a language is a new folder lang/<name> with a type implementing
// [Language], plus one line in registry.All. [Language] is required:
//
//   - Name: the short name ("go"), also the image suffix
//     (fixpoint-sandbox-<name>) and the runtime name in a [Requirement].
//   - Detect: whether a workspace [sandbox.Snapshot] is a project in it.
//     registry.Detect asks the languages in registry order.
//   - Requirement, VersionCommand, ParseVersion: the runtime version the
//     project declares and how to read the version a sandbox has.
//   - SetupStep: the dependency install step ([Setup]: run once with
//     network, its [Cache] directories mounted read-only in every offline
//     test run).
//   - TestCommand: the test command and the result format it reports in,
//     as a [testrun.Runner] with its [testrun.Format].
//   - Image: the recipe of the default sandbox image ([Image]).
//
// The optional interfaces add knowledge about files and failures; a
// language without one simply has none of it. Each is asked through
// lang/registry, over every language (a Go workspace may hold JavaScript
// tests), so a method must answer "" / nil / false for files that are not
// its own:
//
//   - [TestFiles]: which files are tests and which are test
//     infrastructure (runner configuration, plugins, TestMain).
//   - [ResultFormats]: the result formats a configured test command's
//     output is recognised among.
//   - [Sources]: repo-map symbols and workspace-local import resolution.
//   - [Prompter]: the property-test hint of the solve-mode prompt.
//   - [Policy]: the policy rules checked on model-written code.
//   - [Manifests]: the dependencies a project's manifests declare.
//   - [SetupChanges]: which edits change what the setup phase (run with
//     network) executes or downloads; the agent asks the user before such
//     an edit of the model's may run.
//   - [FailureReader]: failure-signature normalisation for the memory.
//   - [HostCaches]: host caches of the toolchain offered read-only.
//   - [RuntimeSource]: where other releases of the runtime are published
//     and what a downloaded one adds to the default image; sandbox/image
//     (Runtimes) downloads, verifies, caches and builds the per-version
//     image "fixpoint-sandbox-<name>:<version>". Without it the runtime
//     has the one version of the default image.
//   - [ReleasePicker], [RuntimeHelp]: which published release to run for a
//     requirement, and how to get a runtime version; [ChannelRuntime]:
//     the release channel (Rust's nightly, beta) a version output shows,
//     for a Requirement that pins one.
//   - [ProtectedFiles]: package manager files a model may not write
//     (they run code on the host: .yarnrc.yml, .cargo/).
//   - [ProjectDirs]: directories the language's tools make (node_modules,
//     .venv, target), which walks for secret files and a project
//     Dockerfile's build context skip; [CacheDirs]: interpreter caches
//     (__pycache__) no snapshot enters.
//   - [HostPackages]: Debian packages the language's host-toolchain tests
//     need, which .ci/setup installs.
//   - [Preflight]: a check of the workspace's files before any sandbox
//     starts (Rust: every dependency is vendored).
//   - [ConfiguredRunners]: the language's runner recognised in a configured
//     test command (`env CGO_ENABLED=0 go test ./...`), so its results are
//     still read per test.
//   - [InstallHints]: the cause of a failed install read from its output
//     (Go: a module version the proxy does not have).
//   - [UntrustedRuns]: the test runner as used in fix and solve runs, where
//     model-written code runs (Go: `go test -count=1`, so no result is read
//     from a cache that code could have written).
//   - [TestSelector]: the test runner narrowed to some tests (the ones that
//     failed at a fix run's baseline), run first in each iteration so that
//     the whole suite runs once, as the verification.
//   - [Tracer]: the failing tests run once more before the first prompt,
//     recording the code they executed, which ranks the context.
//   - [Footers]: the module code at a file's end an excerpt shows with it
//     (Python's main guard); [MissingNames]: the names a failure says do
//     not exist yet (Python's ImportError), whose users rank.
//   - [PolicyParser] (through [PolicyOptions]): a long-lived parser a
//     language's policy check may use instead of a process per file
//     (lang/python's Parser); [PolicyParsers] starts one for a batch of
//     files (agent/policy's Batch: one process per language per reply).
//
// lang/golang is the fullest example, one file per concern: golang.go
// (Language, the image, the prompt hint, host caches), runtime.go
// (toolchain releases from the module proxy), testcmd.go, testfiles.go,
// sources.go, policy.go, deps.go and signature.go.
//
// A test result format is a [testrun.Format] value. One only the
// language uses is declared in its folder (lang/rust/format.go: cargo's
// libtest output, with its parser, the lines a long run keeps, how a
// crashed test binary is explained and the cross-check against cargo's
// summary); the shared wire formats (go test -json, JUnit XML, TAP, the
// jest and mocha reports) are declared once in sandbox/testrun. The
// language's TestCommand names its runner's format, and [ResultFormats]
// lists those a configured test command is recognised among.
//
// Version syntax is the language's too: the root has [Version], [Range]
// and the [Bound]s a language builds one from ([AnyOf], [Series],
// [After], [ParsePartial]); lang/node parses npm ranges (ParseRange),
// lang/python PEP 440 specifiers (ParseSpec). The install step's
// registry and CA variables are fields of its [Setup] (HostEnv, CAEnv).
//
// Import graph: a language may import sandbox, sandbox/testrun and
// sandbox/image, so those packages never import lang/registry or a
// language's folder; their callers (agent, memory, cmd, sandbox/backends,
// sandbox/setup) do. sandbox/image imports this package (Version, Release,
// RuntimeSource), so this package never imports sandbox/image.
//
// Nothing here runs project code: the sandbox backends and sandbox/setup
// do. A policy check may run an interpreter to parse a file (Python's ast
// module), never to execute it.
package lang

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// Language is one language fixpoint knows. Implementations are stateless.
type Language interface {
	// Name is the language's short name: "go", "node", "python". It is
	// also the runtime name in a Requirement and the image suffix.
	Name() string
	// Detect reports whether snap is a project in this language.
	Detect(snap *sandbox.Snapshot) bool
	// Requirement reads the runtime version the project declares; nil
	// when it declares none. An error names the file that does not parse.
	Requirement(snap *sandbox.Snapshot) (*Requirement, error)
	// SetupStep is the project's dependency install step; nil when the
	// project has nothing to install.
	SetupStep(snap *sandbox.Snapshot) *Setup
	// VersionCommand prints the runtime's version inside a sandbox;
	// ParseVersion reads that output.
	VersionCommand() []string
	ParseVersion(output string) (Version, error)
	// TestCommand is the test command of a project detected as this
	// language, with the report format it writes (Runner.Name, ReportPath).
	TestCommand(snap *sandbox.Snapshot) testrun.Runner
	// Image is the recipe of the language's default sandbox image,
	// fixpoint-sandbox-<Name>.
	Image() Image
}

// Image is what a language's default sandbox image holds on top of the
// base every image has (Debian's minimal system and git): the language's
// own tools and nothing of another's. The image builder (sandbox/image)
// turns it into a recipe.
type Image struct {
	// Extra are Debian packages installed with apt-get.
	Extra []string
	// GoRoot copies the host's Go toolchain (GOROOT) into the image.
	GoRoot bool
	// Path lists directories put before the default PATH.
	Path []string
	// Env is KEY=VALUE set in the image after LANG, HOME and PATH.
	Env []string
	// GoCacheEnvs, with GoRoot, are the environments (KEY=VALUE over Env)
	// besides the image's own that its prebuilt Go build cache also holds
	// the standard library for: those the language's test command runs go
	// with. A first run in any other configuration compiles it again.
	GoCacheEnvs [][]string
}

// TestFiles is implemented by languages with test-file conventions.
type TestFiles interface {
	// IsTestFile reports whether a workspace-relative slash path is a
	// test file of this language by its naming convention.
	IsTestFile(p string) bool
	// TestInfra explains why a new, changed or deleted file is test
	// infrastructure of this language (a file that decides which tests
	// run, how they run or how they report), or returns "". before or
	// after is nil when the file did not exist or is deleted.
	TestInfra(p string, before, after []byte) string
	// TestPatterns are regular expressions (RE2, multi-line mode) for
	// what test code of this language looks like; they tell a change that
	// deletes or weakens tests.
	TestPatterns() TestPatterns
}

// TestPatterns are regular-expression alternatives that match test code:
// each field is one alternative ("" for none), joined with those of the
// other languages into one expression.
type TestPatterns struct {
	Funcs   string // a test function's declaration: `^func (Test|Fuzz|Example)\w*\(`
	Asserts string // an assertion: `\bt\.(?:Error|Fatal)\b`
	Skips   string // a skip or expected-failure marker: `\bt\.Skip\w*\(`
}

// Sources is implemented by languages fixpoint reads source files of.
type Sources interface {
	// Symbols lists the top-level declarations of a source file for the
	// repo map ("func Name(params) results", "class Name"); nil for files
	// that are not this language's.
	Symbols(p string, data []byte) []string
	// LocalImports resolves what file p imports from the workspace
	// itself: files are shown to the model with p, dirs (package
	// directories, "." for the root) are searched for the symbols a
	// failure names. Both are nil for files that are not this language's.
	LocalImports(snap *sandbox.Snapshot, p string) (files, dirs []string)
}

// ResultFormats is implemented by languages whose test runners report in
// a result format ([testrun.Format]): the formats a configured test
// command's output is recognised among (Format.Sniff), asked in registry
// order. A language's TestCommand names the one its own runner uses in
// Runner.Format; a format only one language uses is declared in its
// folder (lang/rust's Format), the shared wire formats (JUnit XML, TAP,
// go test -json, the jest and mocha reports) in sandbox/testrun.
type ResultFormats interface {
	TestFormats() []*testrun.Format
}

// ProtectedFiles is implemented by languages whose package managers
// read configuration that runs code or swaps the toolchain on the user's
// machine, outside the sandbox (.yarnrc.yml, .pnpmfile.cjs, .cargo/): a
// model must not write it unless the user allows it (agent/edit's
// Protected asks every language through lang/registry).
type ProtectedFiles interface {
	// ProtectedFile says what kind of file rel (a workspace-relative slash
	// path, lower-cased) is, or "" when it is not one of the language's.
	ProtectedFile(rel string) string
}

// ProjectDirs is implemented by languages whose tools make directories
// in a project that are not its sources: installed dependencies,
// virtualenvs, build output, caches (node_modules, .venv, target).
type ProjectDirs interface {
	// GeneratedDirs are directory names walks for secret files skip
	// (agent/secrets.go): they are huge and hold no user secrets.
	GeneratedDirs() []string
}

// CacheDirs is implemented by languages whose interpreter leaves caches
// beside the sources that are only ever stale in a sandbox (Python's
// __pycache__): snapshots never enter them (sandbox.SnapshotOptions.SkipDirs,
// through registry.CacheDirs).
type CacheDirs interface {
	CacheDirs() []string
}

// Platforms is implemented by languages whose source files may be built
// for some platforms only (Go's build constraints and _GOOS file names).
type Platforms interface {
	// OtherPlatform reports whether source file p (its content is data) is
	// left out of the build on the sandbox's platform (linux, the host's
	// architecture): code a failing test run there never executed. False
	// for files that are not this language's.
	OtherPlatform(p string, data []byte) bool
}

// PlatformBranches is implemented by languages whose modules branch on
// the platform at run time (Python's if sys.platform == "win32":, Node's
// if (process.platform === 'win32') {).
type PlatformBranches interface {
	// OtherPlatformLines returns the line ranges (1-based, inclusive) of
	// source file p that only another platform than the sandbox's (linux)
	// runs: the branches of a platform test that linux does not take. Nil
	// for files that are not this language's, and for tests it cannot
	// decide.
	OtherPlatformLines(p string, data []byte) [][2]int
}

// ImportAliases is implemented by languages whose imports can rename
// what they import (from m import a as b, import {a as b}, const {a: b} =
// require(…), use m::a as b): the cross-file call walk follows a call of
// b to the declaration of a.
type ImportAliases interface {
	// ImportAliases maps the local names source file p (its content is
	// data) gives imported declarations to the names they are declared
	// under; nil for files that are not this language's.
	ImportAliases(p string, data []byte) map[string]string
}

// TestHelpers is implemented by languages whose test files call helpers
// declared in other test files without importing them (Go's _test.go
// files of one directory share their package).
type TestHelpers interface {
	// TestHelperFiles lists the other files whose declarations test file
	// p can call by name alone; nil for files that are not this
	// language's.
	TestHelperFiles(snap *sandbox.Snapshot, p string) []string
}

// TestSetup is implemented by languages whose test frameworks run setup
// code before each test (unittest's setUp, pytest's setup_method,
// mocha's and jest's beforeEach): what it calls, the failing test runs
// too.
type TestSetup interface {
	// TestSetupNames are the names of the setup methods, functions or
	// hook calls of the language's test frameworks.
	TestSetupNames() []string
}

// Headers is implemented by languages whose source files open with a
// header: the package clause, imports, crate attributes, a module's
// docstring. An excerpt of a long file shows it (an edit often adds an
// import, or a declaration right after them).
type Headers interface {
	// HeaderLines returns how many of the first lines of source file p
	// (its content is data) are its header; 0 for files that are not
	// this language's or that open with a declaration.
	HeaderLines(p string, data []byte) int
}

// Footers is implemented by languages whose source files may close with
// code that runs when the module loads or is run as a program (Python's
// `if __name__ == "__main__": … else: …`): module state set there (a
// global a function reads) is set nowhere a declaration shows. An
// excerpt of a long file shows a short footer as it shows the header.
type Footers interface {
	// FooterLines returns how many of the last lines of source file p
	// (its content is data) are its footer; 0 when it has none.
	FooterLines(p string, data []byte) int
}

// DataDecls is implemented by languages that tell a declaration of data
// (a type, a constant, a variable, a module-level table or a class's
// body) from one of code. No tracer sees data run, so the context ranks a
// data declaration by what the traced lines of code use of it (round 9:
// a struct whose fields the traced methods read, a module-level table a
// traced function indexes).
type DataDecls interface {
	// DataDecl reports whether line, the line that starts a declaration
	// in source file p, declares data.
	DataDecl(p, line string) bool
}

// Prompter is implemented by languages with prompt hints.
type Prompter interface {
	// PropertyHint is the solve-mode sentence on property-based tests.
	PropertyHint() string
}

// Policy is implemented by languages with policy rules: checks of
// model-written code before it runs (agent/policy applies the project's
// actions to the findings).
type Policy interface {
	// PolicyRules is the language's rule catalogue.
	PolicyRules() []PolicyRule
	// CheckPolicy checks one file; nil for files that are not this
	// language's. Nothing of src is ever executed.
	CheckPolicy(ctx context.Context, rel string, src []byte, opts PolicyOptions) ([]PolicyFinding, error)
}

// PolicyRule is one policy check.
type PolicyRule struct {
	Name        string // "python.subprocess"
	Description string // what it catches, for docs and messages
	Block       bool   // blocks by default; otherwise warns
	// NonTestOnly rules do not apply to test files: tests may
	// legitimately patch their own framework.
	NonTestOnly bool
	// PerUse rules judge what an edit adds: a finding that the user's own
	// version of the file already has (same rule and message, as many
	// times) is the user's code, not the model's. For constructs common in
	// ordinary code (os.Exit in a CLI package, a status string), where
	// blocking every edit of such a file would stop honest fixes.
	PerUse bool
}

// PolicyFinding is one rule match in a file.
type PolicyFinding struct {
	Rule    string
	Line    int // 1-based; 0 when unknown
	Message string
	// Always: blocked whatever the rule's action, unless the rule is off.
	Always bool
}

// PolicyOptions are the tools a policy check may use.
type PolicyOptions struct {
	// Python is an interpreter used to parse Python (never to run the
	// checked code); "" lets the check find one.
	Python string
	// Parser, when set, is a long-lived parser the language uses instead
	// of a process per checked file (lang/python's Parser); a language
	// that has none ignores it.
	Parser PolicyParser
}

// PolicyParser parses one source file for a policy check in a process
// that outlives the check. It never executes the source.
type PolicyParser interface {
	ParsePolicy(ctx context.Context, src []byte) ([]PolicyFinding, error)
}

// PolicyParsers is implemented by languages whose policy check runs a
// process (lang/python): NewPolicyParser returns a parser for a batch of
// files, whose process starts on the first file and ends at Close, or nil
// when the language has no parser to start (no interpreter: the check
// falls back to its own means).
type PolicyParsers interface {
	NewPolicyParser(python string) ClosingPolicyParser
}

// ClosingPolicyParser is a PolicyParser its caller closes.
type ClosingPolicyParser interface {
	PolicyParser
	Close() error
}

// TestSelector is implemented by languages whose test runner can run part
// of the suite. In each iteration of a fix the agent runs the tests that
// failed at baseline first (and their package where the runner cannot name
// a test), and the whole suite only when they pass, in the fresh session
// whose run is the verdict; a selected run never decides a verdict.
//
// SelectTests returns r narrowed to tests, results of an earlier run of
// the same runner (their ID, Name and Package as its format reports
// them), and false when r is not a runner it knows how to narrow (a
// custom test_cmd, a composed npm script) or a test cannot be named to
// it (a whole-run exit status). The selected runner must report every
// selected test under the same ID as the full run: a test missing from
// its report makes the agent fall back to the whole suite.
type TestSelector interface {
	SelectTests(r testrun.Runner, tests []testrun.Result) (testrun.Runner, bool)
}

// Tracer is implemented by languages whose test runner can record the
// code a run executed. Before a fix's first prompt the agent runs the
// tests that failed at baseline once more, traced, in the baseline's
// session (the user's own code, before any model edit), and the
// declarations they executed rank higher in the prompt's context
// (fault localisation by the failing tests' spectrum). A traced run
// never decides a verdict and is not a test run the user sees counted.
//
// TraceTests returns r narrowed to tests (as [TestSelector] does, results
// of the baseline run) and set to write what it executed to
// r.TracePath ([TracePath]), and false when it cannot trace r (a runner
// it does not know, a composed script). ParseTrace reads that file back:
// root is the workspace directory as the command saw it (Report.Trace's
// Root). The file is written by project code, so it is read as untrusted:
// bounded, and only paths of source files in snap are kept.
type Tracer interface {
	TraceTests(snap *sandbox.Snapshot, r testrun.Runner, tests []testrun.Result) (testrun.Runner, bool)
	ParseTrace(snap *sandbox.Snapshot, root string, data []byte) (Trace, error)
}

// Spectra is implemented by tracing languages whose runner can also
// trace the failing tests' packages whole, with counts, for the
// spectrum of the failing tests (agent/spectrum.go): a line the failing
// tests run and the package's passing tests run rarely or never points
// at the fault more than one every test runs. SpectrumTests returns two
// runners, each writing what ran with counts to [TracePath] in the
// format ParseTrace reads: fail runs the failing tests (narrowed as
// TraceTests narrows them), all every test of their packages, both in
// the same mode, so that their counts compare (Go: both -short, which
// keeps a package's slow tests out of a run that only ranks the
// context). ok is false when it cannot. A span all does not report is
// read as not known.
type Spectra interface {
	SpectrumTests(snap *sandbox.Snapshot, r testrun.Runner, tests []testrun.Result) (fail, all testrun.Runner, ok bool)
}

// TracePath is the workspace-relative file a traced runner writes
// ([Tracer]); its format is the language's own.
const TracePath = ".fixpoint/trace"

// Trace is what a traced run executed: for each workspace-relative slash
// path of a source file, the spans of lines that ran.
type Trace map[string][]Span

// Span is lines From..To (1-based, inclusive) that ran Count times; Count
// 0 means they ran a number of times the tracer does not know. A tracer
// that records only which functions ran gives each function's first line
// (From == To).
type Span struct{ From, To, Count int }

// ConfiguredRunners is implemented by languages that recognise their own
// runner in a configured test command (test_cmd, --test-cmd): args are
// the command's words after any leading environment assignments (`env
// A=1`, `A=1`), which lang/registry passes to the runner's Env. It
// returns the runner as the language would run it (Go: `go test` with
// -json, read per test) and true, or false for a command it does not
// know.
type ConfiguredRunners interface {
	ConfiguredRunner(snap *sandbox.Snapshot, args []string) (testrun.Runner, bool)
}

// InstallHints is implemented by languages whose installer's failure
// output can say more than the generic reading of it: InstallHint returns
// one or two sentences on the cause and the fix (what the setup step's
// error adds before its own fix), or "" to leave the generic reading (a
// registry asking for credentials) to sandbox/setup.
type InstallHints interface {
	InstallHint(output string) string
}

// UntrustedRuns is implemented by languages whose test runner can answer
// from a cache that code a test runs may write (Go's test-result cache in
// GOCACHE). In runs where model-written code runs (fix, solve) the agent
// asks it for a runner that does not read results from that cache, so
// an earlier iteration's code cannot plant a verdict for a later one.
type UntrustedRuns interface {
	Untrusted(r testrun.Runner) testrun.Runner
}

// HostCaches is implemented by languages whose toolchain keeps a cache on
// the host that sessions may reuse read-only (Go's module cache): each is
// a [sandbox.CacheMount] with HostDir set. The config's
// sandbox.go_mod_cache = false turns them off. snap is the workspace
// (nil: offer every cache); a language offers none to a project that
// needs nothing from them.
type HostCaches interface {
	HostCaches(snap *sandbox.Snapshot) []sandbox.CacheMount
}

// Manifests is implemented by languages whose projects declare
// dependencies in manifest files.
type Manifests interface {
	// Deps lists the dependencies snap's manifests declare.
	Deps(snap *sandbox.Snapshot) []Dep
}

// SetupChanges is implemented by languages whose setup phase (the
// [Setup] step, run with network, and every later setup of the project
// once an edit is written) executes or downloads what workspace files
// declare: lifecycle scripts, build scripts, requirement lines, version
// specs, replace directives. The agent asks the user before a model edit
// with any such change runs.
type SetupChanges interface {
	// SetupChanges lists what the edit from before to after changes in
	// what this language's setup executes or downloads, for the files in
	// changed (workspace-relative slash paths; a path missing from after
	// is deleted). It answers nil for files that are not its own and for
	// changes that do not alter setup (a comment, the test script). A new
	// dependency by plain name and registry version is left to
	// [Manifests] and the allow-list; its source or spec is not.
	SetupChanges(before, after *sandbox.Snapshot, changed []string) []SetupChange
}

// SetupChange is one change to what the setup phase runs or downloads.
type SetupChange struct {
	File string // workspace-relative path: "package.json"
	// What says what changes, for the user: "adds the lifecycle script
	// postinstall: \"node x.js\"". Text from the file is quoted
	// ([QuoteSetup]), so it carries no control characters.
	What string
}

func (c SetupChange) String() string { return c.File + ": " + c.What }

// QuoteSetup quotes text taken from a workspace file for a
// [SetupChange]: Go-quoted (control characters escaped) and cut to 120
// characters.
func QuoteSetup(s string) string {
	if r := []rune(s); len(r) > 120 {
		s = string(r[:117]) + "..."
	}
	return strconv.Quote(s)
}

// Dep is a dependency a manifest declares.
type Dep struct {
	Ecosystem string `json:"ecosystem"` // go, python, npm
	Name      string `json:"name"`
	File      string `json:"file"` // manifest that declares it
}

func (d Dep) String() string { return d.Ecosystem + ":" + d.Name }

// MissingNames is implemented by languages whose failure messages say
// that a name the test uses does not exist yet (Python: "cannot import
// name 'X' from 'm'", "module 'm' has no attribute 'X'"): a test of a
// new helper fails before anything runs (no trace), and the fix both
// defines the helper and calls it where existing code does its job,
// code that often already spells the name (`p.is_relative_to(q)` for a
// new `is_relative_to(p, q)`).
type MissingNames interface {
	// MissingNames returns the names message says are missing, at most
	// a few.
	MissingNames(message string) []string
}

// FailureReader is implemented by languages whose failure output the
// memory normalises into signatures.
type FailureReader interface {
	// Aliases are other names the language goes by in stored records
	// ("golang", "py", "typescript").
	Aliases() []string
	// LooksLike reports whether raw test output is this language's.
	LooksLike(raw string) bool
	// Signature extracts what identifies the failure in raw output (ANSI
	// codes and CRLF already removed).
	Signature(raw string) Signature
}

// Signature is the language-specific part of a failure signature; the
// memory renders, normalises and deduplicates it.
type Signature struct {
	Tests  []string
	Errors []string // "panic: ...", "TypeError: ...", "build: ..."
	Frames []string // innermost first
}

// ReleasePicker is implemented by languages whose runtime can be fetched
// in several versions: it picks which published release to run for a
// requirement. Without it, the newest allowed release is used.
type ReleasePicker interface {
	PickRelease(r Range, published []Version) (Version, bool)
}

// Preflight is implemented by languages that can tell, from the
// workspace's files alone, that its tests cannot run in the sandbox (a
// Rust crate whose dependencies are not vendored: crates.io is out of
// reach). Check runs before any sandbox starts; its error names the file,
// what is missing and the fix, and no test runs.
type Preflight interface {
	Check(snap *sandbox.Snapshot) error
}

// Notes is implemented by languages that have something to tell a user
// about how the project's tests will build in the sandbox (doctor prints
// each line): a Go module that uses cgo.
type Notes interface {
	Notes(snap *sandbox.Snapshot) []string
}

// RuntimeHelp is implemented by languages that can tell a user how to
// get a runtime version the sandbox does not have.
type RuntimeHelp interface {
	RuntimeFix(req *Requirement) string
}

// Requirement is a runtime version constraint a project declares.
type Requirement struct {
	Runtime    string // "go", "node", "python"
	Constraint string // as written, e.g. "^20.19.0 || >=24"
	Source     string // the file and field, e.g. "package.json (engines.node)"
	Range      Range
	// Advisory is non-empty when the project's own tools only warn about
	// a runtime outside Range (npm reads engines.node as advice unless
	// engine-strict is set): it says so. A sandbox that cannot choose its
	// runtime (bwrap runs the host's) then runs the tests with a warning,
	// as a native run would, instead of refusing to.
	Advisory string
	// Channel is a release channel besides the numbered releases that
	// the project pins ("nightly", "beta": Rust's rust-toolchain.toml),
	// "" for none. No numbered release meets it (Range allows none): the
	// sandbox's runtime meets it when the language reads that channel in
	// its version command's output (ChannelRuntime).
	Channel string
	// ProbeEnv is KEY=VALUE the version command runs with to select the
	// runtime the project pins (RUSTUP_TOOLCHAIN: the check runs before
	// the workspace, whose toolchain file rustup reads, is in the
	// session).
	ProbeEnv []string
}

// ChannelRuntime is implemented by languages whose runtime has release
// channels besides the numbered releases (Rust's nightly and beta).
type ChannelRuntime interface {
	// Channel is the channel of the runtime whose version command printed
	// out ("nightly", "beta"), "" for a numbered (stable) release.
	Channel(out string) string
}

func (r *Requirement) String() string {
	return fmt.Sprintf("%s %s (from %s)", r.Runtime, r.Constraint, r.Source)
}

// Cache is a directory a setup step fills and test runs mount read-only.
// Path is absolute inside the sandbox; it may lie inside the workspace
// (/workspace/node_modules).
type Cache struct {
	Name string // short name for volume names and messages: "gomod", "node_modules"
	Path string
	// Writable names entries of Path (single names: ".cache") where tools
	// write their own caches at test time; each gets a fresh writable
	// layer per session over the read-only cache (sandbox.CacheMount).
	Writable []string
}

// Setup is a project's dependency install step.
type Setup struct {
	// Name is what progress shows: "npm ci", "go mod download".
	Name string
	// Script is run with `sh -c` in the workspace root of the setup sandbox.
	Script string
	// Inputs are the workspace files whose content keys the cache: the
	// manifest and lockfile. A change to any of them re-runs setup.
	Inputs []string
	// Caches are the directories the step fills.
	Caches []Cache
	// Env is set for the setup step only (GOPROXY, GOSUMDB).
	Env []string
	// HostEnv names host variables the step's installer reads for where
	// it downloads from (GOPROXY, NPM_CONFIG_REGISTRY, PIP_INDEX_URL): the
	// step gets the host's values, after Env, besides the proxy variables
	// every step gets (sandbox/setup).
	HostEnv []string
	// CAEnv names variables that make the step's installer trust the
	// host's CA bundle (NODE_EXTRA_CA_CERTS, PIP_CERT): each is set to the
	// bundle's path in the setup container when there is one, besides
	// SSL_CERT_FILE and GIT_SSL_CAINFO, which every step gets.
	CAEnv []string
	// Registries are the hosts the installer downloads from when no
	// variable names another (registry.npmjs.org): where a backend
	// allowlists the step's network (kubernetes), the step reaches these
	// and the URLs in Env and HostEnv's values.
	Registries []string
	// TestEnv is set for every test run of a session using the caches
	// (GOMODCACHE, GOPROXY=off, PATH additions).
	TestEnv []string
	// Path lists directories put before the image's PATH, in the setup
	// step and in test runs (a virtualenv's bin).
	Path []string
	// NoScripts is added to Env when the step re-runs after an edit the
	// model made to an input: it keeps the installer from running scripts
	// from the workspace (npm lifecycle scripts), which the model could
	// have written.
	NoScripts []string
	// Code lists inputs that are code the step itself runs (setup.py):
	// after a model edit to one of them the step is not re-run.
	Code []string
	// Override is set when the step came from configuration or
	// .devcontainer rather than detection; it is named in messages.
	Override string
}

// Key hashes what decides whether a cached setup can be reused: the
// script, the environment, the cache paths, the image and the content of
// every input file present in snap.
func (s *Setup) Key(snap *sandbox.Snapshot, image string) string {
	h := sha256.New()
	fmt.Fprintf(h, "setup v1\x00%s\x00%s\x00%s\x00", image, s.Script, strings.Join(s.Env, "\n"))
	for _, c := range s.Caches {
		fmt.Fprintf(h, "%s=%s\x00", c.Name, c.Path)
		if len(c.Writable) > 0 { // the install makes their mount points
			fmt.Fprintf(h, "writable=%s\x00", strings.Join(c.Writable, "/"))
		}
	}
	in := append([]string(nil), s.Inputs...)
	sort.Strings(in)
	for _, p := range in {
		if f, ok := snap.Files[p]; ok {
			sum := f.Sum() // the content hash, recorded when the snapshot was taken
			fmt.Fprintf(h, "%s\x00%d\x00", p, f.Size())
			h.Write(sum[:])
		}
	}
	return fmt.Sprintf("%x", h.Sum(nil))[:16]
}

// InputsOf lists which of names (slash paths) snap has, sorted.
func InputsOf(snap *sandbox.Snapshot, names ...string) []string {
	var out []string
	for _, p := range snap.Paths() {
		for _, n := range names {
			if p == n {
				out = append(out, p)
				break
			}
		}
	}
	return out
}

// Contents returns a snapshot file's bytes, read from disk when the
// snapshot holds only its hash; nil when it cannot be read (changed or
// gone since the snapshot), which callers treat like a missing manifest.
func Contents(f sandbox.File) []byte {
	b, err := f.Bytes()
	if err != nil {
		return nil
	}
	return b
}

// FileBytes returns the bytes of p in s and whether s has p (a nil s has
// nothing): how a [SetupChanges] reads a file before and after an edit.
func FileBytes(s *sandbox.Snapshot, p string) ([]byte, bool) {
	if s == nil {
		return nil, false
	}
	f, ok := s.Files[p]
	if !ok {
		return nil, false
	}
	return Contents(f), true
}

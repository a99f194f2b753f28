// Package lang holds what fixpoint knows about each language, one folder
// per language (lang/golang, lang/node, lang/python), behind the
// [Language] interface. The list of languages is declared once, in
// lang/registry.
//
// A Language reads a workspace [sandbox.Snapshot] and says: whether the
// workspace is written in it ([Language.Detect]), which runtime version the
// project requires and which file says so ([Requirement]), and how its
// dependencies are installed before any test runs ([Setup]: a command run
// once with network, whose results are cached by the hash of the manifest
// and lockfile and mounted read-only into every offline test run).
//
// Nothing here runs anything: the sandbox backends and sandbox/setup do.
package lang

import (
	"crypto/sha256"
	"fmt"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
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
}

// ReleasePicker is implemented by languages whose runtime can be fetched
// in several versions: it picks which published release to run for a
// requirement. Without it, the newest allowed release is used.
type ReleasePicker interface {
	PickRelease(r Range, published []Version) (Version, bool)
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

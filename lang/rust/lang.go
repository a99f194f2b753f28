package rust

import (
	"context"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
	"github.com/pelletier/go-toml/v2"
)

// The optional interfaces of package lang that Rust implements.
var (
	_ lang.Language      = Language{}
	_ lang.TestFiles     = Language{}
	_ lang.Policy        = Language{}
	_ lang.Manifests     = Language{}
	_ lang.Sources       = Language{}
	_ lang.Prompter      = Language{}
	_ lang.FailureReader = Language{}
	_ lang.RuntimeHelp   = Language{}
	_ lang.Preflight     = Language{}
)

// TestCommand is [Runner], read by [Parse].
func (Language) TestCommand(*sandbox.Snapshot) testrun.Runner { return Runner() }

// Image is Debian bookworm's Rust toolchain (rustc 1.63, cargo 1.65),
// with pkg-config, which a Rust developer's machine has and crates call at
// build or test time (the pkg-config crate's own tests run it: 16 of 34
// failed without it). CARGO_HOME is scratch space under /tmp; cargo never
// goes online.
func (Language) Image() lang.Image {
	return lang.Image{
		Extra: []string{"cargo", "rustc", "libstd-rust-dev", "pkg-config"},
		Env:   []string{"CARGO_HOME=/tmp/cargo-home", "CARGO_NET_OFFLINE=true", "CARGO_TERM_COLOR=never", "CARGO_INCREMENTAL=0"},
	}
}

// IsTestFile is [IsTestFile].
func (Language) IsTestFile(p string) bool { return IsTestFile(p) }

// TestInfra is [TestInfra].
func (Language) TestInfra(p string, before, after []byte) string { return TestInfra(p, before, after) }

// PolicyRules is [Rules].
func (Language) PolicyRules() []lang.PolicyRule {
	var out []lang.PolicyRule
	for _, r := range Rules() {
		out = append(out, lang.PolicyRule{Name: r.Name, Description: r.Description, Block: r.Block, NonTestOnly: r.NonTestOnly})
	}
	return append(out, lang.ForgeRules("rust")...)
}

// CheckPolicy is [Check] for .rs files.
func (Language) CheckPolicy(_ context.Context, rel string, src []byte, _ lang.PolicyOptions) ([]lang.PolicyFinding, error) {
	if path.Ext(rel) != ".rs" {
		return nil, nil
	}
	var out []lang.PolicyFinding
	for _, f := range Check(src) {
		out = append(out, lang.PolicyFinding{Rule: f.Rule, Line: f.Line, Message: f.Message, Always: f.Always})
	}
	return append(out, lang.ForgeFindings("rust", src)...), nil
}

// Deps lists the crates every Cargo.toml of the build (buildManifests: not
// a fuzz/ crate with its own workspace) depends on (normal,
// dev and build dependencies, also per target), except path and
// workspace-inherited ones, and every package Cargo.lock takes from a
// registry or git: an edit that adds one needs approval, as the sandbox
// cannot fetch it.
func (Language) Deps(snap *sandbox.Snapshot) []lang.Dep {
	var out []lang.Dep
	if lock, ok := snap.Text("Cargo.lock"); ok {
		for _, p := range lockedPackages(lock, true) {
			out = append(out, lang.Dep{Ecosystem: "cargo", Name: p.Name, File: "Cargo.lock"})
		}
	}
	for _, p := range buildManifests(snap) {
		if strings.HasPrefix(p, "vendor/") || strings.Contains(p, "/vendor/") {
			continue
		}
		text, _ := snap.Text(p)
		var m map[string]any
		if toml.Unmarshal([]byte(text), &m) != nil {
			continue
		}
		tables := []any{m["dependencies"], m["dev-dependencies"], m["build-dependencies"]}
		if ws, ok := m["workspace"].(map[string]any); ok {
			tables = append(tables, ws["dependencies"])
		}
		if targets, ok := m["target"].(map[string]any); ok {
			for _, t := range targets {
				if tm, ok := t.(map[string]any); ok {
					tables = append(tables, tm["dependencies"], tm["dev-dependencies"], tm["build-dependencies"])
				}
			}
		}
		for _, t := range tables {
			deps, _ := t.(map[string]any)
			for name, d := range deps {
				if dm, ok := d.(map[string]any); ok {
					if _, isPath := dm["path"]; isPath {
						continue
					}
					if w, _ := dm["workspace"].(bool); w {
						continue
					}
					if pkg, ok := dm["package"].(string); ok {
						name = pkg // a renamed dependency: the crate is what is fetched
					}
				}
				out = append(out, lang.Dep{Ecosystem: "cargo", Name: name, File: p})
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].File+out[i].Name < out[j].File+out[j].Name })
	return out
}

var (
	symbolRe   = regexp.MustCompile(`(?m)^(?:pub(?:\([^)]*\))?\s+)?(?:(?:const|async|unsafe|extern\s+"[^"]*")\s+)*(fn\s+\w+(?:<[^>{]*>)?\s*\([^)]*\)(?:\s*->\s*[^{;\n]+)?|struct\s+\w+|enum\s+\w+|trait\s+\w+|type\s+\w+|mod\s+\w+|macro_rules!\s*\w+|impl(?:<[^>{]*>)?\s+[^{\n]+)`)
	modDeclRe  = regexp.MustCompile(`(?m)^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+(\w+)\s*;`)
	useCrateRe = regexp.MustCompile(`\buse\s+crate\s*::\s*(\w+)`)
)

// Symbols lists a Rust file's top-level items for the repo map: the
// signatures of functions, and the names of types, traits, modules and
// impls. Items in comments and strings are not items.
func (Language) Symbols(p string, data []byte) []string {
	if path.Ext(p) != ".rs" {
		return nil
	}
	code, _ := blank(data)
	var out []string
	for _, m := range symbolRe.FindAllSubmatch(code, -1) {
		s := strings.Join(strings.Fields(string(m[1])), " ")
		out = append(out, strings.TrimSpace(strings.TrimSuffix(s, "where")))
		if len(out) >= 200 {
			break
		}
	}
	return out
}

// LocalImports resolves a Rust file's `mod name;` declarations and
// `use crate::name` paths to the module files of the workspace (files;
// dirs is always nil):
// name.rs or name/mod.rs next to a crate root or mod.rs, else in the
// directory named after the declaring file (src/a.rs declares src/a/b.rs).
func (Language) LocalImports(snap *sandbox.Snapshot, p string) (files, dirs []string) {
	if path.Ext(p) != ".rs" {
		return nil, nil
	}
	text, ok := snap.Text(p)
	if !ok {
		return nil, nil
	}
	code, _ := blank([]byte(text))
	dir := path.Dir(p)
	base := strings.TrimSuffix(path.Base(p), ".rs")
	modDir := dir
	if base != "mod" && base != "lib" && base != "main" {
		modDir = path.Join(dir, base)
	}
	seen := map[string]bool{}
	var out []string
	find := func(d, name string) {
		for _, c := range []string{path.Join(d, name+".rs"), path.Join(d, name, "mod.rs")} {
			if _, ok := snap.Files[c]; ok && !seen[c] {
				seen[c] = true
				out = append(out, c)
				return
			}
		}
	}
	for _, m := range modDeclRe.FindAllSubmatch(code, -1) {
		find(modDir, string(m[1]))
	}
	// An integration test, bench or example uses its package's library by
	// the crate's name (extern crate itoa; itoa::write; use itoa::fmt):
	// the library root, and the modules named after the crate's name.
	if name, lib := crateLib(snap, p); lib != "" {
		if re, err := regexp.Compile(`\b` + regexp.QuoteMeta(name) + `\s*::\s*(\w+)|\bextern\s+crate\s+` + regexp.QuoteMeta(name) + `\b`); err == nil {
			if ms := re.FindAllSubmatch(code, -1); len(ms) > 0 {
				if !seen[lib] {
					seen[lib] = true
					out = append(out, lib)
				}
				for _, m := range ms {
					if len(m[1]) > 0 {
						find(path.Dir(lib), string(m[1]))
					}
				}
			}
		}
	}
	if root := crateSrc(p); root != "" {
		for _, m := range useCrateRe.FindAllSubmatch(code, -1) {
			find(root, string(m[1]))
		}
	}
	return out, nil
}

// crateLib finds the package whose Cargo.toml is nearest above p and
// returns its library's crate name ([lib] name, else the package name
// with - as _) and root file ([lib] path, else src/lib.rs); lib is ""
// when the package has no library or p is the library's own file.
func crateLib(snap *sandbox.Snapshot, p string) (name, lib string) {
	for d := path.Dir(p); ; d = path.Dir(d) {
		if text, ok := snap.Text(path.Join(d, "Cargo.toml")); ok {
			var m struct {
				Package struct {
					Name string `toml:"name"`
				} `toml:"package"`
				Lib struct {
					Name string `toml:"name"`
					Path string `toml:"path"`
				} `toml:"lib"`
			}
			if toml.Unmarshal([]byte(text), &m) != nil {
				return "", ""
			}
			name = m.Lib.Name
			if name == "" {
				name = strings.ReplaceAll(m.Package.Name, "-", "_")
			}
			lib = path.Join(d, "src/lib.rs")
			if m.Lib.Path != "" {
				lib = path.Join(d, m.Lib.Path)
			}
			if _, ok := snap.Files[lib]; !ok || name == "" || lib == p {
				return "", ""
			}
			return name, lib
		}
		if d == "." || d == "/" || d == "" {
			return "", ""
		}
	}
}

// crateSrc is the src directory of the crate p is in ("" when p is not
// under a src directory).
func crateSrc(p string) string {
	parts := strings.Split(p, "/")
	for i := len(parts) - 2; i >= 0; i-- {
		if parts[i] == "src" {
			return strings.Join(parts[:i+1], "/")
		}
	}
	return ""
}

// PropertyHint is the solve-mode sentence on property-based tests: the
// sandbox has no proptest or quickcheck unless the project vendors them.
func (Language) PropertyHint() string {
	return "For Rust, write property-style tests as #[test] functions that loop over many generated inputs (a small deterministic generator, e.g. a linear congruential sequence); use proptest or quickcheck only if Cargo.toml already depends on them, since crates cannot be downloaded."
}

// Aliases are other names Rust goes by in stored records.
func (Language) Aliases() []string { return []string{"rs", "cargo"} }

var (
	libtestLineRe = regexp.MustCompile(`(?m)^test .+ \.\.\. (?:ok|FAILED|ignored)|^test result: (?:ok|FAILED)\.|^error\[E\d{4}\]: |^\s+Running (?:unittests )?\S+ \(target/`)
	failedTestRe  = regexp.MustCompile(`(?m)^test (.+?)(?: - should panic)? \.\.\. FAILED$`)
	panicMsgRe    = regexp.MustCompile(`(?m)panicked at '([^'\n]*)'|panicked at [^\s]+:\d+:\d+:\n(.*)$`)
	rustcErrorRe  = regexp.MustCompile(`(?m)^error(\[E\d{4}\])?: (.*)$`)
	locationRe    = regexp.MustCompile(`(?m)(?:panicked at '[^\n]*', | --> |panicked at )([\w./-]+\.rs):(\d+)`)
)

// LooksLike reports whether raw is cargo test or rustc output.
func (Language) LooksLike(raw string) bool { return libtestLineRe.MatchString(raw) }

// Signature extracts the failing tests, the panic messages and compiler
// errors (normalised: no numbers, addresses or paths that vary), and the
// files of the panic locations and compiler errors, without line numbers.
func (Language) Signature(raw string) lang.Signature {
	var s lang.Signature
	for _, m := range failedTestRe.FindAllStringSubmatch(raw, 50) {
		s.Tests = append(s.Tests, m[1])
	}
	for _, m := range panicMsgRe.FindAllStringSubmatch(raw, 20) {
		msg := m[1]
		if msg == "" {
			msg = m[2]
		}
		s.Errors = append(s.Errors, "panicked: "+lang.NormLine(msg))
	}
	for _, m := range rustcErrorRe.FindAllStringSubmatch(raw, 20) {
		msg := m[2]
		if strings.HasPrefix(msg, "test failed") || strings.HasPrefix(msg, "doctest failed") || strings.HasPrefix(msg, "could not compile") || strings.Contains(msg, "target failed") || strings.Contains(msg, "targets failed") {
			continue
		}
		s.Errors = append(s.Errors, "build: "+lang.NormLine(strings.TrimSpace(m[1]+" "+msg)))
	}
	for _, m := range locationRe.FindAllStringSubmatch(raw, 20) {
		s.Frames = append(s.Frames, path.Base(m[1]))
	}
	return s
}

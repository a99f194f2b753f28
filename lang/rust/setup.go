package rust

import (
	"bytes"
	"fmt"
	"path"
	"reflect"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/pelletier/go-toml/v2"
)

// cargoKeys are Cargo.toml tables and keys that decide what a build
// compiles and runs or where crates come from: build scripts and their
// dependencies, links, patches and replacements, proc-macro crates,
// workspace members.
var cargoKeys = [][]string{{"package", "build"}, {"package", "links"}, {"lib", "proc-macro"}, {"build-dependencies"},
	{"patch"}, {"replace"}, {"workspace", "members"}, {"workspace", "exclude"}, {"workspace", "dependencies"}}

// SetupChanges: build scripts (build.rs, or the file [package] build
// names), [build-dependencies], patches and replacements, proc-macro
// crates and their code, dependency sources and versions, cargo's
// configuration and toolchain files, and vendored crates. The setup step
// compiles the workspace (`cargo test --no-run`), which runs every build
// script and proc macro it reaches, in the networked setup container.
func (Language) SetupChanges(before, after *sandbox.Snapshot, changed []string) []lang.SetupChange {
	macro, scripts := buildCode(before), buildCode(after)
	for p := range macro {
		scripts[p] = true
	}
	var out []lang.SetupChange
	for _, p := range changed {
		old, hadOld := lang.FileBytes(before, p)
		cur, ok := lang.FileBytes(after, p)
		if !ok || hadOld && bytes.Equal(old, cur) {
			continue
		}
		base := path.Base(p)
		switch {
		case inVendoredCrate(before, p) || inVendoredCrate(after, p):
			out = append(out, lang.SetupChange{File: p, What: "changes a vendored crate, which the setup step compiles (and whose build script it runs)"})
		case base == "Cargo.toml":
			out = append(out, manifestChanges(p, old, cur)...)
		case base == "Cargo.lock":
			out = append(out, lockChanges(p, string(old), string(cur))...)
		case base == "build.rs" || scripts[p]:
			out = append(out, lang.SetupChange{File: p, What: "changes a build script or proc-macro crate, which cargo runs while the setup step compiles"})
		case strings.HasPrefix(p, ".cargo/") || strings.Contains(p, "/.cargo/") || base == "rust-toolchain" || base == "rust-toolchain.toml":
			out = append(out, lang.SetupChange{File: p, What: "changes cargo's configuration or toolchain (wrappers, linkers, runners, sources, a toolchain download)"})
		}
	}
	return out
}

// inVendoredCrate reports whether p lies in a vendored crate: a
// directory with a .cargo-checksum.json at or above it.
func inVendoredCrate(s *sandbox.Snapshot, p string) bool {
	if s == nil {
		return false
	}
	for d := path.Dir(p); d != "."; d = path.Dir(d) {
		if _, ok := s.Files[d+"/.cargo-checksum.json"]; ok {
			return true
		}
	}
	return false
}

// buildCode lists the files cargo runs at build time in s: a custom
// build script's file, and every .rs file of a proc-macro crate.
func buildCode(s *sandbox.Snapshot) map[string]bool {
	out := map[string]bool{}
	if s == nil {
		return out
	}
	for _, p := range s.Paths() {
		if path.Base(p) != "Cargo.toml" {
			continue
		}
		var m struct {
			Package struct {
				Build any `toml:"build"`
			} `toml:"package"`
			Lib struct {
				ProcMacro bool `toml:"proc-macro"`
			} `toml:"lib"`
		}
		data, _ := lang.FileBytes(s, p)
		if toml.Unmarshal(data, &m) != nil {
			continue
		}
		dir := path.Dir(p)
		if b, ok := m.Package.Build.(string); ok {
			out[path.Clean(path.Join(dir, b))] = true
		}
		if m.Lib.ProcMacro {
			for _, q := range s.Paths() {
				if strings.HasSuffix(q, ".rs") && (dir == "." || strings.HasPrefix(q, dir+"/")) {
					out[q] = true
				}
			}
		}
	}
	return out
}

// manifestChanges compares the parts of two Cargo.toml files that change
// what the build runs or fetches.
func manifestChanges(p string, old, cur []byte) []lang.SetupChange {
	var o, n map[string]any
	if toml.Unmarshal(cur, &n) != nil {
		return []lang.SetupChange{{File: p, What: "does not parse as TOML, so fixpoint cannot tell what cargo would build"}}
	}
	if toml.Unmarshal(old, &o) != nil {
		o = map[string]any{}
	}
	var out []lang.SetupChange
	add := func(format string, a ...any) {
		out = append(out, lang.SetupChange{File: p, What: fmt.Sprintf(format, a...)})
	}
	for _, k := range cargoKeys {
		if nv := dig(n, k...); nv != nil && !reflect.DeepEqual(dig(o, k...), nv) {
			add("changes [%s], which decides what cargo builds and runs at build time", strings.Join(k, "."))
		}
	}
	for _, t := range depTables(n) {
		od, _ := dig(o, t...).(map[string]any)
		nd, _ := dig(n, t...).(map[string]any)
		for _, name := range sortedKeys(nd) {
			prev, had := od[name]
			switch {
			case had && !reflect.DeepEqual(prev, nd[name]):
				add("changes the %s spec of %s", strings.Join(t, "."), lang.QuoteSetup(name))
			case !had && offRegistry(nd[name]):
				add("adds %s from a path, git or another registry", lang.QuoteSetup(name))
			}
		}
	}
	return out
}

// depTables are the dependency tables of a manifest, per target too.
func depTables(m map[string]any) [][]string {
	out := [][]string{{"dependencies"}, {"dev-dependencies"}}
	if t, ok := m["target"].(map[string]any); ok {
		for _, name := range sortedKeys(t) {
			out = append(out, []string{"target", name, "dependencies"}, []string{"target", name, "dev-dependencies"},
				[]string{"target", name, "build-dependencies"})
		}
	}
	return out
}

// offRegistry: a dependency from a path, git or a registry other than
// the default one.
func offRegistry(spec any) bool {
	m, ok := spec.(map[string]any)
	if !ok {
		return false
	}
	for _, k := range []string{"path", "git", "registry", "registry-index"} {
		if _, ok := m[k]; ok {
			return true
		}
	}
	return false
}

func dig(m map[string]any, keys ...string) any {
	var v any = m
	for _, k := range keys {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil
		}
		v = mm[k]
	}
	return v
}

// lockChanges lists packages Cargo.lock now takes in another version or
// from another source than before (new packages are new dependencies).
func lockChanges(p, old, cur string) []lang.SetupChange {
	had := map[string][]string{}
	for _, pk := range lockedPackages(old, false) {
		had[pk.Name] = append(had[pk.Name], pk.Version+" "+pk.Source)
	}
	var changed []string
	for _, pk := range lockedPackages(cur, false) {
		prev, ok := had[pk.Name]
		if pk.Source == "" {
			continue // the workspace's own or path crates: their files are checked themselves
		}
		if ok && !contains(prev, pk.Version+" "+pk.Source) {
			changed = append(changed, lang.QuoteSetup(pk.Name+" "+pk.Version+" "+pk.Source))
		}
	}
	if len(changed) == 0 {
		return nil
	}
	sort.Strings(changed)
	return []lang.SetupChange{{File: p, What: "locks packages to new versions or sources: " + strings.Join(changed, ", ")}}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

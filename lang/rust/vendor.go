package rust

import (
	"errors"
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/pelletier/go-toml/v2"
)

// ErrNotVendored is wrapped by [CheckVendored]'s error: the crate needs
// dependencies that the sandbox, which never reaches crates.io, cannot get.
var ErrNotVendored = errors.New("dependencies are not vendored")

const cratesIO = "registry+https://github.com/rust-lang/crates.io-index"

// lockedPackage is one [[package]] of Cargo.lock.
type lockedPackage struct {
	Name    string `toml:"name"`
	Version string `toml:"version"`
	Source  string `toml:"source"` // "" for the workspace's own and path crates
}

func (p lockedPackage) String() string { return p.Name + " " + p.Version }

// lockedPackages lists Cargo.lock's packages, only those from a registry
// or git when external is set. A lockfile that does not parse gives none:
// cargo reports it with its own words.
func lockedPackages(lock string, external bool) []lockedPackage {
	var l struct {
		Package []lockedPackage `toml:"package"`
	}
	if toml.Unmarshal([]byte(lock), &l) != nil {
		return nil
	}
	if !external {
		return l.Package
	}
	var out []lockedPackage
	for _, p := range l.Package {
		if p.Source != "" {
			out = append(out, p)
		}
	}
	return out
}

// cargoConfig is the part of .cargo/config.toml that replaces sources.
type cargoConfig struct {
	Source map[string]struct {
		ReplaceWith   string `toml:"replace-with"`
		Directory     string `toml:"directory"`
		LocalRegistry string `toml:"local-registry"`
		Git           string `toml:"git"`
		Registry      string `toml:"registry"`
	} `toml:"source"`
}

// replacement says where the packages of one source are vendored.
type replacement struct {
	dir   string // workspace-relative
	local bool   // a local registry (name-version.crate files), not a directory source
}

// CheckVendored reports, before any test runs, dependencies the sandbox
// cannot build: crates.io and git are out of reach, so every package that
// Cargo.lock takes from them must be vendored (`cargo vendor`, with the
// [source] replacement it prints in .cargo/config.toml) or in a local
// registry directory. The error names Cargo.lock, what is missing and the
// fix. A crate whose dependencies are all path dependencies passes.
func CheckVendored(snap *sandbox.Snapshot) error {
	m, err := readManifest(snap)
	if m == nil || err != nil {
		return err
	}
	lock, ok := snap.Text("Cargo.lock")
	if !ok {
		// Libraries often keep Cargo.lock out of git (and so out of the
		// sandbox): cargo then resolves offline from the vendored sources,
		// which must hold every crate Cargo.toml names.
		return checkUnlocked(snap)
	}
	pkgs := lockedPackages(lock, true)
	if len(pkgs) == 0 {
		return nil
	}
	repl, cfgName, err := replacements(snap)
	if err != nil {
		return err
	}
	var missing []string
	var noSource []string
	for _, p := range pkgs {
		r, ok := repl[sourceKey(p.Source)]
		if !ok {
			noSource = append(noSource, p.String())
			continue
		}
		if !vendored(snap, r, p) {
			missing = append(missing, p.String())
		}
	}
	switch {
	case len(noSource) > 0 && cfgName == "":
		return fmt.Errorf("%w: Cargo.lock needs %d packages from crates.io or git (%s), and there is no .cargo/config.toml replacing those sources with vendored copies; the sandbox cannot reach crates.io, so no test was run. Fix: run `cargo vendor` in the project and put the [source] section it prints into .cargo/config.toml", ErrNotVendored, len(noSource), list(noSource))
	case len(noSource) > 0:
		return fmt.Errorf("%w: Cargo.lock needs %s, whose source %s does not replace with a vendored directory; the sandbox cannot reach crates.io or git, so no test was run. Fix: run `cargo vendor` in the project and put the [source] section it prints into %s", ErrNotVendored, list(noSource), cfgName, cfgName)
	case len(missing) > 0:
		return fmt.Errorf("%w: Cargo.lock needs %s, which the vendored sources named in %s do not have; no test was run. Fix: run `cargo vendor` in the project again (Cargo.lock changed since the last one) and keep vendor/ with the project", ErrNotVendored, list(missing), cfgName)
	}
	return nil
}

// checkUnlocked checks a crate without Cargo.lock: a source replacement
// for crates.io must exist and hold every crate the manifests name.
func checkUnlocked(snap *sandbox.Snapshot) error {
	var names []string
	seen := map[string]bool{}
	for _, d := range (Language{}).Deps(snap) {
		if !seen[d.Name] {
			seen[d.Name] = true
			names = append(names, d.Name)
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return nil
	}
	repl, cfgName, err := replacements(snap)
	if err != nil {
		return err
	}
	r, ok := repl["crates-io"]
	if !ok {
		return fmt.Errorf("%w: Cargo.toml depends on %s from crates.io or git, and there is neither a Cargo.lock nor a .cargo/config.toml replacing crates.io with vendored copies; the sandbox cannot reach crates.io, so no test was run. Fix: run `cargo vendor` in the project (it writes Cargo.lock and vendor/), put the [source] section it prints into .cargo/config.toml, and keep them with the project", ErrNotVendored, list(names))
	}
	var missing []string
	for _, n := range names {
		if !vendoredAny(snap, r, n) {
			missing = append(missing, n)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("%w: Cargo.toml depends on %s, which the vendored sources named in %s do not have (and there is no Cargo.lock); no test was run. Fix: run `cargo vendor` in the project again and keep vendor/ with the project", ErrNotVendored, list(missing), cfgName)
	}
	return nil
}

// vendoredAny reports whether r holds some version of the crate name.
func vendoredAny(snap *sandbox.Snapshot, r replacement, name string) bool {
	for _, p := range snap.Paths() {
		rest, ok := strings.CutPrefix(p, r.dir+"/")
		if !ok {
			continue
		}
		if r.local {
			if strings.HasPrefix(rest, name+"-") && strings.HasSuffix(rest, ".crate") && !strings.Contains(rest, "/") {
				return true
			}
			continue
		}
		dir, file, _ := strings.Cut(rest, "/")
		if file == ".cargo-checksum.json" && (dir == name || strings.HasPrefix(dir, name+"-")) {
			return true
		}
	}
	return false
}

// sourceKey is how .cargo/config.toml names a Cargo.lock source:
// "crates-io" for crates.io, the git URL for git sources.
func sourceKey(src string) string {
	if src == cratesIO || strings.HasPrefix(src, "sparse+https://index.crates.io") {
		return "crates-io"
	}
	if u, ok := strings.CutPrefix(src, "git+"); ok {
		u, _, _ = strings.Cut(u, "#")
		u, _, _ = strings.Cut(u, "?")
		return "git:" + u
	}
	return src
}

// replacements reads .cargo/config.toml (or the older .cargo/config) and
// returns, per source key, where its packages are vendored.
func replacements(snap *sandbox.Snapshot) (map[string]replacement, string, error) {
	name := ""
	var data string
	for _, n := range []string{".cargo/config.toml", ".cargo/config"} {
		if t, ok := snap.Text(n); ok {
			name, data = n, t
			break
		}
	}
	out := map[string]replacement{}
	if name == "" {
		return out, "", nil
	}
	var cfg cargoConfig
	if err := toml.Unmarshal([]byte(data), &cfg); err != nil {
		return nil, name, fmt.Errorf("%s: %w", name, err)
	}
	for key, s := range cfg.Source {
		target, seen := s.ReplaceWith, map[string]bool{key: true}
		for target != "" && !seen[target] { // follow replace-with chains
			seen[target] = true
			t, ok := cfg.Source[target]
			if !ok {
				break
			}
			var r replacement
			switch {
			case t.Directory != "":
				r.dir = t.Directory
			case t.LocalRegistry != "":
				r.dir, r.local = t.LocalRegistry, true
			default:
				target = t.ReplaceWith
				continue
			}
			if rel, err := sandbox.CleanRel(r.dir); err == nil {
				r.dir = rel
				k := key
				if s.Git != "" {
					k = sourceKey("git+" + strings.TrimSuffix(s.Git, "/"))
				} else if key != "crates-io" && s.Registry != "" {
					k = "registry+" + s.Registry
				}
				out[k] = r
			}
			break
		}
	}
	return out, name, nil
}

// vendored reports whether p is in r: `cargo vendor` writes name/ (and
// name-version/ when two versions are needed), with the crate's
// Cargo.toml and .cargo-checksum.json; a local registry holds
// name-version.crate.
func vendored(snap *sandbox.Snapshot, r replacement, p lockedPackage) bool {
	if r.local {
		_, ok := snap.Files[path.Join(r.dir, p.Name+"-"+p.Version+".crate")]
		return ok
	}
	for _, d := range []string{p.Name + "-" + p.Version, p.Name} {
		dir := path.Join(r.dir, d)
		if _, ok := snap.Files[dir+"/.cargo-checksum.json"]; !ok {
			continue
		}
		text, ok := snap.Text(dir + "/Cargo.toml")
		if !ok {
			continue
		}
		var m struct {
			Package struct{ Version string } `toml:"package"`
		}
		if toml.Unmarshal([]byte(text), &m) == nil && m.Package.Version == p.Version {
			return true
		}
	}
	return false
}

func list(names []string) string {
	if len(names) > 8 {
		return strings.Join(names[:8], ", ") + fmt.Sprintf(" and %d more", len(names)-8)
	}
	return strings.Join(names, ", ")
}

// Check is [CheckVendored], the language's preflight check: it runs
// before any sandbox starts.
func (Language) Check(snap *sandbox.Snapshot) error { return CheckVendored(snap) }

package node

import (
	"encoding/json"
	"fmt"
	"path"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// lifecycleScripts are the package.json scripts npm, yarn or pnpm run on
// install (for the root package, workspace packages, and file:, link: or
// git dependencies, which are packed first): "dependencies" runs after
// node_modules changes (npm 8), the pack scripts when a git or directory
// dependency is packed.
var lifecycleScripts = []string{"preinstall", "install", "postinstall", "prepublish", "preprepare", "prepare",
	"postprepare", "prepack", "postpack", "dependencies", "pnpm:devPreinstall"}

// depTables are the package.json tables whose entries npm installs.
var depTables = []string{"dependencies", "devDependencies", "optionalDependencies", "peerDependencies"}

// installKeys are package.json keys that change what gets installed or
// run as a whole: overrides and resolutions replace any package's source,
// workspaces add packages (with their scripts), packageManager makes
// corepack download a package manager, bundled dependencies ship code,
// gypfile runs node-gyp, config reaches scripts as npm_package_config_*.
var installKeys = []string{"overrides", "resolutions", "pnpm", "workspaces", "packageManager",
	"bundleDependencies", "bundledDependencies", "gypfile", "config"}

// configFiles configure the installer itself: registries, scripts
// (.npmrc's script-shell, node-options), hooks (.pnpmfile.cjs) and yarn
// berry's yarnPath, plugins and zero-install cache (.yarn/).
var configFileRe = regexp.MustCompile(`(^|/)(\.npmrc|\.yarnrc|\.yarnrc\.yml|\.pnpmfile\.cjs|pnpmfile\.js|\.pnp\.c?js|\.pnp\.loader\.mjs|[^/]+\.gyp|[^/]+\.gypi)$|(^|/)\.yarn/`)

// lockfiles and what in them names where a package comes from.
var lockResolvedRe = map[string]*regexp.Regexp{
	"package-lock.json":   regexp.MustCompile(`"(?:resolved|version)"[ \t\r\n]*:[ \t\r\n]*"([^"]*)"`),
	"npm-shrinkwrap.json": regexp.MustCompile(`"(?:resolved|version)"[ \t\r\n]*:[ \t\r\n]*"([^"]*)"`),
	"yarn.lock":           regexp.MustCompile(`(?m)^[ \t]+(?:resolved|resolution|version):?[ \t]+"?([^"\n]*)"?[ \t]*$`),
	"pnpm-lock.yaml":      regexp.MustCompile(`(?m)^[ \t]+(?:tarball|resolution|version|'?/?[^\s:']+@[^\s:']+'?)[ \t]*:[ \t]*(.*)$`),
}

// SetupChanges: lifecycle scripts, dependency sources and version specs,
// overrides, the installer's configuration, node-gyp build files (npm
// runs `node-gyp rebuild` for a package with a binding.gyp), and lockfile
// entries that resolve to somewhere new.
func (Language) SetupChanges(before, after *sandbox.Snapshot, changed []string) []lang.SetupChange {
	var out []lang.SetupChange
	scripts := scriptFiles(before)
	for p, s := range scriptFiles(after) {
		scripts[p] = s
	}
	for _, p := range changed {
		old, hadOld := lang.FileBytes(before, p)
		cur, ok := lang.FileBytes(after, p)
		if !ok {
			continue // a deletion runs nothing new
		}
		if hadOld && string(old) == string(cur) {
			continue
		}
		base := path.Base(p)
		switch {
		case strings.HasPrefix(p, "node_modules/") || strings.Contains(p, "/node_modules/"):
			// The installer reads what is there (and npm 6 runs
			// node_modules/.hooks/*); copied into the setup container, it
			// lands in the cache.
			out = append(out, lang.SetupChange{File: p, What: "writes into node_modules, which the install step reads and may run"})
		case scripts[p] != "":
			out = append(out, lang.SetupChange{File: p, What: "changes a file the " + scripts[p] + " script runs at install"})
		case base == "package.json":
			out = append(out, manifestChanges(p, old, cur)...)
		case configFileRe.MatchString(p):
			out = append(out, lang.SetupChange{File: p, What: "changes the installer's configuration or build files, which the install step reads or runs"})
		case lockResolvedRe[base] != nil:
			out = append(out, lockChanges(p, lockResolvedRe[base], old, cur)...)
		}
	}
	return out
}

// manifestChanges compares two package.json files.
func manifestChanges(p string, old, cur []byte) []lang.SetupChange {
	var o, n map[string]json.RawMessage
	if json.Unmarshal(cur, &n) != nil {
		return []lang.SetupChange{{File: p, What: "is not valid JSON, so fixpoint cannot tell what the install step would run"}}
	}
	if json.Unmarshal(old, &o) != nil {
		o = nil // new, or unreadable before: everything in it is new
	}
	var out []lang.SetupChange
	add := func(format string, a ...any) {
		out = append(out, lang.SetupChange{File: p, What: fmt.Sprintf(format, a...)})
	}
	oldScripts, newScripts := stringMap(o["scripts"]), stringMap(n["scripts"])
	for _, s := range lifecycleScripts {
		if v, ok := newScripts[s]; ok && (oldScripts == nil || oldScripts[s] != v) {
			add("sets the %s script, which the install step runs: %s", s, lang.QuoteSetup(v))
		}
	}
	for _, t := range depTables {
		od, nd := stringMap(o[t]), stringMap(n[t])
		for _, name := range sortedKeys(nd) {
			spec := nd[name]
			prev, had := od[name]
			switch {
			case had && prev != spec:
				add("changes the %s spec of %s from %s to %s", t, lang.QuoteSetup(name), lang.QuoteSetup(prev), lang.QuoteSetup(spec))
			case !had && !registrySpec(spec):
				add("adds %s %s from %s (not a registry version)", t, lang.QuoteSetup(name), lang.QuoteSetup(spec))
			}
		}
		if n[t] != nil && nd == nil {
			add("has a %s table fixpoint cannot read", t)
		}
	}
	for _, k := range installKeys {
		if !jsonEqual(o[k], n[k]) && n[k] != nil {
			add("changes %s, which decides what the install step fetches or runs", k)
		}
	}
	return out
}

// scriptFiles maps the workspace files that lifecycle scripts name (as
// a word of the command, relative to their package.json) to the script
// that names them: `node scripts/patch.js` runs scripts/patch.js at every
// install, so an edit to it is an edit to the install.
func scriptFiles(s *sandbox.Snapshot) map[string]string {
	out := map[string]string{}
	if s == nil {
		return out
	}
	for p := range s.Files {
		if path.Base(p) != "package.json" {
			continue
		}
		data, _ := lang.FileBytes(s, p)
		var m map[string]json.RawMessage
		if json.Unmarshal(data, &m) != nil {
			continue
		}
		scripts := stringMap(m["scripts"])
		for _, name := range lifecycleScripts {
			for _, word := range strings.FieldsFunc(scripts[name], func(r rune) bool { return strings.ContainsRune(" \t;&|()<>'\"=`", r) }) {
				f := path.Clean(path.Join(path.Dir(p), word))
				if _, ok := s.Files[f]; ok && f != p {
					out[f] = name
				}
			}
		}
	}
	return out
}

// registrySpec reports whether a dependency spec names a version (or
// range, or tag) on the configured registry: ranges and tags never
// contain ':' or '/', which every other source does (file:, link:,
// git+https://, github:user/repo, user/repo, npm: aliases, tarball URLs,
// ./paths).
func registrySpec(spec string) bool {
	return !strings.ContainsAny(spec, ":/\\") && !strings.HasPrefix(strings.TrimSpace(spec), ".") && !strings.HasPrefix(strings.TrimSpace(spec), "~/")
}

// stringMap reads a JSON object; a value that is not a string keeps its
// JSON text, so a malformed entry still compares (npm may read it in
// ways fixpoint does not). nil when raw is absent or not an object.
func stringMap(raw json.RawMessage) map[string]string {
	if raw == nil {
		return nil
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		var s string
		if json.Unmarshal(v, &s) != nil {
			s = string(v)
		}
		out[k] = s
	}
	return out
}

func jsonEqual(a, b json.RawMessage) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	xa, _ := json.Marshal(x)
	ya, _ := json.Marshal(y)
	return string(xa) == string(ya)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// lockChanges lists the sources and versions a lockfile resolves to that
// it did not before: a version or URL the install step would now fetch.
func lockChanges(p string, re *regexp.Regexp, old, cur []byte) []lang.SetupChange {
	seen := map[string]bool{}
	key := func(m [][]byte) string { return strings.Join(strings.Fields(string(m[0])), "") }
	for _, m := range re.FindAllSubmatch(old, -1) {
		seen[key(m)] = true
	}
	var added []string
	for _, m := range re.FindAllSubmatch(cur, -1) {
		if k := key(m); !seen[k] {
			seen[k] = true
			v := strings.TrimSpace(string(m[1]))
			if v == "" {
				v = strings.TrimSpace(string(m[0])) // a pnpm package key: "/left-pad@1.3.0:"
			}
			added = append(added, v)
		}
	}
	if len(added) == 0 {
		return nil
	}
	slices.Sort(added)
	more := ""
	if len(added) > 3 {
		more = fmt.Sprintf(" and %d more", len(added)-3)
		added = added[:3]
	}
	var q []string
	for _, a := range added {
		q = append(q, lang.QuoteSetup(a))
	}
	return []lang.SetupChange{{File: p, What: "resolves packages to new versions or sources: " + strings.Join(q, ", ") + more}}
}

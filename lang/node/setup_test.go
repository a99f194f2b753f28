package node

import (
	"github.com/fixpoint-dev/fixpoint/lang/langtest"
	"testing"
)

func TestSetupChanges(t *testing.T) {
	const base = `{"name":"x","scripts":{"test":"node --test"},"dependencies":{"left-pad":"^1.3.0"}}`
	pj := func(s string) map[string]string { return map[string]string{"package.json": s} }
	langtest.RunSetupCases(t, Language{}, []langtest.SetupCase{
		{Name: "postinstall added", Before: pj(base),
			After: pj(`{"name":"x","scripts":{"test":"node --test","postinstall":"node evil.js"},"dependencies":{"left-pad":"^1.3.0"}}`),
			Want:  []string{`package.json: sets the postinstall script, which the install step runs: "node evil.js"`}},
		{Name: "every lifecycle script", Before: pj(`{}`),
			After: pj(`{"scripts":{"preinstall":"a","install":"b","prepare":"c","prepack":"d","dependencies":"e"}}`),
			Want:  []string{"preinstall", "sets the install script", "prepare", "prepack", "sets the dependencies script"}},
		{Name: "escaped key and non-string sibling", Before: pj(base),
			After: pj(`{"scripts":{"post\u0069nstall":"x","n":1},"dependencies":{"left-pad":"^1.3.0"}}`),
			Want:  []string{"postinstall"}},
		{Name: "lifecycle script changed", Before: pj(`{"scripts":{"prepare":"tsc"}}`), After: pj(`{"scripts":{"prepare":"tsc && curl x"}}`),
			Want: []string{`prepare script, which the install step runs: "tsc && curl x"`}},
		{Name: "control characters are quoted", Before: pj(`{}`), After: pj(`{"scripts":{"install":"x\u001b]0;t\u0007"}}`),
			Want: []string{`"x\x1b]0;t\a"`}},
		{Name: "workspace package's script", Before: map[string]string{"packages/a/package.json": `{}`},
			After: map[string]string{"packages/a/package.json": `{"scripts":{"postinstall":"x"}}`}, Want: []string{"packages/a/package.json: sets the postinstall"}},
		{Name: "version spec changed to a path", Before: pj(base), After: pj(`{"name":"x","scripts":{"test":"node --test"},"dependencies":{"left-pad":"file:../evil"}}`),
			Want: []string{`changes the dependencies spec of "left-pad" from "^1.3.0" to "file:../evil"`}},
		{Name: "new dependency from git", Before: pj(base), After: pj(`{"dependencies":{"left-pad":"^1.3.0","y":"git+https://e.x/y.git"},"scripts":{"test":"node --test"}}`),
			Want: []string{`adds dependencies "y" from "git+https://e.x/y.git"`}},
		{Name: "new sources of every kind", Before: pj(`{}`),
			After: pj(`{"devDependencies":{"a":"github:u/a","b":"u/b","c":"https://e.x/c.tgz","d":"npm:evil@1","e":"link:../e","f":"./f"}}`),
			Want:  []string{`"a"`, `"b"`, `"c"`, `"d"`, `"e"`, `"f"`}},
		{Name: "overrides and resolutions", Before: pj(`{}`), After: pj(`{"overrides":{"a":"file:x"},"resolutions":{"b":"1"}}`),
			Want: []string{"changes overrides", "changes resolutions"}},
		{Name: "installer configuration", Before: map[string]string{}, After: map[string]string{".npmrc": "registry=http://evil\n", ".pnpmfile.cjs": "x", ".yarnrc.yml": "yarnPath: x.js", "native/binding.gyp": "{}", ".yarn/plugins/p.cjs": "x"},
			Want: []string{".npmrc", ".pnpmfile.cjs", ".yarn/plugins/p.cjs", ".yarnrc.yml", "native/binding.gyp"}},
		{Name: "lockfile resolves somewhere new", Before: map[string]string{"package-lock.json": `{"packages":{"node_modules/a":{"version":"1.0.0","resolved":"https://registry.npmjs.org/a/-/a-1.0.0.tgz"}}}`},
			After: map[string]string{"package-lock.json": `{"packages":{"node_modules/a":{"version":"1.0.0","resolved":"https://evil.example/a.tgz"}}}`},
			Want:  []string{`package-lock.json: resolves packages to new versions or sources: "https://evil.example/a.tgz"`}},
		{Name: "yarn.lock resolves somewhere new", Before: map[string]string{"yarn.lock": "a@^1:\n  version \"1.0.0\"\n  resolved \"https://registry.yarnpkg.com/a/-/a-1.0.0.tgz\"\n"},
			After: map[string]string{"yarn.lock": "a@^1:\n  version \"1.0.0\"\n  resolved \"https://evil.example/a.tgz\"\n"},
			Want:  []string{`yarn.lock: resolves packages to new versions or sources: "https://evil.example/a.tgz"`}},
		{Name: "pnpm-lock.yaml takes a new version", Before: map[string]string{"pnpm-lock.yaml": "packages:\n  /a@1.0.0:\n    resolution: {integrity: sha512-x}\n"},
			After: map[string]string{"pnpm-lock.yaml": "packages:\n  /a@1.0.1:\n    resolution: {integrity: sha512-y}\n"},
			Want:  []string{`pnpm-lock.yaml: resolves packages to new versions or sources: "/a@1.0.1:", "{integrity: sha512-y}"`}},
		{Name: "lockfile reformatted only", Before: map[string]string{"package-lock.json": `{"packages":{"node_modules/a":{"version":"1.0.0"}}}`},
			After: map[string]string{"package-lock.json": "{\"packages\": {\"node_modules/a\": {\"version\": \"1.0.0\"}}}"}},
		{Name: "invalid JSON", Before: pj(base), After: pj(`{"scripts":`), Want: []string{"is not valid JSON"}},

		// Near misses: test infrastructure or harmless, not setup.
		{Name: "test script changed", Before: pj(base), After: pj(`{"name":"x","scripts":{"test":"node --test --foo"},"dependencies":{"left-pad":"^1.3.0"}}`)},
		{Name: "new registry dependency is left to the allow-list", Before: pj(base), After: pj(`{"name":"x","scripts":{"test":"node --test"},"dependencies":{"left-pad":"^1.3.0","lodash":"^4.17.21"}}`)},
		{Name: "reformatted", Before: pj(base), After: pj("{\n  \"name\": \"x\",\n  \"scripts\": {\"test\": \"node --test\"},\n  \"dependencies\": {\"left-pad\": \"^1.3.0\"}\n}\n")},
		{Name: "lifecycle script removed", Before: pj(`{"scripts":{"postinstall":"x"}}`), After: pj(`{"scripts":{}}`)},
		{Name: "source file", Before: map[string]string{"index.js": "a"}, After: map[string]string{"index.js": "b"}},
		{Name: "a file an existing postinstall runs", Before: map[string]string{"package.json": `{"scripts":{"postinstall":"node scripts/patch.js && echo ok"}}`, "scripts/patch.js": "a"},
			After: map[string]string{"package.json": `{"scripts":{"postinstall":"node scripts/patch.js && echo ok"}}`, "scripts/patch.js": "require('https').get('x')"},
			Want:  []string{"scripts/patch.js: changes a file the postinstall script runs at install"}},
		{Name: "installed output", Before: map[string]string{}, After: map[string]string{"node_modules/.hooks/postinstall": "#!/bin/sh\n"},
			Want: []string{"node_modules/.hooks/postinstall: writes into node_modules"}},
		{Name: "a file only the test script runs", Before: map[string]string{"package.json": `{"scripts":{"test":"node scripts/t.js"}}`, "scripts/t.js": "a"},
			After: map[string]string{"package.json": `{"scripts":{"test":"node scripts/t.js"}}`, "scripts/t.js": "b"}},
		{Name: "deleted .npmrc", Before: map[string]string{".npmrc": "x"}, After: map[string]string{}},
	})
}

// snapOf is a snapshot of files (path -> content).
var snapOf = langtest.SnapOf

// An npm workspaces root without dependencies of its own still installs
// (npm links the packages into node_modules: `require('@shape/util')`
// fails without it), keyed by the packages' manifests too.
func TestSetupStepWorkspaces(t *testing.T) {
	files := map[string]string{
		"package.json":               `{"private":true,"workspaces":["packages/*"]}`,
		"package-lock.json":          `{}`,
		"packages/util/package.json": `{"name":"@shape/util"}`,
		"packages/core/package.json": `{"name":"@shape/core","dependencies":{"@shape/util":"1.0.0"}}`,
		"other/x/package.json":       `{"name":"x"}`,
	}
	st := (Language{}).SetupStep(snapOf(files))
	if st == nil || st.Name != "npm ci" {
		t.Fatalf("SetupStep = %+v, want npm ci for a workspaces root", st)
	}
	want := map[string]bool{"packages/util/package.json": true, "packages/core/package.json": true}
	for _, in := range st.Inputs {
		delete(want, in)
		if in == "other/x/package.json" {
			t.Errorf("inputs include a package outside the workspaces: %v", st.Inputs)
		}
	}
	if len(want) != 0 {
		t.Errorf("inputs %v lack %v", st.Inputs, want)
	}
	files["package.json"] = `{"private":true,"workspaces":{"packages":["packages/*"]}}`
	if (Language{}).SetupStep(snapOf(files)) == nil {
		t.Errorf("the object form of workspaces gives no setup step")
	}
	files["package.json"] = `{"private":true}`
	if st := (Language{}).SetupStep(snapOf(files)); st != nil {
		t.Errorf("a root without dependencies or workspaces has a setup step: %+v", st)
	}
}

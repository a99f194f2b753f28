package setup

import (
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/node"
	"github.com/fixpoint-dev/fixpoint/lang/python"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

func snapOf(files map[string]string) *sandbox.Snapshot {
	s := &sandbox.Snapshot{Root: "/p", Files: map[string]sandbox.File{}}
	for k, v := range files {
		s.Files[k] = sandbox.File{Data: []byte(v)}
	}
	return s
}

func TestNewPlan(t *testing.T) {
	pkg := `{"devDependencies":{"jest":"1"}}`
	tests := []struct {
		name       string
		files      map[string]string
		override   string
		script     string // "" = no step script
		override2  string // Setup.Override
		image      string
		dockerfile string
		warn       string
	}{
		{name: "detected", files: map[string]string{"package.json": pkg, "package-lock.json": "{}"}, script: "npm ci --no-audit --no-fund"},
		{name: "config override", files: map[string]string{"package.json": pkg}, override: "make deps", script: "make deps", override2: ".fixpoint.toml ([sandbox] setup)"},
		{name: "off", files: map[string]string{"package.json": pkg}, override: "off"},
		{name: "devcontainer string", files: map[string]string{"package.json": pkg, ".devcontainer/devcontainer.json": `{
			// comments are allowed
			"image": "node:20", /* here too */
			"postCreateCommand": "npm ci && echo done",
		}`}, script: "npm ci && echo done", override2: ".devcontainer/devcontainer.json (postCreateCommand)", image: "node:20"},
		{name: "devcontainer argv", files: map[string]string{"package.json": pkg, ".devcontainer/devcontainer.json": `{"postCreateCommand": ["npm", "install", "--prefix", "a b"]}`},
			script: "npm install --prefix 'a b'", override2: ".devcontainer/devcontainer.json (postCreateCommand)"},
		{name: "devcontainer object", files: map[string]string{"package.json": pkg, ".devcontainer/devcontainer.json": `{"postCreateCommand": {"b": "two", "a": "one"}}`},
			script: "(one) && (two)", override2: ".devcontainer/devcontainer.json (postCreateCommand)"},
		{name: "devcontainer dockerfile", files: map[string]string{"package.json": pkg, ".devcontainer/devcontainer.json": `{"build": {"dockerfile": "Dockerfile"}}`},
			script: "npm install --no-audit --no-fund", dockerfile: "/p/.devcontainer/Dockerfile"},
		{name: "config beats devcontainer", files: map[string]string{"package.json": pkg, ".devcontainer/devcontainer.json": `{"postCreateCommand": "x"}`}, override: "y",
			script: "y", override2: ".fixpoint.toml ([sandbox] setup)"},
		{name: "devcontainer trailing comma then comment", files: map[string]string{"package.json": pkg, ".devcontainer/devcontainer.json": "{\"postCreateCommand\": \"npm ci\", // the last key\n}"},
			script: "npm ci", override2: ".devcontainer/devcontainer.json (postCreateCommand)"},
		{name: "devcontainer comment markers inside strings", files: map[string]string{"package.json": pkg, ".devcontainer.json": `{"image": "reg//x/*y*/", "postCreateCommand": ["echo", ",}", /* c */ ],}`},
			script: "echo ',}'", override2: ".devcontainer/devcontainer.json (postCreateCommand)", image: "reg//x/*y*/"},
		{name: "broken devcontainer", files: map[string]string{"package.json": pkg, ".devcontainer/devcontainer.json": `{`}, script: "npm install --no-audit --no-fund", warn: "devcontainer.json ignored"},
		{name: "broken engines", files: map[string]string{"package.json": `{"engines":{"node":"banana"}}`}, warn: "package.json (engines.node)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := NewPlan(registry.Detect(snapOf(tt.files)), snapOf(tt.files), tt.override)
			script, ov := "", ""
			if p.Step != nil {
				script, ov = p.Step.Script, p.Step.Override
			}
			if script != tt.script || ov != tt.override2 {
				t.Errorf("step = %q (%q), want %q (%q)", script, ov, tt.script, tt.override2)
			}
			if p.Image != tt.image || p.Dockerfile != tt.dockerfile {
				t.Errorf("image, dockerfile = %q, %q; want %q, %q", p.Image, p.Dockerfile, tt.image, tt.dockerfile)
			}
			w := strings.Join(p.Warnings, "\n")
			if (tt.warn == "") != (w == "") || !strings.Contains(w, tt.warn) {
				t.Errorf("warnings = %q, want %q", w, tt.warn)
			}
			if p.Step != nil && p.Step.Script != "" && len(p.Step.Caches) == 0 {
				t.Errorf("a node step has no caches: %+v", p.Step)
			}
		})
	}
}

func TestRuntimeErrorMessage(t *testing.T) {
	r, _ := python.ParseSpec(">=3.12")
	err := &RuntimeError{Req: &lang.Requirement{Runtime: "python", Constraint: ">=3.12", Source: "pyproject.toml (requires-python)", Range: r},
		Have: "3.11.2", Where: "the sandbox image fixpoint-sandbox-python", Why: "Debian bookworm has no other Python"}
	want := "pyproject.toml (requires-python) requires python >=3.12, but the sandbox image fixpoint-sandbox-python has python 3.11.2 (Debian bookworm has no other Python); no test was run. Fix: "
	if !strings.HasPrefix(err.Error(), want) || !strings.Contains(err.Error(), "[sandbox] image") {
		t.Errorf("Error() = %q, want prefix %q and a fix naming [sandbox] image", err.Error(), want)
	}
}

// The fix comes from the language that declared the requirement, which
// the error carries (setup does not look languages up by name).
func TestRuntimeErrorFixFromLanguage(t *testing.T) {
	r, _ := node.ParseRange(">=22")
	req := &lang.Requirement{Runtime: "node", Constraint: ">=22", Source: "package.json (engines.node)", Range: r}
	with := (&RuntimeError{Req: req, Lang: node.Language{}, Where: "image fixpoint-sandbox-node"}).Error()
	if !strings.Contains(with, node.Language{}.RuntimeFix(req)) {
		t.Errorf("Error() = %q, want node's own fix", with)
	}
	without := (&RuntimeError{Req: req, Where: "image fixpoint-sandbox-node"}).Error()
	if !strings.Contains(without, "set [sandbox] image to an image with a matching node") {
		t.Errorf("Error() without a language = %q, want the generic fix", without)
	}
}

// TestCacheKeyPerProject: two projects with the same manifests on the same
// image never share a dependency cache. The install runs the project's own
// scripts (a postinstall, a setup.py): a shared cache would let one
// project's install fill what another project's tests load.
func TestCacheKeyPerProject(t *testing.T) {
	files := map[string]string{"package.json": `{"devDependencies":{"jest":"1"}}`, "package-lock.json": "{}"}
	snap := snapOf(files)
	p := NewPlan(registry.Detect(snap), snap, "")
	if p.Step == nil {
		t.Fatal("a node project with dependencies has no setup step")
	}
	spec := func(project string) sandbox.Spec {
		return sandbox.Spec{Image: "fixpoint-sandbox-node", Labels: map[string]string{sandbox.LabelProject: project}}
	}
	a, a2 := CacheKey(p.Step, snap, spec("aaaa")), CacheKey(p.Step, snap, spec("aaaa"))
	b := CacheKey(p.Step, snap, spec("bbbb"))
	if a != a2 {
		t.Errorf("the same project's key changed between calls: %q, %q", a, a2)
	}
	if a == b {
		t.Errorf("projects aaaa and bbbb share the dependency cache key %q", a)
	}
	other := spec("aaaa")
	other.Image = "fixpoint-sandbox-node-22"
	if CacheKey(p.Step, snap, other) == a {
		t.Errorf("two images share the dependency cache key %q", a)
	}
}

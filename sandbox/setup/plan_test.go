package setup

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/golang"
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

// versionSession answers every command with a fixed version line: what a
// sandbox whose runtime cannot be chosen (bwrap: the host's) reports.
type versionSession struct{ out string }

func (s versionSession) Sync(context.Context, *sandbox.Snapshot) (sandbox.SyncStats, error) {
	return sandbox.SyncStats{}, nil
}
func (s versionSession) Run(context.Context, sandbox.Command) (*sandbox.Result, error) {
	return &sandbox.Result{Stdout: []byte(s.out)}, nil
}
func (s versionSession) ReadFile(context.Context, string) ([]byte, error) { return nil, nil }
func (s versionSession) Close() error                                     { return nil }

// TestCheckRuntimeAdvisory: engines.node that npm only warns about
// (jshttp/content-type: ">=22", run natively on node 20 with npm's
// EBADENGINE warning) runs on the host's node with the same warning;
// the same range made strict (.npmrc engine-strict, a yarn project, or
// .nvmrc, the version developers pin) still stops the run.
func TestCheckRuntimeAdvisory(t *testing.T) {
	pkg := `{"name":"p","engines":{"node":">=22"},"scripts":{"test":"node --test"}}`
	tests := []struct {
		name   string
		files  map[string]string
		refuse bool
	}{
		{"npm engines", map[string]string{"package.json": pkg}, false},
		{"npm engines with a lockfile", map[string]string{"package.json": pkg, "package-lock.json": `{"lockfileVersion":3}`}, false},
		{"engine-strict", map[string]string{"package.json": pkg, ".npmrc": "fund=false\nengine-strict = true\n"}, true},
		{"yarn", map[string]string{"package.json": pkg, "yarn.lock": "# yarn lockfile v1\n"}, true},
		{"nvmrc", map[string]string{"package.json": `{"name":"p"}`, ".nvmrc": "22\n"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			snap := snapOf(tt.files)
			plan := NewPlan(registry.Detect(snap), snap, "")
			if plan.Requirement == nil {
				t.Fatalf("no requirement read from %v", tt.files)
			}
			var warned []string
			err := CheckRuntime(t.Context(), versionSession{out: "v20.20.2\n"}, plan, "the host", func(l string) { warned = append(warned, l) })
			if tt.refuse {
				var re *RuntimeError
				if !errors.As(err, &re) || re.Have != "20.20.2" {
					t.Fatalf("CheckRuntime = %v, want a RuntimeError with node 20.20.2", err)
				}
				if len(warned) != 0 {
					t.Errorf("a refused run also warned: %q", warned)
				}
				return
			}
			if err != nil {
				t.Fatalf("CheckRuntime = %v, want the run to go on with a warning", err)
			}
			if len(warned) != 1 || !strings.Contains(warned[0], ">=22") || !strings.Contains(warned[0], "20.20.2") || !strings.Contains(warned[0], "engine-strict") {
				t.Errorf("warning = %q, want one naming the range, the version run and engine-strict", warned)
			}
		})
	}
	// A version inside the range: neither an error nor a warning.
	snap := snapOf(map[string]string{"package.json": pkg})
	var warned []string
	if err := CheckRuntime(t.Context(), versionSession{out: "v22.1.0\n"}, NewPlan(registry.Detect(snap), snap, ""), "the host", func(l string) { warned = append(warned, l) }); err != nil || len(warned) != 0 {
		t.Errorf("node 22.1.0 for >=22: err %v, warnings %q", err, warned)
	}
}

// TestInstallHintGoProxyMissing: a Go module proxy's 403 for a version it
// does not have names the version and go.mod, not credentials; npm's
// E403 still gets the credential hint.
func TestInstallHintGoProxyMissing(t *testing.T) {
	goErr := errors.New("install: `go mod download` exited with code 1:\ngo: github.com/google/go-cmp@v9.9.9: reading https://proxy.golang.org/github.com/google/go-cmp/@v/v9.9.9.info: 403 Forbidden\n\tserver response: This module version is not available.")
	got := installHint(golang.Language{}, goErr)
	if strings.Contains(got, "asked for credentials") || !strings.Contains(got, "go-cmp@v9.9.9") || !strings.Contains(got, "go.mod") {
		t.Errorf("go proxy 403 hint = %q, want the missing version and go.mod, not credentials", got)
	}
	npmErr := errors.New("install: `npm ci` exited with code 1:\nnpm error code E403\nnpm error 403 Forbidden - GET https://npm.corp/p")
	if got := installHint(node.Language{}, npmErr); !strings.Contains(got, "asked for credentials") {
		t.Errorf("npm E403 hint = %q, want the credential hint", got)
	}
}

// rustupSession answers `rustc --version` as the host's rustup does: the
// toolchain RUSTUP_TOOLCHAIN names when it is installed, an error when it
// is not, the default (stable) without it.
type rustupSession struct {
	versionSession
	installed map[string]string // toolchain name -> rustc --version output
}

func (s rustupSession) Run(_ context.Context, cmd sandbox.Command) (*sandbox.Result, error) {
	for _, e := range cmd.Env {
		if name, ok := strings.CutPrefix(e, "RUSTUP_TOOLCHAIN="); ok {
			if out, ok := s.installed[name]; ok {
				return &sandbox.Result{Stdout: []byte(out)}, nil
			}
			return &sandbox.Result{ExitCode: 1, Stderr: []byte("error: toolchain '" + name + "-x86_64-unknown-linux-gnu' is not installed\nhelp: run `rustup toolchain install` to install it\n\nStack backtrace:\n   0: anyhow\n")}, nil
		}
	}
	return &sandbox.Result{Stdout: []byte("rustc 1.95.0 (59807616e 2026-04-14)\n")}, nil
}

// TestCheckRuntimeChannel: a nightly or beta pin runs when the sandbox's
// rustup has that toolchain, and otherwise stops before any test with an
// error that names the file, the pinned channel, what the sandbox has
// (its stable rustc, and rustup's reason) and the fix.
func TestCheckRuntimeChannel(t *testing.T) {
	host := rustupSession{installed: map[string]string{"nightly": "rustc 1.97.0-nightly (e50aa6fba 2026-05-19)\n", "beta": "rustc 1.95.0 (59807616e 2026-04-14)\n"}}
	plan := func(files map[string]string) *Plan {
		snap := snapOf(files)
		return NewPlan(registry.Detect(snap), snap, "")
	}
	crate := func(file, text string) map[string]string {
		return map[string]string{"Cargo.toml": "[package]\nname = \"c\"\nversion = \"0.1.0\"\n", file: text}
	}
	if err := CheckRuntime(t.Context(), host, plan(crate("rust-toolchain.toml", "[toolchain]\nchannel = \"nightly\"\n")), "the host", nil); err != nil {
		t.Errorf("nightly pin, nightly installed: %v", err)
	}
	err := CheckRuntime(t.Context(), host, plan(crate("rust-toolchain", "nightly-2024-05-01\n")), "the host (bwrap)", nil)
	var re *RuntimeError
	if !errors.As(err, &re) || re.Have != "1.95.0 (stable)" {
		t.Fatalf("dated nightly not installed: %v, want a RuntimeError with the stable rustc", err)
	}
	msg := err.Error()
	for _, want := range []string{"rust-toolchain (channel nightly-2024-05-01)", "the host (bwrap) has rust 1.95.0 (stable)", "is not installed", "no test was run", "rustup toolchain install nightly-2024-05-01", "remove the pin from rust-toolchain"} {
		if !strings.Contains(msg, want) {
			t.Errorf("error %q lacks %q", msg, want)
		}
	}
	if strings.Contains(msg, "Stack backtrace") {
		t.Errorf("error carries rustup's backtrace: %q", msg)
	}
	// A "beta" toolchain that answers as a stable rustc is not beta.
	if err := CheckRuntime(t.Context(), host, plan(crate("rust-toolchain.toml", "[toolchain]\nchannel = \"beta\"\n")), "the host", nil); !errors.As(err, &re) {
		t.Errorf("beta pin answered by a stable rustc: %v, want a RuntimeError", err)
	}
	// A numbered pin is a minimum as before: no RUSTUP_TOOLCHAIN, the
	// stable rustc meets it.
	if err := CheckRuntime(t.Context(), host, plan(crate("rust-toolchain.toml", "[toolchain]\nchannel = \"1.78.0\"\n")), "the host", nil); err != nil {
		t.Errorf("1.78.0 pin on rustc 1.95.0: %v", err)
	}
}

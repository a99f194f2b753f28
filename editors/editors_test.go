package editors

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// serverKeys are the editor settings the server reads (config.MergeEditor);
// TestServerKeysAreRead keeps this list honest.
var serverKeys = []string{
	"model", "baseUrl", "sandbox", "image", "maxIterations", "testCmd", "dataDir",
	"memory", "runtime", "allowTestEdits", "temperature",
}

// serverCommands are the commands `fixpoint serve` advertises.
var serverCommands = []string{"fixpoint.solveGoal", "fixpoint.fixTests", "fixpoint.runTests", "fixpoint.cancel"}

// run runs name with args in dir and returns its combined output; it fails
// the test when the command fails.
func run(t *testing.T, timeout time.Duration, dir string, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

func abs(t *testing.T, rel string) string {
	t.Helper()
	p, err := filepath.Abs(rel)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestServerKeysAreRead(t *testing.T) {
	values := map[string]string{
		"model": `"m"`, "baseUrl": `"http://x.test/v1"`, "sandbox": `"none"`, "image": `"img"`,
		"maxIterations": `17`, "testCmd": `"make test"`, "dataDir": `"/d"`, "memory": `false`,
		"runtime": `"runsc"`, "allowTestEdits": `true`, "temperature": `0.3`,
	}
	for _, k := range serverKeys {
		t.Run(k, func(t *testing.T) {
			base := config.Defaults(func(string) string { return "" })
			c := *base
			if err := c.MergeEditor(json.RawMessage(`{"` + k + `":` + values[k] + `}`)); err != nil {
				t.Fatalf("MergeEditor(%s): %v", k, err)
			}
			a, _ := json.Marshal(base)
			b, _ := json.Marshal(&c)
			if bytes.Equal(a, b) && k != "memory" { // memory=false is checked below: Enabled is a pointer
				t.Errorf("MergeEditor({%q: %s}) changed nothing: the server does not read %q", k, values[k], k)
			}
			if k == "memory" && c.MemoryEnabled() {
				t.Errorf("MergeEditor({memory: false}) left memory on")
			}
		})
	}
}

func TestNeovimPlugin(t *testing.T) {
	nvim := sandboxtest.RequireCommand(t, "nvim")
	sandboxtest.RequireCommand(t, "python3")
	dir := abs(t, "nvim")
	out := run(t, 2*time.Minute, dir, []string{"TMPDIR=" + t.TempDir(), "HOME=" + t.TempDir()},
		nvim, "--headless", "-u", "NONE", "-i", "NONE", "--cmd", "set rtp+="+dir, "-c", "luafile tests/plugin_spec.lua")
	t.Log(out)
	m := regexp.MustCompile(`(\d+) tests, (\d+) failed`).FindStringSubmatch(out)
	if m == nil || m[2] != "0" || strings.Contains(out, "FAIL ") {
		t.Fatalf("plugin tests did not all pass:\n%s", out)
	}
	if m[1] == "0" {
		t.Fatal("no plugin tests ran")
	}
}

func TestNeovimLuaLoads(t *testing.T) {
	nvim := sandboxtest.RequireCommand(t, "nvim")
	dir := abs(t, "nvim")
	files, _ := filepath.Glob(filepath.Join(dir, "lua", "fixpoint", "*.lua"))
	if len(files) < 2 {
		t.Fatalf("want init.lua and health.lua, found %v", files)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			lua := `local ok, m = pcall(dofile, ` + strconvQuote(f) + `)
if not ok or type(m) ~= "table" then io.stderr:write(tostring(m)); vim.cmd("cquit 1") end
if m.setup == nil and m.check == nil then io.stderr:write("no setup or check"); vim.cmd("cquit 1") end`
			run(t, time.Minute, dir, nil, nvim, "--headless", "-u", "NONE", "-i", "NONE",
				"--cmd", "set rtp+="+dir, "-c", "lua "+lua, "-c", "qa!")
		})
	}
}

func strconvQuote(s string) string {
	b, _ := json.Marshal(s) // a JSON string is a valid Lua string literal for paths
	return string(b)
}

// TestNeovimHelpTags: the committed doc/tags is what :helptags makes of
// doc/fixpoint.txt now (regenerate with
// `nvim --headless -c 'helptags editors/nvim/doc' -c q`), it has the tags
// the docs promise, and `:help fixpoint` works from the runtimepath alone.
func TestNeovimHelpTags(t *testing.T) {
	nvim := sandboxtest.RequireCommand(t, "nvim")
	doc := t.TempDir()
	data, err := os.ReadFile("nvim/doc/fixpoint.txt")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(doc, "fixpoint.txt"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	run(t, time.Minute, doc, nil, nvim, "--headless", "-u", "NONE", "-i", "NONE",
		"-c", "try | helptags "+doc+" | catch | echo v:exception | cquit 1 | endtry", "-c", "qa!")
	tags, err := os.ReadFile(filepath.Join(doc, "tags"))
	if err != nil {
		t.Fatal(err)
	}
	committed, err := os.ReadFile("nvim/doc/tags")
	if err != nil {
		t.Fatalf("editors/nvim/doc/tags is missing: %v (generate it with nvim --headless -c 'helptags editors/nvim/doc' -c q)", err)
	}
	if !bytes.Equal(tags, committed) {
		t.Errorf("editors/nvim/doc/tags is stale; regenerate it with nvim --headless -c 'helptags editors/nvim/doc' -c q\n--- generated ---\n%s--- committed ---\n%s", tags, committed)
	}
	for _, want := range []string{":FixpointSolve", ":FixpointFix", ":FixpointTest", ":FixpointCancel", ":FixpointLog", "fixpoint.status()", "fixpoint-health", "fixpoint-lspconfig", "fixpoint-preview"} {
		if !bytes.Contains(tags, []byte(want+"\t")) {
			t.Errorf("help tags lack %q", want)
		}
	}
	for _, topic := range []string{"fixpoint", ":FixpointCancel", "fixpoint-preview"} {
		t.Run("help "+topic, func(t *testing.T) {
			run(t, time.Minute, t.TempDir(), []string{"HOME=" + t.TempDir()}, nvim, "--headless", "-u", "NONE", "-i", "NONE",
				"--cmd", "set rtp^="+abs(t, "nvim"),
				"-c", "try | help "+topic+" | catch | echo v:exception | cquit 1 | endtry",
				"-c", "if expand('%:t') !=# 'fixpoint.txt' | cquit 2 | endif", "-c", "qa!")
		})
	}
}

func TestEmacsRecipe(t *testing.T) {
	emacs := sandboxtest.RequireCommand(t, "emacs")
	dir := t.TempDir()
	src, err := os.ReadFile("emacs/fixpoint.el")
	if err != nil {
		t.Fatal(err)
	}
	el := filepath.Join(dir, "fixpoint.el")
	if err := os.WriteFile(el, src, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Run("byte-compiles without warnings", func(t *testing.T) {
		run(t, time.Minute, dir, nil, emacs, "--batch", "--eval", "(setq byte-compile-error-on-warn t)", "-f", "batch-byte-compile", el)
		if _, err := os.Stat(el + "c"); err != nil {
			t.Fatalf("no fixpoint.elc: %v", err)
		}
	})
	t.Run("eglot drives the fake server", func(t *testing.T) {
		sandboxtest.RequireCommand(t, "python3")
		project := t.TempDir()
		for _, d := range []string{".git", "pkg"} {
			if err := os.MkdirAll(filepath.Join(project, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(project, "pkg", "a.go"), []byte("package pkg\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		env := []string{
			"FIXPOINT_FAKE=" + abs(t, "nvim/tests/fake_server.py"),
			"FIXPOINT_LOG=" + filepath.Join(t.TempDir(), "log.jsonl"),
			"FIXPOINT_PROJECT=" + project,
			"HOME=" + t.TempDir(),
		}
		out := run(t, 2*time.Minute, abs(t, "emacs"), env, emacs, "--batch", "-L", ".", "-l", "fixpoint-test.el", "-f", "ert-run-tests-batch-and-exit")
		if !regexp.MustCompile(`Ran [1-9]\d* tests, (\d+) results as expected, 0 unexpected`).MatchString(out) {
			t.Fatalf("ert:\n%s", out)
		}
	})
}

func TestHelixRecipe(t *testing.T) {
	data, err := os.ReadFile("helix/languages.toml")
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		LanguageServer map[string]struct {
			Command string         `toml:"command"`
			Args    []string       `toml:"args"`
			Config  map[string]any `toml:"config"`
		} `toml:"language-server"`
		Language []struct {
			Name            string   `toml:"name"`
			LanguageServers []string `toml:"language-servers"`
		} `toml:"language"`
	}
	dec := toml.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("languages.toml: %v", err)
	}
	ls, ok := f.LanguageServer["fixpoint"]
	if !ok || ls.Command != "fixpoint" || !slices.Equal(ls.Args, []string{"serve"}) {
		t.Errorf("language-server.fixpoint = %+v, want command fixpoint, args [serve]", ls)
	}
	checkKeys(t, "helix config", ls.Config)
	if len(f.Language) == 0 {
		t.Fatal("no [[language]] entries")
	}
	for _, l := range f.Language {
		if !slices.Contains(l.LanguageServers, "fixpoint") {
			t.Errorf("language %s does not use fixpoint: %v", l.Name, l.LanguageServers)
		}
	}
}

func TestZedRecipe(t *testing.T) {
	data, err := os.ReadFile("zed/settings.json")
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		LSP map[string]struct {
			Binary struct {
				Path      string   `json:"path"`
				Arguments []string `json:"arguments"`
			} `json:"binary"`
			InitializationOptions map[string]any `json:"initialization_options"`
			Settings              map[string]any `json:"settings"`
		} `json:"lsp"`
		Languages map[string]struct {
			LanguageServers []string `json:"language_servers"`
		} `json:"languages"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		t.Fatalf("settings.json: %v", err)
	}
	fp, ok := s.LSP["fixpoint"]
	if !ok || fp.Binary.Path != "fixpoint" || !slices.Equal(fp.Binary.Arguments, []string{"serve"}) {
		t.Errorf("lsp.fixpoint = %+v, want binary fixpoint serve", fp)
	}
	checkKeys(t, "zed initialization_options", fp.InitializationOptions)
	checkKeys(t, "zed settings", fp.Settings)
	for name, l := range s.Languages {
		if !slices.Contains(l.LanguageServers, "fixpoint") {
			t.Errorf("language %s does not use fixpoint", name)
		}
	}
	var ext struct {
		ID              string `toml:"id"`
		LanguageServers map[string]struct {
			Name      string   `toml:"name"`
			Languages []string `toml:"languages"`
		} `toml:"language_servers"`
	}
	extData, err := os.ReadFile("zed/extension/extension.toml")
	if err != nil {
		t.Fatal(err)
	}
	if err := toml.Unmarshal(extData, &ext); err != nil {
		t.Fatalf("extension.toml: %v", err)
	}
	if ext.ID != "fixpoint" || len(ext.LanguageServers["fixpoint"].Languages) == 0 {
		t.Errorf("extension.toml = %+v, want id fixpoint and a fixpoint language server", ext)
	}
	for name := range s.Languages {
		if !slices.Contains(ext.LanguageServers["fixpoint"].Languages, name) {
			t.Errorf("settings.json uses fixpoint for %s, which extension.toml does not register", name)
		}
	}
}

// checkKeys fails for settings keys the server does not read.
func checkKeys(t *testing.T, where string, m map[string]any) {
	t.Helper()
	for k := range m {
		if !slices.Contains(serverKeys, k) {
			t.Errorf("%s: unknown server setting %q (known: %v)", where, k, serverKeys)
		}
	}
	raw, _ := json.Marshal(m)
	c := config.Defaults(func(string) string { return "" })
	if err := c.MergeEditor(raw); err != nil {
		t.Errorf("%s: the server rejects %s: %v", where, raw, err)
	}
}

func TestVSCodeExtension(t *testing.T) {
	sandboxtest.RequireCommand(t, "node")
	npm := sandboxtest.RequireCommand(t, "npm")
	dir := abs(t, "vscode")
	if _, err := os.Stat(filepath.Join(dir, "node_modules", ".package-lock.json")); err != nil {
		run(t, 10*time.Minute, dir, nil, npm, "ci", "--no-audit", "--no-fund")
	}
	t.Run("typecheck", func(t *testing.T) {
		run(t, 5*time.Minute, dir, nil, npm, "run", "typecheck")
	})
	t.Run("unit", func(t *testing.T) {
		out := run(t, 5*time.Minute, dir, nil, npm, "test")
		pass := regexp.MustCompile(`(?m)^# pass (\d+)$`).FindStringSubmatch(out)
		fail := regexp.MustCompile(`(?m)^# fail (\d+)$`).FindStringSubmatch(out)
		if pass == nil || pass[1] == "0" || fail == nil || fail[1] != "0" {
			t.Fatalf("npm test:\n%s", out)
		}
	})
	t.Run("server commands", func(t *testing.T) {
		src, err := os.ReadFile(filepath.Join(dir, "src", "commands.ts"))
		if err != nil {
			t.Fatal(err)
		}
		// fixpoint.listModels feeds VS Code's model picker; the other
		// clients take the model from their configuration.
		for _, c := range append(serverCommands, "fixpoint.listModels") {
			if !bytes.Contains(src, []byte("'"+c+"'")) {
				t.Errorf("commands.ts does not name server command %s", c)
			}
		}
	})
}

func TestClientsNameServerCommandsAndKeys(t *testing.T) {
	for _, f := range []string{"nvim/lua/fixpoint/init.lua", "emacs/fixpoint.el", "vscode/src/commands.ts", "nvim/tests/fake_server.py"} {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range serverCommands {
			if !bytes.Contains(src, []byte(c)) {
				t.Errorf("%s does not use server command %s", f, c)
			}
		}
	}
	src, err := os.ReadFile("vscode/src/settings.ts")
	if err != nil {
		t.Fatal(err)
	}
	sent := regexp.MustCompile(`out\.(\w+) =`).FindAllSubmatch(src, -1)
	if len(sent) == 0 {
		t.Fatal("settings.ts maps no server settings")
	}
	for _, m := range sent {
		if !slices.Contains(serverKeys, string(m[1])) {
			t.Errorf("settings.ts sends %q, which the server does not read", m[1])
		}
	}
}

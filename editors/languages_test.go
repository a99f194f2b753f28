package editors

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/pelletier/go-toml/v2"

	"github.com/fixpoint-dev/fixpoint/internal/editorgen"
	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
)

// TestRecipesAreGenerated fails when a committed recipe is not what
// `go generate ./editors` makes of it from the registered languages: a
// language added, changed or removed under lang/ without regenerating.
func TestRecipesAreGenerated(t *testing.T) {
	files, err := editorgen.Generate(registry.All(), os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 7 {
		t.Fatalf("Generate wrote %d recipes, want the 7 with language lists", len(files))
	}
	for _, p := range editorgen.Paths() {
		got, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(files[p]) {
			t.Errorf("editors/%s is stale: run `go generate ./editors`\n--- generated ---\n%s", p, files[p])
		}
	}
}

// TestEveryLanguageInEveryRecipe fails when a registered language is
// missing from one of the shipped editor recipes: each language says what
// the editors call it (lang.Editors), and each recipe must list those
// names, so a new language folder cannot be forgotten in an editor.
func TestEveryLanguageInEveryRecipe(t *testing.T) {
	recipes := recipeLanguages(t)
	for _, l := range registry.All() {
		e, ok := l.(lang.Editors)
		if !ok {
			t.Errorf("%s does not implement lang.Editors", l.Name())
			continue
		}
		n := e.EditorNames()
		want := map[string][]string{
			"vscode/src/languages.ts LANGUAGES":              n.VSCode,
			"vscode/package.json activationEvents":           prefixed("onLanguage:", n.VSCode),
			"helix/languages.toml [[language]]":              n.Helix,
			"zed/settings.json languages":                    n.Zed,
			"zed/extension/extension.toml languages":         n.Zed,
			"emacs/fixpoint.el fixpoint-major-modes":         n.Emacs,
			"nvim/lua/fixpoint/init.lua ROOT_MARKERS":        n.RootMarkers,
			"vscode/src/languages.ts PROJECT_MARKERS":        n.RootMarkers,
			"vscode/package.json activationEvents (markers)": prefixed("workspaceContains:", n.RootMarkers),
		}
		for recipe, names := range want {
			for _, name := range names {
				if !slices.Contains(recipes[recipe], name) {
					t.Errorf("%s: %s does not list %q (has %v)", l.Name(), recipe, name, recipes[recipe])
				}
			}
		}
	}
}

func prefixed(p string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = p + n
	}
	return out
}

// recipeLanguages reads the language lists of every recipe.
func recipeLanguages(t *testing.T) map[string][]string {
	t.Helper()
	read := func(p string) []byte {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		return data
	}
	out := map[string][]string{}

	ts := read("vscode/src/languages.ts")
	out["vscode/src/languages.ts LANGUAGES"] = quoted(t, ts, `export const LANGUAGES = \[([^\]]*)\]`)
	out["vscode/src/languages.ts PROJECT_MARKERS"] = quoted(t, ts, `export const PROJECT_MARKERS = \[([^\]]*)\]`)
	var pkg struct {
		ActivationEvents []string `json:"activationEvents"`
	}
	if err := json.Unmarshal(read("vscode/package.json"), &pkg); err != nil {
		t.Fatalf("vscode/package.json: %v", err)
	}
	out["vscode/package.json activationEvents"] = pkg.ActivationEvents
	out["vscode/package.json activationEvents (markers)"] = pkg.ActivationEvents

	var hx struct {
		Language []struct {
			Name string `toml:"name"`
		} `toml:"language"`
	}
	if err := toml.Unmarshal(read("helix/languages.toml"), &hx); err != nil {
		t.Fatalf("helix/languages.toml: %v", err)
	}
	for _, l := range hx.Language {
		out["helix/languages.toml [[language]]"] = append(out["helix/languages.toml [[language]]"], l.Name)
	}

	var zed struct {
		Languages map[string]json.RawMessage `json:"languages"`
	}
	if err := json.Unmarshal(read("zed/settings.json"), &zed); err != nil {
		t.Fatalf("zed/settings.json: %v", err)
	}
	for name := range zed.Languages {
		out["zed/settings.json languages"] = append(out["zed/settings.json languages"], name)
	}
	var ext struct {
		LanguageServers map[string]struct {
			Languages []string `toml:"languages"`
		} `toml:"language_servers"`
	}
	if err := toml.Unmarshal(read("zed/extension/extension.toml"), &ext); err != nil {
		t.Fatalf("zed/extension/extension.toml: %v", err)
	}
	out["zed/extension/extension.toml languages"] = ext.LanguageServers["fixpoint"].Languages

	m := regexp.MustCompile(`\(defcustom fixpoint-major-modes\s+(?:;;[^\n]*\n\s*)*'\(([^)]*)\)`).FindSubmatch(read("emacs/fixpoint.el"))
	if m == nil {
		t.Fatal("emacs/fixpoint.el: no (defcustom fixpoint-major-modes '(...))")
	}
	out["emacs/fixpoint.el fixpoint-major-modes"] = strings.Fields(string(m[1]))

	out["nvim/lua/fixpoint/init.lua ROOT_MARKERS"] = quoted(t, read("nvim/lua/fixpoint/init.lua"), `local ROOT_MARKERS = \{([^}]*)\}`)
	return out
}

// quoted returns the quoted strings in the first group of re's match.
func quoted(t *testing.T, src []byte, re string) []string {
	t.Helper()
	m := regexp.MustCompile(re).FindSubmatch(src)
	if m == nil {
		t.Fatalf("no match for %s", re)
	}
	var out []string
	for _, q := range regexp.MustCompile(`["']([^"']*)["']`).FindAllSubmatch(m[1], -1) {
		out = append(out, string(q[1]))
	}
	if len(out) == 0 {
		t.Fatalf("%s lists nothing", re)
	}
	return out
}

package editorgen

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/golang"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
)

// cobol is a sixth language that exists only here: a folder someone adds.
type cobol struct{ golang.Language }

func (cobol) Name() string { return "cobol" }
func (cobol) EditorNames() lang.EditorNames {
	return lang.EditorNames{
		VSCode: []string{"cobol"}, Helix: []string{"cobol"}, Zed: []string{"COBOL"},
		Emacs: []string{"cobol-mode"}, RootMarkers: []string{"cobol.toml"}, ProjectFiles: []string{"copybooks.ini"},
		HelixServer: "cobol-ls", ZedServer: "cobol-ls",
	}
}

func readEditors(p string) ([]byte, error) {
	return os.ReadFile(filepath.Join("..", "..", "editors", p))
}

// TestNewLanguageReachesEveryRecipe: a registered language lands in every
// recipe with no edit outside its folder, and the JSON stays JSON.
func TestNewLanguageReachesEveryRecipe(t *testing.T) {
	files, err := Generate(append(registry.All(), cobol{}), readEditors)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{
		"vscode/src/languages.ts":      {"'cobol'", "'cobol.toml'", "'copybooks.ini'", "'.fixpoint.toml'"},
		"vscode/package.json":          {`"onLanguage:cobol"`, `"workspaceContains:cobol.toml"`, `"workspaceContains:copybooks.ini"`, `"onCommand:fixpoint.goal"`},
		"helix/languages.toml":         {"name = \"cobol\"\nlanguage-servers = [\"cobol-ls\", \"fixpoint\"]", "[language-server.fixpoint]"},
		"zed/settings.json":            {`"COBOL": {`, `"language_servers": ["cobol-ls", "fixpoint"]`, `"maxIterations": 6`},
		"zed/extension/extension.toml": {`"COBOL"]`},
		"emacs/fixpoint.el":            {"cobol-mode)", "(defcustom fixpoint-settings"},
		"nvim/lua/fixpoint/init.lua":   {`".git", "go.mod"`, `"cobol.toml" }`},
	}
	for p, subs := range want {
		for _, s := range subs {
			if !strings.Contains(string(files[p]), s) {
				t.Errorf("Generate: editors/%s lacks %q:\n%s", p, s, files[p])
			}
		}
	}
	for _, p := range []string{"vscode/package.json", "zed/settings.json"} {
		var v map[string]any
		if err := json.Unmarshal(files[p], &v); err != nil {
			t.Errorf("editors/%s is no longer JSON: %v\n%s", p, err, files[p])
		}
	}
	var pkg struct{ ActivationEvents []string }
	_ = json.Unmarshal(files["vscode/package.json"], &pkg)
	if n := strings.Count(strings.Join(pkg.ActivationEvents, "\n"), "onCommand:"); n < 5 {
		t.Errorf("package.json kept %d onCommand events, want the extension's commands kept", n)
	}
}

func TestGenerateNeedsMarkers(t *testing.T) {
	read := func(p string) ([]byte, error) {
		b, err := readEditors(p)
		if p == "helix/languages.toml" {
			b = []byte(strings.ReplaceAll(string(b), "# "+End, ""))
		}
		return b, err
	}
	_, err := Generate(registry.All(), read)
	if err == nil || !strings.Contains(err.Error(), "editors/helix/languages.toml") || !strings.Contains(err.Error(), End) {
		t.Fatalf("Generate without an END marker = %v, want an error naming the file and the marker", err)
	}
}

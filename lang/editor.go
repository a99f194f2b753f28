package lang

// Editors is implemented by every language (lang/registry's contract test
// requires it): the names the editors give the language. The language
// lists of the shipped recipes under editors/ are generated from these
// (`go generate ./editors`, internal/editorgen), and editors' tests fail
// when a recipe is stale or misses a language, so a new language folder
// reaches every editor without an edit there.
type Editors interface {
	EditorNames() EditorNames
}

// EditorNames are a language's names in each editor fixpoint ships a
// recipe for.
type EditorNames struct {
	VSCode []string // language ids ("typescript"): editors/vscode/src/languages.ts, package.json's onLanguage events
	Helix  []string // [[language]] names: editors/helix/languages.toml
	Zed    []string // language names ("TypeScript"): editors/zed/settings.json and extension.toml
	Emacs  []string // major modes ("go-ts-mode"): fixpoint-major-modes in editors/emacs/fixpoint.el
	// RootMarkers are files at a project's root that make a directory a
	// project of the language ("Cargo.toml"): the Neovim plugin's root
	// markers and the VS Code extension's project markers.
	RootMarkers []string
	// HelixServer and ZedServer are the language servers those editors
	// usually run for the language ("gopls"); the recipes keep them first
	// (hover, completion) and add fixpoint after.
	HelixServer, ZedServer string
	// ProjectFiles are more files that mark a project of the language
	// ("pytest.ini") for VS Code's activation (workspaceContains) but are
	// no root markers: Neovim would root a project at a nested one.
	ProjectFiles []string
}

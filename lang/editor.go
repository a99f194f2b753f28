package lang

// Editors is implemented by every language (lang/registry's contract test
// requires it): the names the editors give the language, which the
// shipped recipes under editors/ must list for fixpoint to attach to its
// files. editors/languages_test.go fails when a recipe misses one, so a
// new language cannot be forgotten in an editor.
type Editors interface {
	EditorNames() EditorNames
}

// EditorNames are a language's names in each editor fixpoint ships a
// recipe for.
type EditorNames struct {
	VSCode []string // language ids ("typescript"): editors/vscode/src/languages.ts
	Helix  []string // [[language]] names: editors/helix/languages.toml
	Zed    []string // language names ("TypeScript"): editors/zed/settings.json and extension.toml
	Emacs  []string // major modes ("go-ts-mode"): fixpoint-major-modes in editors/emacs/fixpoint.el
	// RootMarkers are files at a project's root that make a directory a
	// project of the language ("Cargo.toml"): the Neovim plugin's root
	// markers and the VS Code extension's project markers.
	RootMarkers []string
}

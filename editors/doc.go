// Package editors holds the editor integrations of fixpoint, which are not
// Go: the VS Code extension (vscode/), the Neovim plugin (nvim/), and the
// Emacs, Helix and Zed recipes. Its tests check them: the Neovim plugin's
// headless tests, the extension's type check and unit tests, the elisp
// byte-compilation and eglot tests, and that every recipe parses and uses
// only settings and commands the server knows. The recipes' language lists
// are generated from the registered languages (`go generate ./editors`).
package editors

// The editor recipes' language lists come from lang/registry (internal/editorgen).
//go:generate go run ../internal/cmd/editorgen

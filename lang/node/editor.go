package node

import "github.com/fixpoint-dev/fixpoint/lang"

// EditorNames implements lang.Editors.
func (Language) EditorNames() lang.EditorNames {
	return lang.EditorNames{
		VSCode:      []string{"javascript", "typescript"},
		Helix:       []string{"javascript", "typescript"},
		Zed:         []string{"JavaScript", "TypeScript"},
		Emacs:       []string{"js-mode", "js-ts-mode", "typescript-mode", "typescript-ts-mode"},
		RootMarkers: []string{"package.json"},
		HelixServer: "typescript-language-server",
		ZedServer:   "typescript-language-server",
	}
}

package golang

import "github.com/fixpoint-dev/fixpoint/lang"

// EditorNames implements lang.Editors.
func (Language) EditorNames() lang.EditorNames {
	return lang.EditorNames{
		VSCode:      []string{"go"},
		Helix:       []string{"go"},
		Zed:         []string{"Go"},
		Emacs:       []string{"go-mode", "go-ts-mode"},
		RootMarkers: []string{"go.mod"},
		HelixServer: "gopls",
		ZedServer:   "gopls",
	}
}

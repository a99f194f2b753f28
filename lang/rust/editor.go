package rust

import "github.com/fixpoint-dev/fixpoint/lang"

// EditorNames implements lang.Editors.
func (Language) EditorNames() lang.EditorNames {
	return lang.EditorNames{
		VSCode:      []string{"rust"},
		Helix:       []string{"rust"},
		Zed:         []string{"Rust"},
		Emacs:       []string{"rust-mode", "rust-ts-mode"},
		RootMarkers: []string{"Cargo.toml"},
		HelixServer: "rust-analyzer",
		ZedServer:   "rust-analyzer",
	}
}

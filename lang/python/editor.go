package python

import "github.com/fixpoint-dev/fixpoint/lang"

// EditorNames implements lang.Editors.
func (Language) EditorNames() lang.EditorNames {
	return lang.EditorNames{
		VSCode:       []string{"python"},
		Helix:        []string{"python"},
		Zed:          []string{"Python"},
		Emacs:        []string{"python-mode", "python-ts-mode"},
		RootMarkers:  []string{"pyproject.toml"},
		HelixServer:  "pylsp",
		ZedServer:    "pyright",
		ProjectFiles: []string{"setup.cfg", "setup.py", "pytest.ini", "tox.ini"},
	}
}

package config

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestLoadAllowProtected(t *testing.T) {
	root := t.TempDir()
	text := "[policy]\nallow_protected = [\".vscode/launch.json\", \".github/workflows/*.yml\"]\n"
	if err := os.WriteFile(filepath.Join(root, ProjectFile), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir() // allow_protected is user-only: the user trusts this file
	getenv := env(map[string]string{"HOME": home})
	if _, err := (TrustStore{Dir: DefaultTrustDir(getenv)}).TrustConfig(root); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(LoadOptions{Root: root, Getenv: getenv})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{".vscode/launch.json", ".github/workflows/*.yml"}; !slices.Equal(cfg.Policy.AllowProtected, want) {
		t.Errorf("Policy.AllowProtected = %q, want %q", cfg.Policy.AllowProtected, want)
	}
}

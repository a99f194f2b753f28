package agent

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// TestSnapshotOptionsKeepSecretsOut: the snapshot every sandbox gets
// leaves secret files out unless include_secrets names them, and honours
// the other [sandbox] file settings.
func TestSnapshotOptionsKeepSecretsOut(t *testing.T) {
	dir := t.TempDir()
	for rel, text := range map[string]string{".env": "K=v", ".npmrc": "//r/:_authToken=x", "certs/server.key": "k",
		"test/fixtures/.env.example": "K=fixture", "main.py": "", "big.bin": strings.Repeat("x", 4096), "vendor/x.py": "",
		"__pycache__/main.cpython-311.pyc": "stale"} {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	tests := []struct {
		name  string
		files config.SandboxFiles
		want  []string
	}{
		{name: "defaults", want: []string{"big.bin", "main.py", "vendor/x.py"}},
		{name: "a fixture let in", files: config.SandboxFiles{IncludeSecrets: []string{"test/fixtures/.env.example"}},
			want: []string{"big.bin", "main.py", "test/fixtures/.env.example", "vendor/x.py"}},
		{name: "size and exclude", files: config.SandboxFiles{MaxFileSize: "1k", Exclude: []string{"vendor/"}}, want: []string{"main.py"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := config.Defaults(func(string) string { return "" })
			cfg.Sandbox.SandboxFiles = tt.files
			snap, err := sandbox.SnapshotDir(dir, SnapshotOptions(cfg))
			if err != nil {
				t.Fatal(err)
			}
			if got := snap.Paths(); !slices.Equal(got, tt.want) {
				t.Errorf("paths = %q, want %q (a language's cache dir, __pycache__, never enters)", got, tt.want)
			}
			if !slices.Contains(snap.GeneratedDirs, "node_modules") {
				t.Errorf("GeneratedDirs = %q, want the languages' (node_modules) for a Dockerfile's build context", snap.GeneratedDirs)
			}
			if s := SnapshotSummary(snap); !strings.Contains(s, "secret files (.env, .npmrc, certs/server.key") {
				t.Errorf("SnapshotSummary = %q, want the secret files named", s)
			}
		})
	}
}

func TestHoldsSecret(t *testing.T) {
	tests := []struct {
		rel, text string
		want      bool
	}{
		{".npmrc", "save-exact = true\n", false},
		{".npmrc", "engine-strict=true\nlegacy-peer-deps=true\n", false},
		{".npmrc", "//registry.npmjs.org/:_authToken=npm_abcdefghijklmnop\n", true},
		{".npmrc", "//registry.npmjs.org/:_authToken=${NPM_TOKEN}\n", false},
		{".npmrc", "_auth = dXNlcjpwYXNz\n", true},
		{".npmrc", "# _authToken=commented out\n", false},
		{"sub/.pypirc", "[pypi]\nusername = __token__\npassword = pypi-AgEIcHlwaS5vcmc\n", true},
		{".pypirc", "[distutils]\nindex-servers = pypi\n", false},
		{".yarnrc.yml", "npmAuthToken: \"abc123def\"\n", true},
		{".env", "", true},
		{"id_rsa", "anything", true},
	}
	for _, tt := range tests {
		if got := holdsSecret(tt.rel, []byte(tt.text)); got != tt.want {
			t.Errorf("holdsSecret(%q, %q) = %v, want %v", tt.rel, tt.text, got, tt.want)
		}
	}
}

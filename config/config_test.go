package config

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestLoadPrecedence(t *testing.T) {
	root := t.TempDir()
	home := t.TempDir()
	userDir := filepath.Join(home, ".config", "fixpoint")
	os.MkdirAll(userDir, 0o755)
	os.WriteFile(filepath.Join(userDir, "config.toml"), []byte("[model]\nname = \"user-model\"\n[agent]\nmax_iterations = 3\n"), 0o644)
	os.WriteFile(filepath.Join(root, ProjectFile), []byte("[agent]\nmax_iterations = 4\n[sandbox]\nimage = \"proj-image\"\n"), 0o644)
	// sandbox.image is user-only: the user trusted this file.
	if _, err := (TrustStore{Dir: DefaultTrustDir(env(map[string]string{"HOME": home}))}).TrustConfig(root); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name     string
		env      map[string]string
		editor   string
		flags    func(*Config)
		wantIter int
		wantImg  string
		wantMod  string
	}{
		{name: "files", env: map[string]string{"HOME": home}, wantIter: 4, wantImg: "proj-image", wantMod: "user-model"},
		{name: "env over files", env: map[string]string{"HOME": home, "FIXPOINT_MAX_ITERATIONS": "5", "FIXPOINT_IMAGE": "env-image"}, wantIter: 5, wantImg: "env-image", wantMod: "user-model"},
		{name: "editor over env", env: map[string]string{"HOME": home, "FIXPOINT_MODEL": "env-model"}, editor: `{"model":"ed-model","maxIterations":7}`, wantIter: 7, wantImg: "proj-image", wantMod: "ed-model"},
		{name: "flags over all", env: map[string]string{"HOME": home, "FIXPOINT_MAX_ITERATIONS": "5"}, editor: `{"maxIterations":7}`, flags: func(c *Config) { c.Agent.MaxIterations = 9 }, wantIter: 9, wantImg: "proj-image", wantMod: "user-model"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Load(LoadOptions{Root: root, Getenv: env(tt.env), Editor: []byte(tt.editor), Flags: tt.flags})
			if err != nil {
				t.Fatal(err)
			}
			if c.Agent.MaxIterations != tt.wantIter || c.Sandbox.Image != tt.wantImg || c.Model.Name != tt.wantMod {
				t.Errorf("got iter=%d image=%q model=%q, want %d %q %q", c.Agent.MaxIterations, c.Sandbox.Image, c.Model.Name, tt.wantIter, tt.wantImg, tt.wantMod)
			}
			if !c.Model.Configured() {
				t.Errorf("Configured() = false with a model name in the user file")
			}
		})
	}
}

func TestNotConfigured(t *testing.T) {
	c, err := Load(LoadOptions{Getenv: env(map[string]string{"HOME": t.TempDir()})})
	if err != nil {
		t.Fatal(err)
	}
	if c.Model.Configured() {
		t.Errorf("Configured() = true with no model settings")
	}
	if c.Agent.MaxIterations != 6 {
		t.Errorf("default MaxIterations = %d, want 6", c.Agent.MaxIterations)
	}
}

func TestFileErrors(t *testing.T) {
	tests := []struct {
		name, text, want string
	}{
		{name: "unknown key", text: "[agent]\nmax_iterations = 2\nmax_iteratons = 3\n", want: ".fixpoint.toml:3: unknown key \"agent.max_iteratons\""},
		{name: "bad type", text: "[agent]\n\nmax_iterations = \"six\"\n", want: ".fixpoint.toml:3"},
		{name: "bad duration", text: "[agent]\nwall_budget = \"soon\"\n", want: ".fixpoint.toml:2"},
		{name: "syntax", text: "[agent\n", want: ".fixpoint.toml:1"},
		{name: "bad enum", text: "[sandbox]\nbackend = \"vm\"\n", want: "sandbox.backend"},
		{name: "bad test env name", text: "[test]\nenv = { \"A=B\" = \"1\" }\n", want: "test.env.A=B: not a variable name"},
		{name: "test env not a string", text: "[test]\nenv = { CI = true }\n", want: ".fixpoint.toml:2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			os.WriteFile(filepath.Join(root, ProjectFile), []byte(tt.text), 0o644)
			_, err := Load(LoadOptions{Root: root, Getenv: env(map[string]string{"HOME": t.TempDir()})})
			if err == nil || !errors.Is(err, ErrInvalid) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("Load(%q) error = %v, want ErrInvalid containing %q", tt.text, err, tt.want)
			}
		})
	}
}

// TestTestEnv: [test] env reaches the config as written, inline or as a
// table, and is empty by default.
func TestTestEnv(t *testing.T) {
	tests := []struct {
		name, text string
		want       map[string]string
	}{
		{name: "default", text: "", want: nil},
		{name: "inline", text: "[test]\nenv = { CI = \"true\", TZ = \"UTC\" }\n", want: map[string]string{"CI": "true", "TZ": "UTC"}},
		{name: "table", text: "[test.env]\nFORCE_COLOR = \"1\"\n", want: map[string]string{"FORCE_COLOR": "1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			os.WriteFile(filepath.Join(root, ProjectFile), []byte(tt.text), 0o644)
			c, err := Load(LoadOptions{Root: root, Getenv: env(map[string]string{"HOME": t.TempDir()})})
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(c.Test.Env, tt.want) {
				t.Errorf("Load(%q).Test.Env = %v, want %v", tt.text, c.Test.Env, tt.want)
			}
		})
	}
}

func TestEnvErrors(t *testing.T) {
	_, err := Load(LoadOptions{Getenv: env(map[string]string{"HOME": t.TempDir(), "FIXPOINT_MAX_ITERATIONS": "x"})})
	if err == nil || !strings.Contains(err.Error(), "FIXPOINT_MAX_ITERATIONS") {
		t.Errorf("error = %v, want one naming FIXPOINT_MAX_ITERATIONS", err)
	}
}

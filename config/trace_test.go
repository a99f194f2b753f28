package config

import (
	"os"
	"path/filepath"
	"testing"
)

// agent.trace is on by default and a project file may turn it off (it
// changes what the model is shown, never the verdict: a project key).
func TestAgentTraceKey(t *testing.T) {
	none := func(string) string { return "" }
	c, err := Load(LoadOptions{UserFile: "-", Getenv: none})
	if err != nil {
		t.Fatal(err)
	}
	if !c.TraceEnabled() {
		t.Error("agent.trace is off by default, want on")
	}
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, ".fixpoint.toml"), []byte("[agent]\ntrace = false\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err = Load(LoadOptions{Root: root, UserFile: "-", Getenv: none, TrustDir: "-"})
	if err != nil {
		t.Fatal(err)
	}
	if c.TraceEnabled() {
		t.Error("a project file's agent.trace = false was not applied")
	}
}

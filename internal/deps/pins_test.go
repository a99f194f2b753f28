package deps

import (
	"os"
	"regexp"
	"testing"
)

// TestDependencyPins fails when a module is moved off the version that
// shared/DEPS.md verified. jsonrpc2 v1 is a rewrite that protocol v0.12.0
// does not build on; pkg/errors below v0.9.1 breaks the docker client;
// hujson has no tagged release, so its pseudo-version is the one verified.
func TestDependencyPins(t *testing.T) {
	data, err := os.ReadFile("../../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	pins := []struct{ module, version string }{
		{"go.lsp.dev/jsonrpc2", "v0.10.0"},
		{"go.lsp.dev/protocol", "v0.12.0"},
		{"go.lsp.dev/uri", "v0.3.0"},
		{"github.com/sashabaranov/go-openai", "v1.43.0"},
		{"github.com/docker/docker", "v28.5.2+incompatible"},
		{"github.com/philippgille/chromem-go", "v0.7.0"},
		{"github.com/pkg/errors", "v0.9.1"},
		{"github.com/tailscale/hujson", "v0.0.0-20260727124030-b80ff77dac4f"},
	}
	for _, p := range pins {
		re := regexp.MustCompile(`(?m)^\s*(?:require\s+)?` + regexp.QuoteMeta(p.module) + `\s+(\S+)`)
		m := re.FindSubmatch(data)
		if m == nil {
			t.Errorf("go.mod does not require %s", p.module)
			continue
		}
		if got := string(m[1]); got != p.version {
			t.Errorf("go.mod requires %s %s, want %s (see shared/DEPS.md before upgrading)", p.module, got, p.version)
		}
	}
}

package golang

import (
	"strings"
	"testing"
)

// TestInstallHint: the module proxy's answer for a version it does not
// have (this machine's proxy answers 403 "This module version is not
// available.") is read as that, not as a registry asking for credentials;
// other failures are left to the generic reading.
func TestInstallHint(t *testing.T) {
	missing := "go: github.com/google/go-cmp@v9.9.9: reading https://proxy.golang.org/github.com/google/go-cmp/@v/v9.9.9.info: 403 Forbidden\n\tserver response: This module version is not available.\n"
	got := Language{}.InstallHint("setup: `go mod download` exited with code 1:\n" + missing)
	for _, want := range []string{"proxy.golang.org", "github.com/google/go-cmp@v9.9.9", "This module version is not available.", "go.mod", "no credentials"} {
		if !strings.Contains(got, want) {
			t.Errorf("hint lacks %q:\n%s", want, got)
		}
	}
	gone := "go: example.com/x@v1.0.0: reading https://goproxy.example/example.com/x/@v/v1.0.0.mod: 410 Gone\n\tserver response: not found: example.com/x@v1.0.0: invalid version: unknown revision v1.0.0\n"
	if got := (Language{}).InstallHint(gone); !strings.Contains(got, "goproxy.example") || !strings.Contains(got, "example.com/x@v1.0.0") {
		t.Errorf("410 from another proxy: hint = %q", got)
	}
	for _, other := range []string{
		// A proxy that wants credentials, and git asking for them: those
		// are the generic credential hint's.
		"go: example.com/p@v1.0.0: reading https://goproxy.corp/example.com/p/@v/v1.0.0.info: 403 Forbidden\n\tserver response: authentication required\n",
		"go: git.corp/p@v1.0.0: git ls-remote -q origin: fatal: could not read Username for 'https://git.corp': terminal prompts disabled\n",
		"go: updates to go.mod needed; to update it:\n\tgo mod tidy\n",
	} {
		if got := (Language{}).InstallHint(other); got != "" {
			t.Errorf("InstallHint(%q) = %q, want none", other, got)
		}
	}
}

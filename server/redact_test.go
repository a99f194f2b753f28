package server

import (
	"encoding/base64"
	"strings"
	"testing"
)

// TestDefaultRedactMasksEnvironmentSecrets: what the server sends the
// client as a message is masked with the environment's secret values (the
// API key, a proxy password), in their encoded forms too, not only with
// token shapes.
func TestDefaultRedactMasksEnvironmentSecrets(t *testing.T) {
	const key = "fxk-Q7w2Er9Ty4Ui1Op8As3D"
	t.Setenv("HTTPS_PROXY", "http://alice:pr0xyPassw0rd@proxy.corp:3128")
	s := New(&Options{Getenv: func(k string) string {
		if k == "FIXPOINT_API_KEY" {
			return key
		}
		return ""
	}})
	for _, text := range []string{
		"model said: bad key " + key,
		"encoded " + base64.StdEncoding.EncodeToString([]byte(key)),
		"proxy refused pr0xyPassw0rd",
	} {
		got := s.opts.Redact(text)
		for _, canary := range []string{key, base64.StdEncoding.EncodeToString([]byte(key))[:24], "pr0xyPassw0rd"} {
			if strings.Contains(got, canary) {
				t.Errorf("Redact(%q) = %q keeps %q", text, got, canary)
			}
		}
	}
}

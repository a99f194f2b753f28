package image

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/docker/docker/api/types/registry"
)

// TestRegistryAuth: the environment variable wins, then docker login's
// inline entry for the host (with or without a scheme), then a credential
// helper; a host nobody logged in to gets no credentials.
func TestRegistryAuth(t *testing.T) {
	dir := t.TempDir()
	bin := t.TempDir()
	// A credential helper that knows one server, as docker-credential-* do.
	helper := "#!/bin/sh\nread url\nif [ \"$url\" = helped.example.com ]; then echo '{\"Username\":\"h\",\"Secret\":\"hs\"}'; else echo 'credentials not found in native keychain'; exit 1; fi\n"
	if err := os.WriteFile(filepath.Join(bin, "docker-credential-fptest"), []byte(helper), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATH", bin+":"+os.Getenv("PATH"))
	inline := base64.StdEncoding.EncodeToString([]byte("u:p"))
	cfg := `{"auths":{"https://inline.example.com":{"auth":"` + inline + `"},"helped.example.com":{}},"credsStore":"fptest","credHelpers":{"only.example.com":"fptest"}}`
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, host, env string
		user, pass      string
		source          string
		wantErr         string
	}{
		{name: "env", host: "inline.example.com", env: "e:ep", user: "e", pass: "ep", source: EnvRegistryAuth},
		{name: "bad env", host: "x", env: "nocolon", wantErr: "USER:PASSWORD"},
		{name: "inline", host: "inline.example.com", user: "u", pass: "p", source: filepath.Join(dir, "config.json")},
		{name: "store", host: "helped.example.com", user: "h", pass: "hs", source: "docker-credential-fptest"},
		{name: "helper not knowing the host", host: "only.example.com", source: "none"},
		{name: "nobody", host: "other.example.com", source: "none"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string {
				switch k {
				case "DOCKER_CONFIG":
					return dir
				case EnvRegistryAuth:
					return tc.env
				}
				return ""
			}
			enc, source, err := RegistryAuth(t.Context(), tc.host, getenv)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("RegistryAuth(%s) error %v, want %q", tc.host, err, tc.wantErr)
				}
				return
			}
			if err != nil || source != tc.source {
				t.Fatalf("RegistryAuth(%s) = source %q, %v; want %q", tc.host, source, err, tc.source)
			}
			if tc.user == "" {
				if enc != "" {
					t.Errorf("RegistryAuth(%s) = %q, want no credentials", tc.host, enc)
				}
				return
			}
			ac, err := registry.DecodeAuthConfig(enc)
			if err != nil || ac.Username != tc.user || ac.Password != tc.pass || ac.ServerAddress != tc.host {
				t.Errorf("RegistryAuth(%s) = %+v, %v; want %s:%s for %s", tc.host, ac, err, tc.user, tc.pass, tc.host)
			}
		})
	}
}

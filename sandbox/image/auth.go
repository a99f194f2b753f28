package image

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"github.com/docker/docker/api/types/registry"
)

// EnvRegistryAuth is the environment variable that carries registry
// credentials for `fixpoint sandbox images push` as USER:PASSWORD (or
// USER:TOKEN). When unset, the credentials `docker login` (or `podman
// login`) stored for the registry's host are used.
const EnvRegistryAuth = "FIXPOINT_REGISTRY_AUTH"

// RegistryAuth returns the encoded X-Registry-Auth value for host and
// where it came from ("FIXPOINT_REGISTRY_AUTH", a config file, a
// credential helper, or "none": an empty value, for registries that take
// anonymous pushes). Credentials come from the user's environment and
// login files only, never from a workspace, and the returned value must
// not be logged. getenv is os.Getenv in production.
func RegistryAuth(ctx context.Context, host string, getenv func(string) string) (string, string, error) {
	if v := getenv(EnvRegistryAuth); v != "" {
		user, pass, ok := strings.Cut(v, ":")
		if !ok || user == "" || pass == "" {
			return "", "", fmt.Errorf("%s: want USER:PASSWORD (or USER:TOKEN)", EnvRegistryAuth)
		}
		enc, err := registry.EncodeAuthConfig(registry.AuthConfig{Username: user, Password: pass, ServerAddress: host})
		return enc, EnvRegistryAuth, err
	}
	for _, file := range loginFiles(getenv) {
		data, err := os.ReadFile(file)
		if errors.Is(err, os.ErrNotExist) {
			continue
		} else if err != nil {
			return "", "", fmt.Errorf("read registry logins: %w", err)
		}
		ac, source, found, err := fromLoginFile(ctx, data, host)
		if err != nil {
			return "", "", fmt.Errorf("%s: %w", file, err)
		}
		if !found {
			continue
		}
		if source == "" {
			source = file
		}
		ac.ServerAddress = host
		enc, err := registry.EncodeAuthConfig(ac)
		return enc, source, err
	}
	return "", "none", nil
}

// loginFiles are where `docker login` and `podman login` keep
// credentials, in the order they are consulted.
func loginFiles(getenv func(string) string) []string {
	var out []string
	if d := getenv("DOCKER_CONFIG"); d != "" {
		out = append(out, filepath.Join(d, "config.json"))
	} else if h := getenv("HOME"); h != "" {
		out = append(out, filepath.Join(h, ".docker", "config.json"))
	}
	if f := getenv("REGISTRY_AUTH_FILE"); f != "" {
		out = append(out, f)
	} else if r := getenv("XDG_RUNTIME_DIR"); r != "" {
		out = append(out, filepath.Join(r, "containers", "auth.json"))
	}
	return out
}

// loginFile is the part of ~/.docker/config.json (and Podman's auth.json)
// that holds credentials.
type loginFile struct {
	Auths       map[string]loginEntry `json:"auths"`
	CredsStore  string                `json:"credsStore"`
	CredHelpers map[string]string     `json:"credHelpers"`
}

type loginEntry struct {
	Auth          string `json:"auth"` // base64 of USER:PASSWORD
	IdentityToken string `json:"identitytoken"`
}

// fromLoginFile finds host's credentials in a login file: a credential
// helper for the host, an inline entry, then the default store.
func fromLoginFile(ctx context.Context, data []byte, host string) (registry.AuthConfig, string, bool, error) {
	var lf loginFile
	if err := json.Unmarshal(data, &lf); err != nil {
		return registry.AuthConfig{}, "", false, fmt.Errorf("not JSON: %w", err)
	}
	keys := []string{host, "https://" + host, "http://" + host}
	if host == "docker.io" {
		keys = append(keys, "https://index.docker.io/v1/", "index.docker.io")
	}
	for _, k := range keys {
		if h := lf.CredHelpers[k]; h != "" {
			return fromHelper(ctx, h, k)
		}
	}
	for _, k := range keys {
		e, ok := lf.Auths[k]
		if !ok {
			continue
		}
		var ac registry.AuthConfig
		if e.Auth != "" {
			raw, err := base64.StdEncoding.DecodeString(e.Auth)
			if err != nil {
				return ac, "", false, fmt.Errorf("auths[%q].auth is not base64", k)
			}
			ac.Username, ac.Password, _ = strings.Cut(string(raw), ":")
		}
		ac.IdentityToken = e.IdentityToken
		if ac.Username != "" || ac.IdentityToken != "" {
			return ac, "", true, nil
		}
		if lf.CredsStore != "" {
			return fromHelper(ctx, lf.CredsStore, k) // docker login with a store leaves an empty entry
		}
	}
	return registry.AuthConfig{}, "", false, nil
}

// helperName reports whether s is a plain helper name (no path).
func helperName(s string) bool {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return s != ""
}

// fromHelper asks docker-credential-NAME for key's credentials (the
// credential helper protocol: the server URL on stdin, JSON on stdout).
func fromHelper(ctx context.Context, name, key string) (registry.AuthConfig, string, bool, error) {
	if !helperName(name) {
		return registry.AuthConfig{}, "", false, fmt.Errorf("credential helper %q: not a helper name", name)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	bin := "docker-credential-" + name
	cmd := exec.CommandContext(ctx, bin, "get")
	cmd.Stdin = strings.NewReader(key)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		if strings.Contains(out.String()+errOut.String(), "credentials not found") {
			return registry.AuthConfig{}, "", false, nil
		}
		return registry.AuthConfig{}, "", false, fmt.Errorf("%s get %s: %w", bin, key, err) // its output may hold a secret: not shown
	}
	var cred struct{ Username, Secret string }
	if err := json.Unmarshal(out.Bytes(), &cred); err != nil {
		return registry.AuthConfig{}, "", false, fmt.Errorf("%s get %s: its answer is not JSON", bin, key)
	}
	ac := registry.AuthConfig{Username: cred.Username, Password: cred.Secret}
	if cred.Username == "<token>" {
		ac = registry.AuthConfig{IdentityToken: cred.Secret}
	}
	return ac, bin, true, nil
}

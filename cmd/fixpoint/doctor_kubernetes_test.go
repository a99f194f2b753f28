package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestDoctorKubernetesNamesKubeconfig: with backend = "kubernetes" and a
// kubeconfig that is missing, doctor's cluster check fails naming the
// file, the key to set and what to do.
func TestDoctorKubernetesNamesKubeconfig(t *testing.T) {
	cfg := config.Defaults(func(string) string { return "" })
	cfg.Sandbox.Backend = config.BackendKubernetes
	cfg.Sandbox.Kubernetes.Kubeconfig = filepath.Join(t.TempDir(), "cluster.kubeconfig")
	ch := checkKubernetes(t.Context(), cfg)
	if ch.Status != "fail" {
		t.Fatalf("checkKubernetes = %+v, want fail", ch)
	}
	for _, want := range []string{cfg.Sandbox.Kubernetes.Kubeconfig, "sandbox.kubernetes.kubeconfig"} {
		if !strings.Contains(ch.Detail+ch.Fix, want) {
			t.Errorf("checkKubernetes = %+v, want it to name %q", ch, want)
		}
	}
}

// TestDoctorKubernetesCacheStorage: on the test cluster (no default
// StorageClass), doctor warns that dependency setup has nowhere to put its
// caches and names the key; with the CI class set it names that class.
func TestDoctorKubernetesCacheStorage(t *testing.T) {
	kubeconfig := sandboxtest.RequireKubeconfig(t)
	cfg := config.Defaults(func(string) string { return "" })
	cfg.Sandbox.Backend = config.BackendKubernetes
	cfg.Sandbox.Kubernetes.Kubeconfig = kubeconfig
	ch := checkKubernetes(t.Context(), cfg)
	if ch.Status != "warn" || !strings.Contains(ch.Detail, "no default StorageClass") || !strings.Contains(ch.Fix, "sandbox.kubernetes.cache_storage_class") {
		t.Errorf("without a cache class: %+v, want a warning naming sandbox.kubernetes.cache_storage_class", ch)
	}
	cfg.Sandbox.Kubernetes.CacheStorageClass = "fixpoint-ci-local"
	ch = checkKubernetes(t.Context(), cfg)
	if ch.Status != "ok" || !strings.Contains(ch.Detail, "dependency caches: StorageClass fixpoint-ci-local") {
		t.Errorf("with the CI class: %+v", ch)
	}
	cfg.Sandbox.Kubernetes.CacheStorageClass = "no-such-class"
	if ch = checkKubernetes(t.Context(), cfg); ch.Status != "warn" || !strings.Contains(ch.Detail, "no-such-class") || !strings.Contains(ch.Detail, "does not exist") {
		t.Errorf("with a missing class: %+v", ch)
	}
}

// TestDoctorKubernetesImages: doctor says where sandbox pods get their
// images, and warns, with the push command, when a registry is named but
// nothing was pushed there (every pod would fail to start).
func TestDoctorKubernetesImages(t *testing.T) {
	kubeconfig := sandboxtest.RequireKubeconfig(t)
	cfg := config.Defaults(func(string) string { return "" })
	cfg.Sandbox.Backend = config.BackendKubernetes
	cfg.Sandbox.Kubernetes.Kubeconfig = kubeconfig
	cfg.Sandbox.Kubernetes.CacheStorageClass = "fixpoint-ci-local"
	ch := checkKubernetes(t.Context(), cfg)
	if ch.Status != "ok" || !strings.Contains(ch.Detail, "images: the nodes' own") {
		t.Errorf("without a registry: %+v, want ok and the nodes' own images", ch)
	}
	cfg.Sandbox.Kubernetes.ImageRegistry = "registry.example.test:5000/team"
	ch = checkKubernetes(t.Context(), cfg)
	if ch.Status != "warn" || !strings.Contains(ch.Fix, "fixpoint sandbox images push registry.example.test:5000/team") {
		t.Errorf("registry, nothing pushed: %+v, want a warning with the push command", ch)
	}
	cfg.Sandbox.Kubernetes.ImageTags = map[string]string{"go": "sha256-aa", "python": "sha256-bb"}
	ch = checkKubernetes(t.Context(), cfg)
	if ch.Status != "ok" || !strings.Contains(ch.Detail, "images: registry.example.test:5000/team (pushed, pinned by digest: go, python)") {
		t.Errorf("registry with two languages pushed: %+v", ch)
	}
}

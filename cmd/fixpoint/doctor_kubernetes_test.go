package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/config"
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

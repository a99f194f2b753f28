package agent

import (
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// STAND-IN until sandbox/backends.SpecFor lands.
func specFor(cfg *config.Config, snap *sandbox.Snapshot) sandbox.Spec {
	img := cfg.Sandbox.Image
	if img == "" {
		switch snap.Language() {
		case "go":
			img = "fixpoint-sandbox-go"
		case "node":
			img = "fixpoint-sandbox-node"
		default:
			img = "fixpoint-sandbox-python"
		}
	}
	return sandbox.Spec{Image: img, Limits: limits(cfg), Labels: map[string]string{"fixpoint.component": "agent"}}
}

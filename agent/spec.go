package agent

import (
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/backends"
)

// specFor is the session spec: image by language, limits from the config
// (sandbox/backends).
func specFor(cfg *config.Config, snap *sandbox.Snapshot) sandbox.Spec {
	spec := backends.SpecFor(cfg, snap)
	if spec.Labels == nil {
		spec.Labels = map[string]string{}
	}
	spec.Labels["fixpoint.component"] = "agent"
	return spec
}

package agent

import (
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/backends"
)

// specFor is the session spec: image by language l (detected by the
// caller; nil: the registry's fallback language's image), limits from the
// config (sandbox/backends).
func specFor(cfg *config.Config, l lang.Language, snap *sandbox.Snapshot) sandbox.Spec {
	spec := backends.SpecFor(cfg, l, registry.Fallback(), snap)
	if spec.Labels == nil {
		spec.Labels = map[string]string{}
	}
	spec.Labels["fixpoint.component"] = "agent"
	return spec
}

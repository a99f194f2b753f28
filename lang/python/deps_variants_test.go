package python

import (
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// A dependency in any requirements*.txt is a dependency (held-out mutation
// audit: only requirements.txt was read by a plausible bug).
func TestDepsInRequirementsVariants(t *testing.T) {
	s := &sandbox.Snapshot{Files: map[string]sandbox.File{
		"requirements-dev.txt":  {Data: []byte("left-pad==1.0\n")},
		"requirements/test.txt": {Data: []byte("x\n")},
	}}
	found := false
	for _, d := range (Language{}).Deps(s) {
		if d.Name == "left-pad" {
			found = true
		}
	}
	if !found {
		t.Errorf("Deps = %+v, want left-pad from requirements-dev.txt", (Language{}).Deps(s))
	}
}

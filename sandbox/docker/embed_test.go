package docker

import (
	"bytes"
	"os"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox/docker/internal/supsum"
)

// TestSupervisorNotStale fails when the supervisor's sources changed
// without `go generate ./sandbox/docker`, which rebuilds the embedded
// binaries and supervisor.sum.
func TestSupervisorNotStale(t *testing.T) {
	sum, err := supsum.Sources(".")
	if err != nil {
		t.Fatal(err)
	}
	if sum != supervisorID() {
		t.Fatalf("embedded supervisor is stale: sources hash %s, supervisor.sum says %s; run `go generate ./sandbox/docker` and commit the result", sum, supervisorID())
	}
	for _, arch := range supsum.Arches() {
		disk, err := os.ReadFile(supsum.BinaryName(arch))
		if err != nil {
			t.Fatal(err)
		}
		emb, ok := supervisorBinary(arch)
		if !ok || !bytes.Equal(disk, emb) || len(emb) < 1<<20 {
			t.Errorf("supervisorBinary(%q) does not match %s (%d bytes)", arch, supsum.BinaryName(arch), len(disk))
		}
	}
}

package host_test

import (
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/host"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

func TestSnapshotFidelity(t *testing.T) {
	b, err := host.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	sandboxtest.SnapshotFidelity(t, b, sandbox.Spec{Limits: sandbox.Limits{Timeout: 30 * time.Second}})
}

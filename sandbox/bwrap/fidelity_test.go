package bwrap_test

import (
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/bwrap"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

func TestSnapshotFidelity(t *testing.T) {
	sandboxtest.RequireCommand(t, "bwrap")
	b, err := bwrap.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	sandboxtest.SnapshotFidelity(t, b, sandbox.Spec{Limits: sandbox.Limits{Timeout: 30 * time.Second}})
}

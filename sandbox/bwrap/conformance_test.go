package bwrap_test

import (
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent/redact"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/bwrap"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestConformance runs the contract every backend keeps (sandboxtest).
func TestConformance(t *testing.T) {
	sandboxtest.RequireCommand(t, "bwrap")
	b, err := bwrap.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Check(t.Context()); err != nil {
		t.Fatalf("bwrap does not work here: %v", err)
	}
	sandboxtest.Conformance(t, b, sandbox.Spec{}, redact.IsSecretPath)
}

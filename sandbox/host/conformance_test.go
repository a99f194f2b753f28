package host_test

import (
	"io"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent/redact"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/host"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestConformance runs the contract every backend keeps (sandboxtest).
func TestConformance(t *testing.T) {
	b, err := host.New(&host.Options{Warn: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	sandboxtest.Conformance(t, b, sandbox.Spec{}, redact.IsSecretPath)
}

package dockerproxy_test

import (
	"testing"

	"github.com/docker/docker/client"

	"github.com/fixpoint-dev/fixpoint/internal/dockerproxy"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// proxied starts a proxy in front of the real engine and a client that
// talks through it; both are closed when t ends.
func proxied(t *testing.T) (*dockerproxy.Proxy, *client.Client) {
	t.Helper()
	sandboxtest.RequireDocker(t)
	p, err := dockerproxy.Start(nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	cli, err := client.NewClientWithOpts(client.WithHost(p.Host()), client.WithAPIVersionNegotiation())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cli.Close() })
	return p, cli
}

func TestCut(t *testing.T) {
	p, cli := proxied(t)
	if _, err := cli.Ping(t.Context()); err != nil {
		t.Fatalf("ping through the proxy: %v", err)
	}
	p.Cut()
	if _, err := cli.Ping(t.Context()); err == nil {
		t.Fatal("ping after Cut succeeded, want an error")
	}
	if !client.IsErrConnectionFailed(func() error { _, err := cli.Ping(t.Context()); return err }()) {
		t.Error("after Cut the client does not see a connection failure")
	}
}

// TestRestore: after Cut and Restore the same client reaches the engine
// again through the same Host.
func TestRestore(t *testing.T) {
	p, cli := proxied(t)
	if err := p.Restore(); err != nil {
		t.Fatalf("Restore of a proxy that is not cut: %v", err)
	}
	for i := range 2 {
		p.Cut()
		if _, err := cli.Ping(t.Context()); !client.IsErrConnectionFailed(err) {
			t.Fatalf("round %d: ping after Cut: %v, want a connection failure", i, err)
		}
		if err := p.Restore(); err != nil {
			t.Fatalf("round %d: Restore: %v", i, err)
		}
		if _, err := cli.Ping(t.Context()); err != nil {
			t.Fatalf("round %d: ping after Restore: %v", i, err)
		}
	}
}

package docker

import (
	"archive/tar"
	"bytes"
	"context"
	"testing"

	"github.com/docker/docker/api/types/volume"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestRefillBrokenSupervisorVolume plants a volume whose supervisor is
// garbage, as a crash in the middle of filling it would leave, and checks
// that Start refills it and succeeds.
func TestRefillBrokenSupervisorVolume(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	const image = "fixpoint-sandbox-python"
	sandboxtest.RequireImage(t, cli, image)
	b, err := New(t.Context(), &Options{Client: cli, NoReap: true})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	b.supervisorVolume = newSessionName() + "-test-supervisor"
	t.Cleanup(func() { cli.VolumeRemove(context.Background(), b.supervisorVolume, true) })
	if _, err := cli.VolumeCreate(t.Context(), volume.CreateOptions{Name: b.supervisorVolume, Labels: map[string]string{LabelCache: "test"}}); err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	junk := []byte("#!/nonexistent\n")
	tw.WriteHeader(&tar.Header{Name: "supervisor", Mode: 0o755, Size: int64(len(junk)), Typeflag: tar.TypeReg})
	tw.Write(junk)
	tw.Close()
	if err := b.fillVolume(t.Context(), image, b.supervisorVolume, &buf); err != nil {
		t.Fatal(err)
	}
	sess, err := b.Start(t.Context(), sandbox.Spec{Image: image})
	if err != nil {
		t.Fatalf("Start with a broken supervisor volume: %v", err)
	}
	defer sess.Close()
	res, err := sess.Run(t.Context(), sandbox.Command{Args: []string{"echo", "repaired"}})
	if err != nil || string(res.Stdout) != "repaired\n" {
		t.Fatalf("Run = %+v, %v", res, err)
	}
}

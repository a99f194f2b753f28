package docker_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// TestHostToolCopy: a Copy host tool (the rustup toolchain a native run
// uses) is a read-only copy at its Target, first on PATH, for the test
// session and for the setup step; what Skip names, and a symlink inside
// the toolchain (to a host file outside it), are not copied; a tool
// without Copy (bwrap's rustup proxies) is not offered on docker.
func TestHostToolCopy(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, testImage)
	b, err := docker.New(t.Context(), &docker.Options{Client: cli})
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	host := t.TempDir()
	tc := filepath.Join(host, "toolchains", "stable-x86_64-unknown-linux-gnu")
	secret := filepath.Join(host, "secret")
	other := filepath.Join(host, "cargo-bin")
	for _, d := range []string{filepath.Join(tc, "bin"), filepath.Join(tc, "lib"), filepath.Join(tc, "share", "doc"), other} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	files := map[string]string{
		filepath.Join(tc, "bin", "rustc"):           "#!/bin/sh\necho rustc 9.9.9-host\n",
		filepath.Join(tc, "lib", "librustc.so"):     "lib\n",
		filepath.Join(tc, "share", "doc", "a.html"): "doc\n",
		filepath.Join(other, "rustc"):               "#!/bin/sh\necho the proxy\n",
		secret:                                      "host-secret-canary\n",
	}
	for p, c := range files {
		if err := os.WriteFile(p, []byte(c), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(secret, filepath.Join(tc, "lib", "evil")); err != nil {
		t.Fatal(err)
	}
	tools := []sandbox.HostTool{
		{Dir: other, OnPath: true},
		{Dir: tc, Copy: true, Target: "/opt/fixpoint/rust-toolchain", OnPath: true, Skip: []string{"share"}, Key: "stable 9.9.9", Env: []string{"TOOL_COPIED=1"}},
		{Copy: true, Note: "a note without a directory offers nothing"},
	}
	sess, err := b.Start(t.Context(), sandbox.Spec{Image: testImage, HostTools: tools})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	s := sess.(*docker.Session)
	vols := s.ToolVolumes()
	t.Cleanup(func() {
		s.Close()
		for _, v := range vols {
			cli.VolumeRemove(context.Background(), v, true)
		}
	})
	if len(vols) != 1 {
		t.Fatalf("tool volumes %v, want one", vols)
	}
	script := `rustc; echo "env=$TOOL_COPIED"; ls /opt/fixpoint/rust-toolchain; ls /opt/fixpoint/rust-toolchain/lib; ` +
		`cat /opt/fixpoint/rust-toolchain/lib/evil 2>&1; ls ` + other + ` 2>&1; touch /opt/fixpoint/rust-toolchain/x 2>&1; true`
	res, err := s.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", script}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	out := string(res.Stdout) + string(res.Stderr)
	for _, want := range []string{"rustc 9.9.9-host\n", "env=1\n", "bin\nlib\n", "librustc.so\n", "Read-only file system"} {
		if !strings.Contains(out, want) {
			t.Errorf("session output %q lacks %q", out, want)
		}
	}
	for _, bad := range []string{"share", "host-secret-canary", "evil\n", "the proxy"} {
		if strings.Contains(out, bad) {
			t.Errorf("session output %q shows %q: skipped, symlinked or non-copy tool content reached the sandbox", out, bad)
		}
	}

	// The setup step (cargo test --no-run for Rust) runs the same one.
	key := "hosttool-" + strings.ReplaceAll(time.Now().Format("150405.000000"), ".", "")
	project := "hosttooltest" + key
	res2, err := b.Install(t.Context(), sandbox.InstallSpec{
		Image: testImage, Key: key, Labels: map[string]string{sandbox.LabelProject: project},
		Snapshot:  &sandbox.Snapshot{Files: map[string]sandbox.File{}},
		Script:    "rustc > /deps/out/rustc",
		HostTools: tools,
		Caches:    []sandbox.CacheDir{{Name: "out", Target: "/deps/out"}},
		Limits:    sandbox.Limits{Timeout: 2 * time.Minute},
	})
	if err != nil {
		t.Fatalf("Install: %v", err)
	}
	t.Cleanup(func() {
		list, _ := cli.VolumeList(context.Background(), volume.ListOptions{Filters: filters.NewArgs(filters.Arg("label", sandbox.LabelProject+"="+project))})
		for _, v := range list.Volumes {
			cli.VolumeRemove(context.Background(), v.Name, true)
		}
		for _, m := range res2.Mounts {
			cli.VolumeRemove(context.Background(), m.Source, true)
		}
		cli.VolumeRemove(context.Background(), "fixpoint-deps-"+key+"-done", true)
	})
	s2, err := b.Start(t.Context(), sandbox.Spec{Image: testImage, Caches: res2.Mounts})
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer s2.Close()
	res, err = s2.Run(t.Context(), sandbox.Command{Args: []string{"cat", "/deps/out/rustc"}})
	if err != nil || string(res.Stdout) != "rustc 9.9.9-host\n" {
		t.Errorf("the setup step ran %q (%v), want the copied toolchain's rustc", res.Stdout, err)
	}
}

package rust_test

import (
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang/rust"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/backends"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/setup"
)

// TestDockerRunsHostToolchain: with rustup's cargo on the host (CI's
// machine has it, as bwrap's Rust tests need), a docker session and its
// setup step run the rustc a native `cargo test` in the project runs,
// not the image's Debian 1.63, and the setup phase says so.
func TestDockerRunsHostToolchain(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	sandboxtest.RequireImage(t, cli, image)
	cargo, err := exec.LookPath("cargo")
	if err != nil {
		t.Fatalf("this test needs rustup's cargo on PATH: %v", err)
	}
	if real, _ := filepath.EvalSymlinks(cargo); filepath.Base(real) != "rustup" {
		t.Fatalf("cargo on PATH (%s) is not rustup's; this test checks that docker runs rustup's toolchain", real)
	}
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "Cargo.toml"), []byte("[package]\nname = \"tc\"\nversion = \"0.1.0\"\nedition = \"2021\"\n"), 0o644)
	os.MkdirAll(filepath.Join(root, "src"), 0o755)
	os.WriteFile(filepath.Join(root, "src", "lib.rs"), []byte("#[test]\nfn t() {}\n"), 0o644)
	cmd := exec.Command("rustc", "--version")
	cmd.Dir = root // rustup's choice for the project
	want, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	cfg := testConfig(t)
	be, err := backends.Open(t.Context(), cfg, &backends.Options{Warn: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	defer be.(io.Closer).Close()
	removeNewTargetCaches(t, cli)
	snap, err := sandbox.SnapshotDir(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	spec := backends.SpecFor(cfg, rust.Language{}, nil, snap)
	var said []string
	plan := setup.NewPlan(rust.Language{}, snap, "")
	if err := setup.New(be, &setup.Options{Progress: func(l string) { said = append(said, l) }}).Prepare(t.Context(), &spec, snap, plan); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(said, "\n"), "rust: running the host's rustup toolchain") {
		t.Errorf("setup said %q, want which toolchain runs", said)
	}
	sess, err := be.Start(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, err := sess.Sync(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	res, err := sess.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", "rustc --version; command -v cargo; ls " + rust.TargetCache + "/debug >/dev/null && echo built"}})
	if err != nil {
		t.Fatal(err)
	}
	out := string(res.Stdout)
	if !strings.HasPrefix(out, string(want)) || !strings.Contains(out, rust.ToolchainTarget+"/bin/cargo\n") {
		t.Errorf("the session runs %q, want the host's %q from %s", out, want, rust.ToolchainTarget)
	}
	if !strings.Contains(out, "built\n") {
		t.Errorf("the setup step built nothing: %q", out)
	}
}

package sandboxtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// fidelityScript runs inside a sandbox after a fidelity workspace was
// synced; it prints one line per failed expectation and "FIDELITY OK".
const fidelityScript = `
fail() { echo "FAIL: $*"; bad=1; }
bad=0
cat .env 2>/dev/null && fail ".env is readable in the sandbox"
test -e .env && fail ".env exists in the sandbox"
test -e keys/id_rsa && fail "keys/id_rsa exists in the sandbox"
test "$(cat test/fixtures/.env.example)" = "TOKEN=fixture" || fail "the include_secrets fixture is missing"
test -L test/data.json || fail "test/data.json is not a symlink"
test "$(readlink test/data.json)" = "../fixtures/data.json" || fail "test/data.json points to $(readlink test/data.json)"
test "$(cat test/data.json)" = "{}" || fail "test/data.json does not read through"
test -L libdir && test "$(cat libdir/a.js)" = "1" || fail "libdir is not a working directory symlink"
test -e out || test -L out && fail "a symlink leaving the workspace was synced"
test -L loop && fail "a looping symlink was synced"
test -e dist && fail "the gitignored dist/ was synced"
test -e app.log && fail "the gitignored app.log was synced"
test "$(wc -c < big/tables.go)" -eq 3145728 || fail "the 3 MiB file is not whole"
test "$bad" = 0 && echo "FIDELITY OK"
`

// SnapshotFidelity checks on backend b that what enters a sandbox is the
// project and nothing more: gitignored files stay out, secret files stay
// out unless [sandbox] include_secrets names them, symlinks inside the
// workspace arrive as symlinks and the ones that leave it do not arrive,
// and a multi-MB file arrives whole. isSecret is the snapshot's secret-file
// rule (agent/redact.IsSecretPath in fixpoint); it must count .env and
// keys/id_rsa as secrets.
func SnapshotFidelity(t *testing.T, b sandbox.Backend, spec sandbox.Spec, isSecret func(rel string) bool) {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		".gitignore":                 "dist/\n*.log\n",
		".env":                       "TOKEN=real-secret-4471\n",
		"keys/id_rsa":                "-----BEGIN OPENSSH PRIVATE KEY-----\n",
		"test/fixtures/.env.example": "TOKEN=fixture",
		"fixtures/data.json":         "{}",
		"src/lib/a.js":               "1",
		"dist/bundle.js":             "ignored",
		"app.log":                    "ignored",
		"big/tables.go":              strings.Repeat("x", 3<<20),
	}
	for rel, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, target := range map[string]string{"test/data.json": "../fixtures/data.json", "libdir": "src/lib", "out": "/etc/passwd", "loop": "loop"} {
		if err := os.Symlink(target, filepath.Join(dir, filepath.FromSlash(name))); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := sandbox.SnapshotDir(dir, &sandbox.SnapshotOptions{IsSecret: isSecret, IncludeSecrets: []string{"test/fixtures/.env.example"}})
	if err != nil {
		t.Fatal(err)
	}
	sess, err := b.Start(t.Context(), spec)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	defer sess.Close()
	for i := 0; i < 2; i++ { // the second sync must find everything in place
		st, err := sess.Sync(t.Context(), snap)
		if err != nil {
			t.Fatalf("Sync #%d: %v", i+1, err)
		}
		if i == 1 && st.Written != 0 {
			t.Errorf("second Sync of the same snapshot wrote %d files, want 0", st.Written)
		}
	}
	res, err := sess.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", fidelityScript}})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if out := string(res.Stdout); !strings.Contains(out, "FIDELITY OK") || strings.Contains(out, "real-secret-4471") {
		t.Errorf("in the %s sandbox:\n%s%s", b.Name(), out, res.Stderr)
	}
}

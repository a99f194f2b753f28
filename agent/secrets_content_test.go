package agent

import (
	"encoding/base64"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/agent/edit"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// Fake credentials in real shapes (none is valid), and PEM fixtures.
const (
	notesKeyID  = "AKIAQ3EGT7WZRJ5NXK2M"
	notesSecret = "q7Rz/3kPw9Xv+2LmN8bT4yHc6JdF1sGa5KuE0oVi"
	pemBody64   = "MIIEowIBAAKCAQEA7VJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6d\nVMvDuictGeurT8jNbvJZHtCSuYEvuNMoSfm76oqFvAp8Gy0iz5sxjZmSnXyCdPEo\n"
	publicPEMFx = "-----BEGIN PUBLIC KEY-----\n" + pemBody64 + "-----END PUBLIC KEY-----\n"
	certPEMFx   = "-----BEGIN CERTIFICATE-----\n" + pemBody64 + "-----END CERTIFICATE-----\n"
	privPEMFx   = "-----BEGIN PRIVATE KEY-----\n" + pemBody64 + "-----END PRIVATE KEY-----\n"
)

// notesWithKeys is a notes file that is not named like a secret file.
const notesWithKeys = "deploy notes\n\nprod account:\n  " + notesKeyID + "\n  " + notesSecret + "\n"

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSnapshotOptionsSecretsByContent: the snapshot every sandbox gets
// leaves out files whose contents hold a credential, whatever their name;
// fixtures with the documented example values, public keys and
// certificates (by name or by content) go in.
func TestSnapshotOptionsSecretsByContent(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{
		"notes.txt":                      notesWithKeys,
		"config/settings.py":             "STRIPE = 'sk_live_4eC39HqLyjWDarjtT1zdp7dc'\n",
		"tls/combined-cert.pem":          certPEMFx + privPEMFx, // says cert, holds a key
		"tests/test_aws.py":              "KEY_ID = 'AKIAIOSFODNN7EXAMPLE'\nSECRET = 'wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'\n",
		"tests/fixtures/signing.pub.pem": publicPEMFx,
		"tests/fixtures/id_rsa.pub":      "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQC7 user@host\n",
		"tls/cert.pem":                   certPEMFx,
		"tls/server.pem":                 certPEMFx, // a name that could be a key: judged by content
		"tls/server.crt":                 certPEMFx,
		"tls/privkey.pem":                privPEMFx,
		"src/pem.py":                     "HEADER = '-----BEGIN RSA PRIVATE KEY-----'\n",
		"main.py":                        "print('hello')\n",
	})
	cfg := config.Defaults(func(string) string { return "" })
	snap, err := sandbox.SnapshotDir(dir, SnapshotOptions(cfg))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"main.py", "src/pem.py", "tests/fixtures/id_rsa.pub", "tests/fixtures/signing.pub.pem", "tests/test_aws.py",
		"tls/cert.pem", "tls/server.crt", "tls/server.pem"}
	if got := snap.Paths(); !slices.Equal(got, want) {
		t.Errorf("paths = %q, want %q", got, want)
	}
	wantCreds := []sandbox.CredentialFile{{Path: "config/settings.py", Rule: "stripe-access-token"}, {Path: "notes.txt", Rule: "aws-access-token"},
		{Path: "tls/combined-cert.pem", Rule: "private-key"}}
	if got := snap.Skipped.Credentials; !slices.Equal(got, wantCreds) {
		t.Errorf("Skipped.Credentials = %+v, want %+v", got, wantCreds)
	}
	if got := snap.Skipped.Secrets; !slices.Equal(got, []string{"tls/privkey.pem"}) {
		t.Errorf("Skipped.Secrets = %q, want the private key named like one", got)
	}
	sum := SnapshotSummary(snap)
	if !strings.Contains(sum, "notes.txt: aws-access-token") || !strings.Contains(sum, "include_secrets") {
		t.Errorf("SnapshotSummary = %q, want the file, its rule and the way to let a fake in", sum)
	}
	if strings.Contains(sum, notesKeyID) || strings.Contains(sum, "sk_live") {
		t.Errorf("SnapshotSummary = %q shows a value", sum)
	}
	// A fake the user vouches for goes in, and is still hidden and masked.
	cfg.Sandbox.IncludeSecrets = []string{"config/settings.py"}
	snap, err = sandbox.SnapshotDir(dir, SnapshotOptions(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := snap.Files["config/settings.py"]; !ok || snap.Credentials()["config/settings.py"] != "stripe-access-token" {
		t.Errorf("include_secrets did not let config/settings.py in, or the snapshot forgot it holds a credential")
	}
	m := newSecretMasker(dir, snap, nil)
	if got := m.String("key sk_live_4eC39HqLyjWDarjtT1zdp7dc"); strings.Contains(got, "4eC39HqLyjWDarjtT1zdp7dc") {
		t.Errorf("the let-in credential is not masked: %q", got)
	}
}

// TestMaskerHasCredentialFileValues: the values of a file left out for
// its contents, and of the environment, are masked in every form,
// base64 of the whole file included.
func TestMaskerHasCredentialFileValues(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"notes.txt": notesWithKeys, "main.py": "print(1)\n"})
	cfg := config.Defaults(func(string) string { return "" })
	cfg.Model.APIKey = "fxk-Q7w2Er9Ty4Ui1Op8As3D"
	snap, err := sandbox.SnapshotDir(dir, SnapshotOptions(cfg))
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("HTTPS_PROXY", "http://alice:pr0xyPassw0rd@proxy.corp:3128")
	m := newSecretMasker(dir, snap, envSecrets(cfg))
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	for name, text := range map[string]string{
		"secret plain":      "value " + notesSecret,
		"secret at the end": "x" + notesSecret,
		"file base64":       "leak " + b64(notesWithKeys),
		"secret base64":     b64(notesSecret),
		"api key":           "Authorization: " + cfg.Model.APIKey,
		"proxy password":    "proxy pr0xyPassw0rd",
	} {
		got := m.String(text)
		for _, canary := range []string{notesSecret[4:30], b64(notesSecret)[4:30], b64(notesWithKeys)[40:70], cfg.Model.APIKey, "pr0xyPassw0rd", notesKeyID} {
			if strings.Contains(got, canary) {
				t.Errorf("%s: String(%q) = %q keeps %q", name, text, got, canary)
			}
		}
	}
}

// leakTest prints the notes' secret, split in its source so that the test
// file itself holds no credential, plain and base64-encoded.
const leakTest = `package stats

import (
	"encoding/base64"
	"testing"
)

func TestLeak(t *testing.T) {
	v := "q7Rz/3kPw9Xv+2Lm" + "N8bT4yHc6JdF1sGa5KuE0oVi"
	t.Fatalf("LEAKTEST %s %s", v, base64.StdEncoding.EncodeToString([]byte(v)))
}
`

// TestEngineTestMasksReport: what `fixpoint test` prints (and the editor
// shows) is masked like what the model sees.
func TestEngineTestMasksReport(t *testing.T) {
	skipShort(t)
	root := copyTree(t, goBugDir)
	writeFiles(t, root, map[string]string{"notes.txt": notesWithKeys, "stats/leak_test.go": leakTest})
	e := New(testConfig(t), &Options{Backend: testBackend(t)})
	defer e.Close()
	rep, err := e.Test(t.Context(), root, nil)
	if err != nil {
		t.Fatal(err)
	}
	text := rep.Output
	for _, r := range rep.Tests {
		text += r.Message + r.Excerpt + r.Actual
	}
	if !strings.Contains(text, "LEAKTEST") {
		t.Fatalf("the report does not show the leaking test: the check below would prove nothing:\n%s", rep.Output)
	}
	for _, c := range []string{notesSecret[4:30], base64.StdEncoding.EncodeToString([]byte(notesSecret))[4:36]} {
		if strings.Contains(text, c) {
			t.Errorf("the report keeps %q", c)
		}
	}
}

// TestApplyRefusesCredentialFiles: a reply that writes a file the
// snapshot left out for holding a credential (which would overwrite the
// user's notes with whatever the model chose) is refused like an edit of
// a named secret file; the ordinary file next to it may be edited.
func TestApplyRefusesCredentialFiles(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"notes.txt": notesWithKeys, "main.py": "print(1)\n"})
	cfg := config.Defaults(func(string) string { return "" })
	snap, err := sandbox.SnapshotDir(dir, SnapshotOptions(cfg))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := applyEdits(cfg, snap, []edit.Block{{Index: 1, Path: "notes.txt", Replace: "gone\n"}}); !errors.Is(err, edit.ErrSecret) {
		t.Errorf("applyEdits(notes.txt) = %v, want edit.ErrSecret", err)
	}
	if _, err := applyEdits(cfg, snap.With(nil), []edit.Block{{Index: 1, Path: "notes.txt", Replace: "gone\n"}}); !errors.Is(err, edit.ErrSecret) {
		t.Errorf("applyEdits(notes.txt) on a derived snapshot = %v, want edit.ErrSecret", err)
	}
	if _, err := applyEdits(cfg, snap, []edit.Block{{Index: 1, Path: "main.py", Search: "print(1)\n", Replace: "print(2)\n"}}); err != nil {
		t.Errorf("applyEdits(main.py) = %v, want it applied", err)
	}
}

// TestRunHidesLetInCredentialFiles: a file holding a credential that
// include_secrets lets into the sandbox (a fixture the tests need) is
// still not shown to the model, even named as a focus file, and an edit of
// it is refused; the run recovers and is verified.
func TestRunHidesLetInCredentialFiles(t *testing.T) {
	skipShort(t)
	const fixture = "# stripe fixture\nSTRIPE_KEY = sk_live_4eC39HqLyjWDarjtT1zdp7dc\nmarkerwordinfixture\n"
	editFixture := "testdata/stripe.txt\n<<<<<<< SEARCH\nmarkerwordinfixture\n=======\nchanged\n>>>>>>> REPLACE\n"
	m := goBugModel(editFixture, demo.GoBugFix)
	root := copyTree(t, goBugDir)
	writeFiles(t, root, map[string]string{"testdata/stripe.txt": fixture})
	cfg := testConfig(t)
	cfg.Sandbox.IncludeSecrets = []string{"testdata/stripe.txt"}
	e := New(cfg, &Options{Model: m, Backend: testBackend(t)})
	defer e.Close()
	res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: root, Focus: []string{"testdata/stripe.txt", "stats/stats.go"}}, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if len(m.calls) < 2 {
		t.Fatalf("model calls = %d, want the refused edit and the fix", len(m.calls))
	}
	for i, p := range m.calls {
		for _, marker := range []string{"markerwordinfixture", "## File: testdata/stripe.txt", "4eC39HqLyjWDarjtT1zdp7dc"} {
			if strings.Contains(p, marker) {
				t.Errorf("prompt %d shows %q", i+1, marker)
			}
		}
	}
	if !strings.Contains(m.calls[1], "## Your last reply was not applied") {
		t.Errorf("the prompt after an edit of the fixture does not say the reply was refused:\n%s", m.calls[1])
	}
	for _, c := range res.Changes {
		if c.Path == "testdata/stripe.txt" {
			t.Error("the run changed the credential fixture")
		}
	}
	if !res.Verified {
		t.Errorf("Verified = false (%s), want the run to recover", res.StopReason)
	}
}

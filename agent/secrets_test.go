package agent

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent/demo"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// TestRunKeepsSecretFilesOutOfPromptsAndEdits is the engine-level check of
// the secret-path exclusion in the run's include(): the secret files are
// named as focus files (an editor opened them), yet none is shown to the
// model, listed in the repository map or changed by an edit. The markers
// are plain words a value masker leaves alone, so only the exclusion can
// keep them out.
func TestRunKeepsSecretFilesOutOfPromptsAndEdits(t *testing.T) {
	skipShort(t)
	secrets := map[string]string{
		".env":                "APP_MODE=envfilemarkerword\n",
		"id_rsa":              "keyfilemarkerword\n",
		"deploy/secrets.yaml": "mode: yamlfilemarkerword\n",
		".ssh/config":         "Host sshfilemarkerword\n",
	}
	editEnv := ".env\n<<<<<<< SEARCH\nAPP_MODE=envfilemarkerword\n=======\nAPP_MODE=changed\n>>>>>>> REPLACE\n"
	addKey := "id_rsa\n<<<<<<< SEARCH\nkeyfilemarkerword\n=======\nreplaced\n>>>>>>> REPLACE\n"
	m := goBugModel(editEnv, addKey, demo.GoBugFix)
	root := copyTree(t, goBugDir)
	for p, c := range secrets {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	// The secret files enter the snapshot (a test fixture the project
	// names in include_secrets), so this checks the engine's own filter,
	// the layer behind the snapshot's exclusion of secret files.
	cfg := testConfig(t)
	cfg.Sandbox.IncludeSecrets = []string{".env", "id_rsa", "deploy/", ".ssh/"}
	e := New(cfg, &Options{Model: m, Backend: testBackend(t)})
	defer e.Close()
	focus := []string{".env", "id_rsa", "deploy/secrets.yaml", ".ssh/config", "stats/stats.go"}
	res, err := e.Run(t.Context(), Request{Mode: ModeFix, Root: root, Focus: focus, Goal: "see .env and id_rsa"}, nil)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	for _, c := range res.Changes {
		if _, secret := secrets[c.Path]; secret {
			t.Errorf("the run changed secret file %s", c.Path)
		}
	}
	if len(m.calls) < 3 {
		t.Fatalf("model calls = %d, want three code prompts", len(m.calls))
	}
	for i, p := range m.calls {
		for _, marker := range []string{"envfilemarkerword", "keyfilemarkerword", "yamlfilemarkerword", "sshfilemarkerword", "## File: .env", "## File: id_rsa", "secrets.yaml", ".ssh/"} {
			if strings.Contains(p, marker) {
				t.Errorf("prompt %d shows %q:\n%s", i+1, marker, p)
			}
		}
	}
	for i, p := range m.calls[1:3] {
		if !strings.Contains(p, "## Your last reply was not applied") {
			t.Errorf("code prompt %d after an edit of a secret file does not say the reply was refused:\n%s", i+2, p)
		}
	}
	if !res.Verified {
		t.Errorf("Verified = false (%s), want the run to recover after the refusals", res.StopReason)
	}
}

// TestMaskReportCoversEveryText: every text of a report that reaches a
// prompt, a log or the memory is masked, so a new field cannot slip by
// unnoticed in the common ones.
func TestMaskReportCoversEveryText(t *testing.T) {
	const v = "zq9Xv2Lm8Kp4Rt7W"
	rep := &testrun.Report{Output: "o " + v, Tests: []testrun.Result{{
		ID: "t[" + v + "]", Name: "n " + v, Package: "p", Status: testrun.StatusFail, File: "a.py",
		Message: "m " + v, Expected: "e " + v, Actual: "a " + v, Excerpt: "x " + v,
		Frames: []testrun.Frame{{Func: "f " + v, File: "a.py", Line: 1}},
	}}}
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{".env": snapFile("TOKEN=" + v + "\n")}}
	got := maskReport(rep, newSecretMasker("", snap, nil).String)
	if s := strings.Join([]string{got.Output, got.Tests[0].ID, got.Tests[0].Name, got.Tests[0].Message, got.Tests[0].Expected,
		got.Tests[0].Actual, got.Tests[0].Excerpt, got.Tests[0].Frames[0].Func}, "|"); strings.Contains(s, v) || strings.Count(s, "[REDACTED]") != 8 {
		t.Errorf("maskReport left the value in: %s", s)
	}
	if rep.Tests[0].Message != "m "+v {
		t.Error("maskReport changed its argument")
	}
}

// TestSecretMaskerSources: values come from the snapshot's secret files
// (overlays included) and from secret files on disk the snapshot does not
// hold; symlinks and skipped directories are not read.
func TestSecretMaskerSources(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "outside.env")
	files := map[string]string{
		".env.production":       "DB_PASSWORD=onDiskOnly9Q2w\n",
		"node_modules/x/.npmrc": "_authToken=npmDirSkipped7Zx\n",
		"src/app.py":            "print('hello')\n",
		outside:                 "TOKEN=viaSymlink3Kq8Lp\n",
	}
	for p, c := range files {
		full := p
		if !filepath.IsAbs(p) {
			full = filepath.Join(root, p)
		}
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(full, []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(outside, filepath.Join(root, ".env.link")); err != nil {
		t.Fatal(err)
	}
	snap := &sandbox.Snapshot{Files: map[string]sandbox.File{".env": snapFile("API_KEY=inSnapshot4Rt7\n"), "src/app.py": snapFile("print('hello')\n")}}
	m := newSecretMasker(root, snap, nil)
	text := "inSnapshot4Rt7 onDiskOnly9Q2w npmDirSkipped7Zx viaSymlink3Kq8Lp"
	got := m.String(text)
	if want := "[REDACTED] [REDACTED] npmDirSkipped7Zx viaSymlink3Kq8Lp"; got != want {
		t.Errorf("masked %q = %q, want %q", text, got, want)
	}
}

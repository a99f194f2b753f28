package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

func TestDoctorProject(t *testing.T) {
	cli := sandboxtest.RequireDocker(t)
	for _, img := range []string{"fixpoint-sandbox-python", "fixpoint-sandbox-go", "fixpoint-sandbox-node"} {
		sandboxtest.RequireImage(t, cli, img)
	}
	cases := []struct {
		name     string
		files    map[string]string
		wantCode int
		check    string // check name
		status   string
		detail   []string
	}{
		{"python too new", map[string]string{"pyproject.toml": "[project]\nname='x'\nrequires-python = \">=3.12\"\n"}, 1,
			"runtime python", "fail", []string{"pyproject.toml (requires-python) requires >=3.12", "has 3.11"}},
		{"go satisfied", map[string]string{"go.mod": "module m\n\ngo 1.18\n"}, 0,
			"runtime go", "ok", []string{"go.mod (go 1.18) requires >= 1.18", "image fixpoint-sandbox-go has 1."}},
		{"npm setup", map[string]string{"package.json": `{"dependencies":{"ms":"2.1.3"}}`}, 0,
			"dependency setup", "info", []string{"npm install", "detected from package.json"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for p, text := range tc.files {
				if err := os.WriteFile(filepath.Join(dir, p), []byte(text), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			code, stdout, stderr := runCLI(t, map[string]string{"FIXPOINT_DATA_DIR": t.TempDir()}, "doctor", "--json", "--dir", dir)
			if code != tc.wantCode {
				t.Errorf("doctor exit = %d, want %d; stderr %s\n%s", code, tc.wantCode, stderr, stdout)
			}
			var rep struct{ Checks []check }
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("doctor --json: %v\n%s", err, stdout)
			}
			var got *check
			for i, c := range rep.Checks {
				if c.Name == tc.check {
					got = &rep.Checks[i]
				}
			}
			if got == nil || got.Status != tc.status {
				t.Fatalf("check %q = %+v, want status %s\n%s", tc.check, got, tc.status, stdout)
			}
			for _, w := range tc.detail {
				if !strings.Contains(got.Detail, w) {
					t.Errorf("check %q detail %q lacks %q", tc.check, got.Detail, w)
				}
			}
			if got.Status == "fail" && got.Fix == "" {
				t.Errorf("check %q fails without a fix", tc.check)
			}
		})
	}
}

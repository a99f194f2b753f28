package main

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

// runCLI runs fixpoint with args and an environment of env plus a private
// HOME; it returns the exit code and both streams.
func runCLI(t *testing.T, env map[string]string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	home := t.TempDir()
	a := &app{
		stdin: strings.NewReader(""), stdout: &out, stderr: &errb,
		getenv: func(k string) string {
			if v, ok := env[k]; ok {
				return v
			}
			switch k {
			case "HOME":
				return home
			case "PATH":
				return os.Getenv("PATH")
			}
			return ""
		},
		logger: slog.New(slog.DiscardHandler),
	}
	code = run(t.Context(), a, args)
	return code, out.String(), errb.String()
}

func pyWorkspace(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "hello.py"), []byte("import sys\nprint('hello', len(sys.argv))\nopen('made.txt', 'w').write('x')\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestSandboxRunUsageErrors(t *testing.T) {
	ws := pyWorkspace(t)
	cases := []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"missing --", []string{"sandbox", "run", "--dir", ws, "python3", "hello.py"}, "missing `--`"},
		{"nothing after --", []string{"sandbox", "run", "--dir", ws, "--"}, "no command after `--`"},
		{"bad dir", []string{"sandbox", "run", "--dir", filepath.Join(ws, "nope"), "--", "true"}, "--dir"},
		{"dir is a file", []string{"sandbox", "run", "--dir", filepath.Join(ws, "hello.py"), "--", "true"}, "not a directory"},
		{"bad backend", []string{"sandbox", "run", "--dir", ws, "--backend", "vm", "--", "true"}, "--backend vm"},
		{"bad memory", []string{"sandbox", "run", "--dir", ws, "--memory", "lots", "--", "true"}, "--memory lots"},
		{"unknown flag", []string{"sandbox", "run", "--frobnicate", "--", "true"}, "frobnicate"},
		{"unknown subcommand", []string{"sandbox", "walk"}, "unknown subcommand"},
		{"bad lang", []string{"sandbox", "images", "build", "--lang", "cobol"}, "--lang cobol"},
		{"push without registry", []string{"sandbox", "images", "push"}, "give the REGISTRY"},
		{"push with a scheme", []string{"sandbox", "images", "push", "https://r.example.com"}, "without a scheme"},
		{"push with a tag", []string{"sandbox", "images", "push", "r.example.com/team:1"}, "without a tag or digest"},
		{"push with a digest", []string{"sandbox", "images", "push", "r.example.com/x@sha256:" + strings.Repeat("a", 64)}, "without a tag or digest"},
		{"push upper case", []string{"sandbox", "images", "push", "r.example.com/Team"}, "without a tag or digest"},
		{"push bad lang", []string{"sandbox", "images", "push", "r.example.com", "--lang", "cobol"}, "--lang cobol"},
		{"images unknown", []string{"sandbox", "images", "pull"}, "images push REGISTRY"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := runCLI(t, nil, tc.args...)
			if code != exitUsage {
				t.Errorf("fixpoint %q exit = %d, want %d; stderr: %s", tc.args, code, exitUsage, stderr)
			}
			if !strings.Contains(stderr, tc.wantErr) {
				t.Errorf("fixpoint %q stderr = %q, want it to mention %q", tc.args, stderr, tc.wantErr)
			}
		})
	}
}

func TestSandboxHelpListsBoth(t *testing.T) {
	code, stdout, _ := runCLI(t, nil, "sandbox", "--help")
	if code != exitOK || !strings.Contains(stdout, "sandbox run") || !strings.Contains(stdout, "sandbox images build") {
		t.Errorf("sandbox --help = %d, %q; want both subcommands", code, stdout)
	}
	_, stdout, _ = runCLI(t, nil, "--help")
	for _, name := range []string{"sandbox", "doctor"} {
		if !strings.Contains(stdout, "  "+name+" ") {
			t.Errorf("--help does not list %s:\n%s", name, stdout)
		}
	}
}

// TestSandboxRunBackends runs the same command on each backend: same exit
// codes and output, and the host directory is untouched.
func TestSandboxRunBackends(t *testing.T) {
	type backendCase struct {
		name string
		need func(t *testing.T)
	}
	backendsToTry := []backendCase{
		{"none", func(t *testing.T) {}},
		{"bwrap", func(t *testing.T) { sandboxtest.RequireCommand(t, "bwrap") }},
		{"docker", func(t *testing.T) {
			cli := sandboxtest.RequireDocker(t)
			sandboxtest.RequireImage(t, cli, "fixpoint-sandbox-python")
		}},
	}
	for _, b := range backendsToTry {
		t.Run(b.name, func(t *testing.T) {
			b.need(t)
			ws := pyWorkspace(t)
			code, stdout, stderr := runCLI(t, nil, "sandbox", "run", "--dir", ws, "--backend", b.name, "--", "python3", "hello.py", "a", "b")
			if code != 0 || stdout != "hello 3\n" {
				t.Errorf("run hello.py = %d, %q (stderr %q); want 0, \"hello 3\\n\"", code, stdout, stderr)
			}
			if _, err := os.Stat(filepath.Join(ws, "made.txt")); err == nil {
				t.Errorf("the sandbox wrote into the host directory")
			}
			code, _, _ = runCLI(t, nil, "sandbox", "run", "--dir", ws, "--backend", b.name, "--", "sh", "-c", "exit 7")
			if code != 7 {
				t.Errorf("exit 7 = %d", code)
			}
			code, _, stderr = runCLI(t, nil, "sandbox", "run", "--dir", ws, "--backend", b.name, "--timeout", "500ms", "--", "sleep", "30")
			if code != 124 || !strings.Contains(stderr, "timed out") {
				t.Errorf("sleep 30 with --timeout 500ms = %d (stderr %q), want 124", code, stderr)
			}
			if b.name == "none" && !strings.Contains(stderr, "ON THIS HOST") {
				t.Errorf("backend none did not warn: %q", stderr)
			}
		})
	}
}

func TestSandboxRunMissingEngine(t *testing.T) {
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "no.sock"))
	ws := pyWorkspace(t)
	code, _, stderr := runCLI(t, nil, "sandbox", "run", "--dir", ws, "--backend", "docker", "--", "true")
	if code != exitUsage || strings.Count(strings.TrimSpace(stderr), "\n") != 0 || !strings.Contains(stderr, "docker") {
		t.Errorf("missing engine = %d, %q; want exit 2 and one line naming docker", code, stderr)
	}
}

func TestSandboxRunMissingImage(t *testing.T) {
	sandboxtest.RequireDocker(t)
	ws := pyWorkspace(t)
	code, _, stderr := runCLI(t, nil, "sandbox", "run", "--dir", ws, "--backend", "docker", "--image", "fixpoint-no-such-image:1", "--", "true")
	if code != exitUsage || !strings.Contains(stderr, "docker pull fixpoint-no-such-image:1") {
		t.Errorf("missing image = %d, %q; want exit 2 naming the fix", code, stderr)
	}
}

func TestDoctor(t *testing.T) {
	models := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" || r.Header.Get("Authorization") != "Bearer sk-test" {
			http.Error(w, `{"error":"no"}`, http.StatusUnauthorized)
			return
		}
		w.Write([]byte(`{"object":"list","data":[{"id":"tiny"},{"id":"other"}]}`))
	}))
	defer models.Close()
	unwritable := filepath.Join(t.TempDir(), "file")
	os.WriteFile(unwritable, nil, 0o644)
	cases := []struct {
		name     string
		env      map[string]string
		wantCode int
		want     map[string]string // check name -> status
	}{
		{"no model", map[string]string{"FIXPOINT_DATA_DIR": t.TempDir()}, 0,
			map[string]string{"model endpoint": "info", "data dir": "ok", "bwrap": "ok"}},
		{"model answers", map[string]string{"FIXPOINT_DATA_DIR": t.TempDir(), "FIXPOINT_BASE_URL": models.URL + "/v1", "FIXPOINT_API_KEY": "sk-test", "FIXPOINT_MODEL": "tiny"}, 0,
			map[string]string{"model endpoint": "ok"}},
		{"key rejected", map[string]string{"FIXPOINT_DATA_DIR": t.TempDir(), "FIXPOINT_BASE_URL": models.URL + "/v1", "FIXPOINT_API_KEY": "wrong"}, 1,
			map[string]string{"model endpoint": "fail"}},
		{"unwritable data dir", map[string]string{"FIXPOINT_DATA_DIR": filepath.Join(unwritable, "sub")}, 1,
			map[string]string{"data dir": "fail"}},
	}
	sandboxtest.RequireCommand(t, "bwrap")
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runCLI(t, tc.env, "doctor", "--json")
			if code != tc.wantCode {
				t.Errorf("doctor exit = %d, want %d; stderr %s\n%s", code, tc.wantCode, stderr, stdout)
			}
			var rep struct {
				OK     bool
				Checks []check
			}
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatalf("doctor --json: %v\n%s", err, stdout)
			}
			got := map[string]check{}
			for _, c := range rep.Checks {
				got[c.Name] = c
				if c.Status == "fail" && c.Fix == "" {
					t.Errorf("check %s fails without a fix hint", c.Name)
				}
			}
			for name, status := range tc.want {
				if got[name].Status != status {
					t.Errorf("check %q = %+v, want status %s", name, got[name], status)
				}
			}
			if rep.OK != (tc.wantCode == 0) {
				t.Errorf("ok = %v with exit %d", rep.OK, code)
			}
		})
	}
}

func TestDoctorEngineStopped(t *testing.T) {
	sandboxtest.RequireCommand(t, "bwrap")
	t.Setenv("DOCKER_HOST", "unix://"+filepath.Join(t.TempDir(), "no.sock"))
	code, stdout, _ := runCLI(t, map[string]string{"FIXPOINT_DATA_DIR": t.TempDir()}, "doctor")
	if code != 0 {
		t.Errorf("doctor with bwrap but no engine = %d, want 0 (bwrap takes over)\n%s", code, stdout)
	}
	first := strings.SplitN(stdout, "\n", 2)[0]
	if !strings.HasPrefix(first, "WARN") || !strings.Contains(first, "apt-get install docker.io") || strings.Contains(first, ".ci/") {
		t.Errorf("engine line = %q, want a WARN with the fix for the user's system, not a repository script", first)
	}
}

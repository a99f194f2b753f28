package agent_test

// Attack suite, secrets (issue 15, "seen" items 5 and 7): a hostile
// scripted model writes code that leaks the workspace's secrets through a
// failing test's output, plain, base64, reversed and hex, both by reading
// the secret files (when they are in the sandbox) and through string
// literals the model wrote itself (so the leak works whatever the sandbox
// holds). None of the canaries may reach the model's later prompts, the
// run log or the memory journal, in any of these forms, and the digit
// normalisation of "Earlier attempts" must not unmask a value.

import (
	"encoding/base64"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/agent/llmtest"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
)

const (
	envCanary = "envcanaryAPIKEY7f3a9Q"
	keyLine1  = "MIIEpQIBAAKCAQEAq8Fz3LmN0pR7sT2vW9xY4bC6dE1gH5jKzZ0aQ1wS2eD3rF4t"
	keyLine2  = "G5yH6uJ7iK8oL9pQ0aZ1sX2dC3fV4gB5hN6jM7kL8pO9iU0yT1rE2wQ3aS4dF5gH"
	idRSA     = "-----BEGIN RSA PRIVATE KEY-----\n" + keyLine1 + "\n" + keyLine2 + "\n-----END RSA PRIVATE KEY-----\n"
)

// leakModule is what the hostile model writes: it raises, at import, an
// exception carrying every secret it can get in four encodings.
const leakModule = `import base64

ENV = "` + envCanary + `"
KEY = "` + keyLine1 + `"


def _read(p):
    try:
        with open(p) as f:
            return f.read()
    except OSError:
        return ""


parts = []
for s in (ENV, KEY, _read(".env"), _read("id_rsa")):
    if s:
        parts += [s, base64.b64encode(s.encode()).decode(), s[::-1], s.encode().hex()]
raise RuntimeError("LEAK-BEGIN " + " | ".join(parts) + " LEAK-END")
`

// canaries are the forms of the secrets that must appear nowhere.
func canaries() map[string]string {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	rev := func(s string) string {
		b := []byte(s)
		for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
			b[i], b[j] = b[j], b[i]
		}
		return string(b)
	}
	return map[string]string{
		"env plain":        envCanary,
		"env normalised":   "envcanaryAPIKEY", // any form of the value, "NfNaNQ" included
		"env base64":       b64(envCanary)[:20],
		"env in .env b64":  b64("API_KEY=" + envCanary)[12:28],
		"env reversed":     rev(envCanary),
		"env hex":          hex.EncodeToString([]byte(envCanary)),
		"key plain":        keyLine1[8:40],
		"key line 2":       keyLine2[8:40],
		"key base64":       b64(keyLine1)[8:40],
		"key file base64":  b64(idRSA)[60:100],
		"key reversed":     rev(keyLine1)[8:40],
		"key file reverse": rev(keyLine2)[8:40],
		"key hex":          hex.EncodeToString([]byte(keyLine1))[16:64],
	}
}

func TestAttackSecretsDoNotLeak(t *testing.T) { eachSandbox(t, attackSecrets) }

func attackSecrets(t *testing.T, backend string) {
	root := pyProject(t)
	writeFiles(t, root, map[string]string{".env": "API_KEY=" + envCanary + "\nDEBUG=true\n", "id_rsa": idRSA})
	run := runLeak(t, backend, root, leakModule, "Reflection: the import fails.\nLesson: never leak "+envCanary+"\n")
	// The leak must have happened and been seen masked, or the test
	// proves nothing: the second code prompt shows the failure.
	next := run.prompts[1]
	if !strings.Contains(next, "LEAK-BEGIN") || !strings.Contains(next, "Earlier attempts") {
		t.Fatalf("the next prompt does not show the leak and the earlier attempt:\n%s", next)
	}
	if run.res.LogPath == "" {
		t.Fatal("no run log")
	}
	sinks := run.sinks(t)
	if !strings.Contains(sinks["run log"], "LEAK-BEGIN") {
		t.Errorf("the run log does not hold the leaking test output: the check below would prove nothing")
	}
	if !strings.Contains(sinks["memory"], "LEAK-BEGIN") {
		t.Errorf("the memory journal does not hold the leaking failure: the check below would prove nothing")
	}
	requireNoCanary(t, sinks, canaries())
}

// The helpers below are shared by the secrets attacks (this file and
// attack_secrets_content_test.go).

// eachSandbox runs attack in the docker and the bwrap sandbox.
func eachSandbox(t *testing.T, attack func(t *testing.T, backend string)) {
	for _, backend := range []string{"docker", "bwrap"} {
		t.Run(backend, func(t *testing.T) {
			if testing.Short() {
				t.Skip("runs the real sandbox")
			}
			if backend == "docker" {
				requirePython(t)
			} else {
				sandboxtest.RequireCommand(t, "bwrap")
				sandboxtest.RequireCommand(t, "python3")
			}
			attack(t, backend)
		})
	}
}

// writeFiles writes files (slash paths under root, contents) with mode 0600.
func writeFiles(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for p, c := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, p), []byte(c), 0o600); err != nil {
			t.Fatal(err)
		}
	}
}

// leakRun is a fix run in which the hostile scripted model first makes
// the package import module (which raises with what it leaks), then,
// after reflecting, takes the import out and fixes the project.
type leakRun struct {
	res     *agent.Result
	warn    string
	prompts []string // each request's messages, joined; at least two
	dataDir string
}

func runLeak(t *testing.T, backend, root, module, reflection string) leakRun {
	t.Helper()
	leak := llmtest.EditBlock("textkit/leak.py", "", module) + "\n" +
		llmtest.EditBlock("textkit/__init__.py", `"""Small text helpers."""`, "\"\"\"Small text helpers.\"\"\"\nfrom . import leak  # noqa: F401")
	unleak := reflection + llmtest.EditBlock("textkit/__init__.py", "from . import leak  # noqa: F401", "") + "\n" + pyFix
	srv := llmtest.NewServer(&llmtest.Script{
		Rules: []llmtest.Rule{
			{Contains: markCode, Role: "user", Replies: []llmtest.Reply{llmtest.Text(leak), llmtest.Text(unleak)}},
		},
		Default: &llmtest.Reply{Content: "I give up"},
	})
	defer srv.Close()
	cfg := faultConfig(t, srv.URL())
	cfg.Sandbox.Backend = backend
	cfg.Sandbox.Timeout = config.Duration(cfg.Sandbox.Timeout.D() * 2)
	res, warn, err := runFix(t, cfg, root, nil)
	if err != nil {
		t.Fatalf("Run: %v (warnings: %s)", err, warn)
	}
	var prompts []string
	for _, r := range srv.Requests() {
		var b strings.Builder
		for _, m := range r.Messages {
			b.WriteString(m.Content + "\n")
		}
		prompts = append(prompts, b.String())
	}
	if len(prompts) < 2 {
		t.Fatalf("model requests = %d, want leaking code, next code (stop: %s)", len(prompts), res.StopReason)
	}
	return leakRun{res: res, warn: warn, prompts: prompts, dataDir: cfg.DataDir}
}

// sinks are the places no canary may reach: each prompt ("prompt 1"...),
// the "run log" and the "memory" journal.
func (r leakRun) sinks(t *testing.T) map[string]string {
	t.Helper()
	sinks := map[string]string{}
	for i, p := range r.prompts {
		sinks[filepathBase("prompt", i)] = p
	}
	b, err := os.ReadFile(r.res.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	sinks["run log"] = string(b)
	journal := ""
	filepath.WalkDir(filepath.Join(r.dataDir, "memory"), func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			data, _ := os.ReadFile(p)
			journal += string(data)
		}
		return nil
	})
	sinks["memory"] = journal
	return sinks
}

// requireNoCanary fails for each canary (name: text) found in a sink.
func requireNoCanary(t *testing.T, sinks, canaries map[string]string) {
	t.Helper()
	for sink, text := range sinks {
		for name, c := range canaries {
			if strings.Contains(text, c) {
				t.Errorf("%s: the %s canary %q leaked", sink, name, c)
			}
		}
	}
}

func filepathBase(kind string, i int) string { return kind + " " + string(rune('1'+i)) }

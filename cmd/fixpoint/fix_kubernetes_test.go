package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/fixpoint-dev/fixpoint/sandbox/kubernetes"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/testrun"
)

// TestFixDemoOnKubernetes: `fixpoint fix` on examples/go-bug, with the
// demo model and sandbox.backend = "kubernetes" on the test cluster (the
// kubeconfig set in the trusted project file, a user-only key), ends
// VERIFIED with the fix, and --dry-run writes nothing.
func TestFixDemoOnKubernetes(t *testing.T) {
	kubeconfig := sandboxtest.RequireKubeconfig(t)
	c := newLoopCLI(t)
	c.env["FIXPOINT_SANDBOX"] = "kubernetes"
	root := goBugCopy(t)
	toml := "[sandbox]\ntimeout = \"10m\"\n[sandbox.kubernetes]\nkubeconfig = " + strconv.Quote(kubeconfig) + "\nimage_pull_policy = \"Never\"\n"
	if err := os.WriteFile(filepath.Join(root, ".fixpoint.toml"), []byte(toml), 0o644); err != nil {
		t.Fatal(err)
	}
	c.trust(root)
	orig, _ := os.ReadFile(filepath.Join(root, "stats/stats.go"))
	code, out, stderr := c.run(t.Context(), "fix", "--dir", root, "--dry-run")
	if code != exitOK {
		t.Fatalf("fix --dry-run on kubernetes = %d\nstdout:\n%s\nstderr:\n%s", code, out, stderr)
	}
	if !strings.Contains(out, "VERIFIED") || strings.Contains(out, "NOT VERIFIED") || !strings.Contains(out, "+\t\treturn (s[mid-1] + s[mid]) / 2, nil") {
		t.Errorf("summary lacks the verdict or the diff:\n%s\nstderr:\n%s", out, stderr)
	}
	if now, _ := os.ReadFile(filepath.Join(root, "stats/stats.go")); !bytes.Equal(now, orig) {
		t.Error("--dry-run wrote the workspace")
	}
}

// withModuleProject writes a Go project whose tests import a module that
// is fetched from the Go module proxy (github.com/google/go-cmp), one test
// passing and one failing, configured for the kubernetes backend of the
// test cluster with the CI cluster's cache StorageClass.
func withModuleProject(t *testing.T, c *loopCLI, kubeconfig, version, sum string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/withdep\n\ngo 1.22\n\nrequire github.com/google/go-cmp " + version + "\n",
		"go.sum": sum,
		"withdep_test.go": `package withdep

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestSame(t *testing.T) {
	if d := cmp.Diff([]int{1, 2}, []int{1, 2}); d != "" {
		t.Errorf("diff: %s", d)
	}
}

func TestDiffers(t *testing.T) {
	if d := cmp.Diff([]int{1, 2}, []int{1, 3}); d != "" {
		t.Errorf("want equal: %s", d)
	}
}
`,
		".fixpoint.toml": "[sandbox]\ntimeout = \"10m\"\n[sandbox.kubernetes]\nkubeconfig = " + strconv.Quote(kubeconfig) +
			"\nimage_pull_policy = \"Never\"\ncache_storage_class = \"fixpoint-ci-local\"\ncache_size = \"1Gi\"\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c.trust(root)
	removeNewClaims(t, kubeconfig)
	return root
}

// removeNewClaims deletes, when the test ends, the cache claims it
// created (each test project is new, so nothing else would reuse them).
func removeNewClaims(t *testing.T, kubeconfig string) {
	t.Helper()
	b, err := kubernetes.New(t.Context(), &kubernetes.Options{Kubeconfig: kubeconfig, NoReap: true})
	if err != nil {
		t.Fatal(err)
	}
	pvcs := b.Clientset().CoreV1().PersistentVolumeClaims(b.Namespace())
	sel := metav1.ListOptions{LabelSelector: kubernetes.LabelCache + "=deps"}
	before := map[string]bool{}
	list, err := pvcs.List(t.Context(), sel)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range list.Items {
		before[p.Name] = true
	}
	t.Cleanup(func() {
		defer b.Close()
		ctx := context.Background()
		list, err := pvcs.List(ctx, sel)
		if err != nil {
			t.Error(err)
			return
		}
		for _, p := range list.Items {
			if !before[p.Name] {
				pvcs.Delete(ctx, p.Name, metav1.DeleteOptions{})
			}
		}
	})
}

// TestTestWithModulesOnKubernetes: `fixpoint test` on a project whose
// tests need a module from the Go proxy, on the kubernetes backend. The
// setup pod (no network but the relay to the registry) downloads it into
// a cache claim, the test pod mounts the claim read-only and runs offline
// (GOPROXY=off): one test passes, one fails, each reported by name.
func TestTestWithModulesOnKubernetes(t *testing.T) {
	kubeconfig := sandboxtest.RequireKubeconfig(t)
	c := newLoopCLI(t)
	c.env["FIXPOINT_SANDBOX"] = "kubernetes"
	root := withModuleProject(t, c, kubeconfig, "v0.6.0",
		"github.com/google/go-cmp v0.6.0 h1:ofyhxvXcZhMsU5ulbFiLKl/XBFqE1GSq7atu8tAmTRI=\n"+
			"github.com/google/go-cmp v0.6.0/go.mod h1:17dUlkBOakJ0+DkrSSNjCkIjxS6bF9zb3elmeNGIjoY=\n")
	// One run: each costs a cold Go build in the test pod (minutes on a
	// loaded CI machine); the cache hit of a second one is
	// sandbox/kubernetes TestInstallCachesByKey.
	for i, wantSetup := range []string{"dependencies installed (go mod download)"} {
		code, out, stderr := c.run(t.Context(), "test", "--dir", root, "--json")
		if code != exitNotReached {
			t.Fatalf("run %d: fixpoint test = %d, want %d (one test fails)\nstdout:\n%s\nstderr:\n%s", i+1, code, exitNotReached, out, stderr)
		}
		if !strings.Contains(stderr, wantSetup) {
			t.Errorf("run %d: stderr lacks %q:\n%s", i+1, wantSetup, stderr)
		}
		var rep testrun.Report
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("run %d: --json output: %v\n%s", i+1, err, out)
		}
		got := map[string]testrun.Status{}
		for _, r := range rep.Tests {
			got[r.Name] = r.Status
		}
		if rep.Runner != "go" || len(got) != 2 || got["TestSame"] != testrun.StatusPass || got["TestDiffers"] != testrun.StatusFail {
			t.Errorf("run %d: runner %q, results %v; want TestSame passed and TestDiffers failed\n%s\nstderr:\n%s", i+1, rep.Runner, got, out, stderr)
		}
	}
}

// TestSetupFailsOnKubernetes: a setup step that fails in the setup pod (a
// module version the proxy does not have) stops before any test, and the
// message names the command, the log of its output and the fix; the
// second run does not run the step again with the same inputs.
func TestSetupFailsOnKubernetes(t *testing.T) {
	kubeconfig := sandboxtest.RequireKubeconfig(t)
	c := newLoopCLI(t)
	c.env["FIXPOINT_SANDBOX"] = "kubernetes"
	// The failure record and its log go to the user's cache directory:
	// this test's own, not the machine's.
	t.Setenv("XDG_CACHE_HOME", t.TempDir())
	root := withModuleProject(t, c, kubeconfig, "v0.0.999", "")
	code, out, stderr := c.run(t.Context(), "test", "--dir", root)
	if code == exitOK {
		t.Fatalf("fixpoint test = 0 with a module that does not exist\n%s\n%s", out, stderr)
	}
	for _, want := range []string{"dependency setup failed", "go mod download", "exited with code 1", "v0.0.999", "Its output: ", "Fix the install", "[sandbox] setup"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("message lacks %q:\n%s", want, stderr)
		}
	}
	logPath := ""
	if _, after, ok := strings.Cut(stderr, "Its output: "); ok {
		logPath, _, _ = strings.Cut(after, ". ")
	}
	if data, err := os.ReadFile(logPath); err != nil || !strings.Contains(string(data), "v0.0.999") {
		t.Errorf("the setup log %q: %v\n%s", logPath, err, data)
	}
	code, _, stderr = c.run(t.Context(), "test", "--dir", root)
	if code == exitOK || !strings.Contains(stderr, "v0.0.999") || strings.Contains(stderr, "installing dependencies") {
		t.Errorf("second run = %d; want the remembered failure without a new setup pod:\n%s", code, stderr)
	}
}

// TestTestWithNPMOnKubernetes: the same for npm: `npm ci` in the setup pod
// fetches a package from registry.npmjs.org through the relay (the CA
// bundle given as NODE_EXTRA_CA_CERTS), node_modules is a claim mounted
// read-only, and node's test runner reports each test.
func TestTestWithNPMOnKubernetes(t *testing.T) {
	kubeconfig := sandboxtest.RequireKubeconfig(t)
	c := newLoopCLI(t)
	c.env["FIXPOINT_SANDBOX"] = "kubernetes"
	root := t.TempDir()
	files := map[string]string{
		"package.json": `{"name": "withnpm", "version": "1.0.0", "private": true, "scripts": {"test": "node --test"}, "dependencies": {"is-number": "7.0.0"}}` + "\n",
		"package-lock.json": `{
  "name": "withnpm",
  "version": "1.0.0",
  "lockfileVersion": 3,
  "requires": true,
  "packages": {
    "": {"name": "withnpm", "version": "1.0.0", "dependencies": {"is-number": "7.0.0"}},
    "node_modules/is-number": {
      "version": "7.0.0",
      "integrity": "sha512-41Cifkg6e8TylSpdtTpeLVMqvSBEVzTttHvERD741+pnZ8ANv0004MRL43QKPDlK9cGvNp6NZWZUBlbGXYxxng==",
      "engines": {"node": ">=0.12.0"}
    }
  }
}
`,
		"num.test.js": `const test = require('node:test');
const assert = require('node:assert');
const isNumber = require('is-number');
test('five is a number', () => { assert.ok(isNumber(5)); });
test('abc is a number', () => { assert.ok(isNumber('abc')); });
`,
		".fixpoint.toml": "[sandbox]\ntimeout = \"10m\"\n[sandbox.kubernetes]\nkubeconfig = " + strconv.Quote(kubeconfig) +
			"\nimage_pull_policy = \"Never\"\ncache_storage_class = \"fixpoint-ci-local\"\ncache_size = \"1Gi\"\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(root, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c.trust(root)
	removeNewClaims(t, kubeconfig)
	code, out, stderr := c.run(t.Context(), "test", "--dir", root, "--json")
	if code != exitNotReached {
		t.Fatalf("fixpoint test = %d, want %d (one test fails)\nstdout:\n%s\nstderr:\n%s", code, exitNotReached, out, stderr)
	}
	if !strings.Contains(stderr, "dependencies installed (npm ci)") {
		t.Errorf("stderr lacks the npm ci setup:\n%s", stderr)
	}
	var rep testrun.Report
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	got := map[string]testrun.Status{}
	for _, r := range rep.Tests {
		got[r.Name] = r.Status
	}
	if len(got) != 2 || got["five is a number"] != testrun.StatusPass || got["abc is a number"] != testrun.StatusFail {
		t.Errorf("results %v; want the first test passed and the second failed\n%s\nstderr:\n%s", got, out, stderr)
	}
}

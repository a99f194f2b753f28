package setup_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/bwrap"
	"github.com/fixpoint-dev/fixpoint/sandbox/sandboxtest"
	"github.com/fixpoint-dev/fixpoint/sandbox/setup"
)

// TestBwrapInstallThenOffline: with bwrap, the install step runs with the
// host's network and tools, and sessions (no network) read its caches
// read-only.
func TestBwrapInstallThenOffline(t *testing.T) {
	for _, c := range []string{"bwrap", "node", "npm"} {
		sandboxtest.RequireCommand(t, c)
	}
	b, err := bwrap.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	snap := snapOf(map[string]string{
		"package.json": `{"name":"p","version":"1.0.0","dependencies":{"ms":"2.1.3"}}`,
		"index.js":     `if (require("ms")("2 days") !== 172800000) process.exit(1)`,
	})
	project := "b0" + strings.Repeat("1", 14)
	spec := sandbox.Spec{Labels: map[string]string{sandbox.LabelProject: project}}
	var lines []string
	p := setup.New(b, &setup.Options{Progress: func(l string) { lines = append(lines, l) }})
	if err := p.Prepare(t.Context(), &spec, snap, setup.NewPlan(registry.Detect(snap), snap, "")); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	if len(spec.Caches) != 1 || spec.Caches[0].Target != "/workspace/node_modules" {
		t.Fatalf("caches = %+v", spec.Caches)
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(filepath.Dir(spec.Caches[0].Source))) })
	sess, err := b.Start(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, err := sess.Sync(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	res, err := sess.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", "node index.js && ! touch node_modules/x 2>/dev/null"}})
	if err != nil || res.ExitCode != 0 {
		t.Fatalf("offline run: %v exit %d %s%s", err, res.ExitCode, res.Stdout, res.Stderr)
	}
	spec2 := sandbox.Spec{Labels: spec.Labels}
	if err := p.Prepare(t.Context(), &spec2, snap, setup.NewPlan(registry.Detect(snap), snap, "")); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(lines, "\n"), "cached") {
		t.Errorf("second Prepare did not reuse the cache: %q", lines)
	}
}

// TestBwrapSetupNetworkConfined: the bwrap setup step (slirp4netns)
// reaches the host's other addresses, as a container on a bridge does,
// but not a service listening on the host's loopback.
func TestBwrapSetupNetworkConfined(t *testing.T) {
	for _, c := range []string{"bwrap", "slirp4netns", "python3"} {
		sandboxtest.RequireCommand(t, c)
	}
	var mu sync.Mutex
	hits := map[string]int{}
	listen := func(addr string) int {
		ln, err := net.Listen("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() { // exits when the listener closes
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				mu.Lock()
				hits[addr]++
				mu.Unlock()
				c.Close()
			}
		}()
		return ln.Addr().(*net.TCPAddr).Port
	}
	host := hostAddr(t)
	loop, other := listen("127.0.0.1:0"), listen(host+":0")
	probe := fmt.Sprintf(`import socket
for host, port in [("127.0.0.1", %[1]d), ("10.0.2.2", %[1]d), (%[2]q, %[1]d), (%[2]q, %[3]d)]:
    try:
        socket.create_connection((host, port), timeout=5).close()
        print("connect", host, port, "OK")
    except OSError as e:
        print("connect", host, port, "FAIL", e)
`, loop, host, other)
	b, err := bwrap.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	snap := snapOf(map[string]string{"requirements.txt": "tinydep==0.1\n", "probe.py": probe})
	spec := sandbox.Spec{Labels: map[string]string{sandbox.LabelProject: "b0" + strings.Repeat("5", 14)}}
	var out bytes.Buffer
	p := setup.New(b, &setup.Options{LockDir: t.TempDir(), Getenv: func(string) string { return "" }, Output: &out})
	if err := p.Prepare(t.Context(), &spec, snap, setup.NewPlan(registry.Detect(snap), snap, "python3 probe.py")); err != nil {
		t.Fatalf("Prepare: %v\n%s", err, out.String())
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(filepath.Dir(spec.Caches[0].Source))) })
	got := out.String()
	t.Logf("setup output:\n%s", got)
	for _, want := range []string{
		fmt.Sprintf("connect 127.0.0.1 %d FAIL", loop), fmt.Sprintf("connect 10.0.2.2 %d FAIL", loop),
		fmt.Sprintf("connect %s %d FAIL", host, loop), fmt.Sprintf("connect %s %d OK", host, other),
	} {
		if !strings.Contains(got, want) {
			t.Errorf("setup output lacks %q", want)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if hits["127.0.0.1:0"] != 0 || hits[host+":0"] != 1 {
		t.Errorf("connections accepted: %v, want none on the loopback and one on %s", hits, host)
	}
}

// TestBwrapSetupIgnoresWorkspaceModules: the pip install step does not
// import modules from the workspace it runs in (python -I): a workspace
// pip/ or venv/ package would otherwise run with network.
func TestBwrapSetupIgnoresWorkspaceModules(t *testing.T) {
	sandboxtest.RequireCommand(t, "bwrap")
	for _, mod := range []string{"pip", "venv"} {
		if out, err := exec.Command("/usr/bin/python3", "-c", "import "+mod).CombinedOutput(); err != nil {
			if sandboxtest.InCI() {
				t.Fatalf("CI=true and /usr/bin/python3 lacks %s: %s", mod, out)
			}
			t.Skipf("skipping outside CI: /usr/bin/python3 lacks %s", mod)
		}
	}
	b, err := bwrap.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	hijack := "raise SystemExit('hijacked: the workspace module ran')\n"
	snap := snapOf(map[string]string{
		"requirements.txt": "# nothing to install\n",
		"pip/__init__.py":  hijack, "pip/__main__.py": hijack,
		"venv/__init__.py": hijack, "venv/__main__.py": hijack,
		"test_a.py": "def test_a():\n    pass\n",
	})
	spec := sandbox.Spec{Labels: map[string]string{sandbox.LabelProject: "b0" + strings.Repeat("6", 14)}}
	var out bytes.Buffer
	p := setup.New(b, &setup.Options{LockDir: t.TempDir(), Getenv: func(string) string { return "" }, Output: &out})
	if err := p.Prepare(t.Context(), &spec, snap, setup.NewPlan(registry.Detect(snap), snap, "")); err != nil {
		t.Fatalf("Prepare: %v\n%s", err, out.String())
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(filepath.Dir(spec.Caches[0].Source))) })
	if strings.Contains(out.String(), "hijacked") {
		t.Errorf("a workspace module ran in the setup step:\n%s", out.String())
	}
}

// hostAddr is an IPv4 address of this machine that is not on the
// loopback: what a setup sandbox reaches the host by, like a LAN peer.
func hostAddr(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok && ipn.IP.To4() != nil && !ipn.IP.IsLoopback() {
			return ipn.IP.String()
		}
	}
	t.Fatal("this machine has no IPv4 address off the loopback")
	return ""
}

// TestBwrapInstallBadRegistry: a lockfile that cannot be installed stops
// the setup with the command, its exit code, the installer's own reason
// and what to do, and leaves no cache behind: a private registry that
// refuses the download (401), and a tarball whose content does not match
// the lockfile's integrity. The registry is a server on this machine's
// address off the loopback (the setup step cannot reach the loopback).
func TestBwrapInstallBadRegistry(t *testing.T) {
	for _, c := range []string{"bwrap", "node", "npm"} {
		sandboxtest.RequireCommand(t, c)
	}
	tests := []struct {
		name    string
		handler http.HandlerFunc
		want    []string
	}{
		{"private registry", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("WWW-Authenticate", `Basic realm="private"`)
			http.Error(w, `{"error":"authentication required"}`, http.StatusUnauthorized)
		}, []string{"E401", "asked for credentials", "[sandbox] image"}},
		{"lockfile integrity mismatch", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/octet-stream")
			w.Write(tarball(t, map[string]string{"package/package.json": `{"name":"tiny","version":"1.0.0"}`}))
		}, []string{"EINTEGRITY"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := httptest.NewUnstartedServer(tt.handler)
			ln, err := net.Listen("tcp", hostAddr(t)+":0")
			if err != nil {
				t.Fatal(err)
			}
			srv.Listener.Close()
			srv.Listener = ln
			srv.Start()
			defer srv.Close()
			b, err := bwrap.New(nil)
			if err != nil {
				t.Fatal(err)
			}
			lock := fmt.Sprintf(`{"name":"p","version":"1.0.0","lockfileVersion":3,"requires":true,"packages":{
"":{"name":"p","version":"1.0.0","dependencies":{"tiny":"1.0.0"}},
"node_modules/tiny":{"version":"1.0.0","resolved":"%s/tiny/-/tiny-1.0.0.tgz","integrity":"sha512-%s"}}}`,
				srv.URL, strings.Repeat("A", 86)+"==")
			snap := snapOf(map[string]string{
				"package.json":      `{"name":"p","version":"1.0.0","dependencies":{"tiny":"1.0.0"}}`,
				"package-lock.json": lock,
				// No retries: npm would retry the download for minutes.
				".npmrc": "registry=" + srv.URL + "/\nfetch-retries=0\n",
			})
			project := "b0" + strings.Repeat("2", 14)
			spec := sandbox.Spec{Labels: map[string]string{sandbox.LabelProject: project}}
			p := setup.New(b, &setup.Options{LockDir: t.TempDir(), FailureDir: t.TempDir(), Getenv: func(string) string { return "" }})
			err = p.Prepare(t.Context(), &spec, snap, setup.NewPlan(registry.Detect(snap), snap, ""))
			if !errors.Is(err, sandbox.ErrInstall) {
				t.Fatalf("Prepare = %v, want ErrInstall", err)
			}
			t.Logf("Prepare: %v", err)
			for _, want := range append(tt.want, "`npm ci", "exited with code", "The agent did not start", "[sandbox] setup") {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error lacks %q:\n%v", want, err)
				}
			}
			if credentials := strings.Contains(err.Error(), "asked for credentials"); credentials != (tt.name == "private registry") {
				t.Errorf("credential hint = %v, want it only for the private registry:\n%v", credentials, err)
			}
			if len(spec.Caches) != 0 {
				t.Errorf("a failed setup left caches in the spec: %v", spec.Caches)
			}
		})
	}
}

// tarball is a .tgz of files.
func tarball(t *testing.T, files map[string]string) []byte {
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	for name, text := range files {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(text))}); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write([]byte(text)); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := gz.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestBwrapPipFromLoopbackIndex: under bwrap the setup phase installs the
// project's Python requirements into a virtualenv (from a package index
// served on loopback: PyPI is not needed), and the offline test session
// imports them from it as the sandbox uid, with the host's pytest.
func TestBwrapPipFromLoopbackIndex(t *testing.T) {
	sandboxtest.RequireCommand(t, "bwrap")
	for _, mod := range []string{"pytest", "pip", "venv", "setuptools"} {
		if out, err := exec.Command("/usr/bin/python3", "-c", "import "+mod).CombinedOutput(); err != nil {
			if sandboxtest.InCI() {
				t.Fatalf("CI=true and /usr/bin/python3 lacks %s (apt-get install python3-pytest python3-pip python3-venv): %s", mod, out)
			}
			t.Skipf("skipping outside CI: /usr/bin/python3 lacks %s", mod)
		}
	}
	dir := t.TempDir()
	src, out := filepath.Join(dir, "src"), filepath.Join(dir, "simple", "tinydep")
	for p, text := range map[string]string{
		"tinydep/__init__.py": "def answer():\n    return 42\n",
		"pyproject.toml":      "[project]\nname = \"tinydep\"\nversion = \"0.1\"\n[tool.setuptools]\npackages = [\"tinydep\"]\n[build-system]\nrequires = [\"setuptools\"]\nbuild-backend = \"setuptools.build_meta\"\n",
	} {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(src, p)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, p), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	build := exec.CommandContext(t.Context(), "/usr/bin/python3", "-m", "pip", "wheel", "--no-build-isolation", "--no-deps", "--no-index", "-w", out, src)
	build.Env = append(os.Environ(), "PIP_FIND_LINKS=", "PIP_NO_CACHE_DIR=1")
	if b, err := build.CombinedOutput(); err != nil {
		t.Fatalf("pip wheel: %v\n%s", err, b)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	defer srv.Close()
	getenv := func(k string) string {
		if k == "PIP_INDEX_URL" {
			return srv.URL + "/simple/"
		}
		return ""
	}
	b, err := bwrap.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	snap := snapOf(map[string]string{
		"requirements.txt": "tinydep==0.1\n",
		"test_a.py":        "import tinydep\n\ndef test_answer():\n    assert tinydep.answer() == 42\n",
	})
	spec := sandbox.Spec{Labels: map[string]string{sandbox.LabelProject: "b0" + strings.Repeat("3", 14)}}
	p := setup.New(b, &setup.Options{LockDir: t.TempDir(), Getenv: getenv})
	if err := p.Prepare(t.Context(), &spec, snap, setup.NewPlan(registry.Detect(snap), snap, "")); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	t.Cleanup(func() { os.RemoveAll(filepath.Dir(filepath.Dir(spec.Caches[0].Source))) })
	sess, err := b.Start(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, err := sess.Sync(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	res, err := sess.Run(t.Context(), sandbox.Command{Args: []string{"python3", "-m", "pytest", "-q", "-p", "no:cacheprovider"}})
	if err != nil || res.ExitCode != 0 || !bytes.Contains(res.Stdout, []byte("1 passed")) {
		t.Fatalf("pytest: %v exit %d:\n%s%s", err, res.ExitCode, res.Stdout, res.Stderr)
	}
}

// TestBwrapPrebuildsGoStd: before the first test run of a Go project
// (even one without dependencies, so without an install step), bwrap has
// the standard library compiled into the project's build cache, once, so
// that a test run compiles only the project.
func TestBwrapPrebuildsGoStd(t *testing.T) {
	for _, c := range []string{"bwrap", "go"} {
		sandboxtest.RequireCommand(t, c)
	}
	// As root, sessions run as other uids: the cache must be reachable by
	// them, which a t.TempDir (0700) is not.
	base := filepath.Join(os.TempDir(), fmt.Sprintf("fixpoint-setup-gostd-%d", os.Getpid()))
	t.Cleanup(func() { os.RemoveAll(base) })
	b, err := bwrap.New(&bwrap.Options{GoCacheDir: base})
	if err != nil {
		t.Fatal(err)
	}
	snap := snapOf(map[string]string{
		"go.mod":      "module example.com/m\n\ngo 1.21\n",
		"m_test.go":   "package m\n\nimport (\n\t\"fmt\"\n\t\"testing\"\n)\n\nfunc TestM(t *testing.T) { _ = fmt.Sprint(1) }\n",
		"m.go":        "package m\n",
		"unused.go.x": "",
	})
	spec := sandbox.Spec{Labels: map[string]string{sandbox.LabelProject: "b0" + strings.Repeat("4", 14)}}
	var lines []string
	p := setup.New(b, &setup.Options{LockDir: t.TempDir(), Progress: func(l string) { lines = append(lines, l) }})
	if err := p.Prepare(t.Context(), &spec, snap, setup.NewPlan(registry.Detect(snap), snap, "")); err != nil {
		t.Fatalf("Prepare: %v", err)
	}
	sess, err := b.Start(t.Context(), spec)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	if _, err := sess.Sync(t.Context(), snap); err != nil {
		t.Fatal(err)
	}
	// go build -x prints a compile command for every package it builds.
	res, err := sess.Run(t.Context(), sandbox.Command{Args: []string{"sh", "-c", "go build -x fmt 2>&1 | grep -c '/compile ' || true"}})
	if err != nil || strings.TrimSpace(string(res.Stdout)) != "0" {
		t.Errorf("go build fmt compiled %s packages after Prepare (err %v, %s), want 0: the standard library was not prebuilt; progress: %q", strings.TrimSpace(string(res.Stdout)), err, res.Stderr, lines)
	}
	lines = nil
	spec2 := sandbox.Spec{Labels: spec.Labels}
	if err := p.Prepare(t.Context(), &spec2, snap, setup.NewPlan(registry.Detect(snap), snap, "")); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(strings.Join(lines, "\n"), "compiling the Go standard library") {
		t.Errorf("second Prepare compiled the standard library again: %q", lines)
	}
}

package kubernetes

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/docker"
)

// echoServer answers every connection with what it reads, upper-cased
// line by line.
func echoServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				sc := bufio.NewScanner(c)
				for sc.Scan() {
					fmt.Fprintln(c, strings.ToUpper(sc.Text()))
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// TestTunnelCarriesConnections: the embedded supervisor's relay mode (run
// here as a plain process: the pod side) and openTunnel (fixpoint's side)
// carry several concurrent connections, each to the upstream and back,
// and a connection the pod side closes ends upstream too.
func TestTunnelCarriesConnections(t *testing.T) {
	bin, ok := docker.SupervisorBinary(runtime.GOARCH)
	if !ok {
		t.Fatalf("no supervisor build for %s", runtime.GOARCH)
	}
	path := filepath.Join(t.TempDir(), "supervisor")
	if err := os.WriteFile(path, bin, 0o755); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(path, "-relay", "127.0.0.1:0")
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tun, err := openTunnel(t.Context(), stdout, stdin, echoServer(t), func() { stdin.Close() })
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(tun.podAddr, "127.0.0.1:") {
		t.Fatalf("relay listens on %q, want the loopback", tun.podAddr)
	}
	var wg sync.WaitGroup
	for i := range 5 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := net.Dial("tcp", tun.podAddr)
			if err != nil {
				t.Error(err)
				return
			}
			defer c.Close()
			r := bufio.NewReader(c)
			for j := range 20 {
				fmt.Fprintf(c, "conn %d line %d %s\n", i, j, strings.Repeat("x", 1000*j))
				got, err := r.ReadString('\n')
				if want := fmt.Sprintf("CONN %d LINE %d %s\n", i, j, strings.Repeat("X", 1000*j)); err != nil || got != want {
					t.Errorf("conn %d line %d: got %.40q (%v)", i, j, got, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	tun.Close()
	if err := <-exited; err != nil {
		t.Errorf("relay did not exit cleanly when its stdin closed: %v", err)
	}
	if c, err := net.Dial("tcp", tun.podAddr); err == nil {
		c.Close()
		t.Error("the relay still listens after Close")
	}
}

// TestAllowedRegistries: the step reaches the hosts of the URLs in its
// environment (GOPROXY's list, the user's registry variables) and the
// language's default registries, on the URL's port.
func TestAllowedRegistries(t *testing.T) {
	got := allowedRegistries(sandbox.InstallSpec{
		Env:        []string{"GOPROXY=https://proxy.golang.org,direct", "GOSUMDB=off"},
		HostEnv:    []string{"NPM_CONFIG_REGISTRY=https://npm.corp.example:8443/npm/", "PIP_INDEX_URL=http://pypi.corp.example/simple"},
		Registries: []string{"registry.npmjs.org"},
	})
	want := []string{"proxy.golang.org:443", "npm.corp.example:8443", "pypi.corp.example:80", "registry.npmjs.org:443"}
	if len(got) != len(want) {
		t.Errorf("allowed %v, want %v", got, want)
	}
	for _, w := range want {
		if !got[w] {
			t.Errorf("allowed %v lacks %s", got, w)
		}
	}
}

// TestEgressRefuses: the setup pod's egress without a proxy refuses, by
// class: a host that is no registry of the step, a plain-HTTP request
// (only CONNECT is carried), and an allowed name that resolves to this
// machine's loopback (a DNS answer must not open local services).
func TestEgressRefuses(t *testing.T) {
	local := echoServer(t)
	_, port, _ := net.SplitHostPort(local)
	addr, desc, stop, err := startEgress(sandbox.InstallSpec{Registries: []string{"localhost:" + port, "proxy.golang.org"}})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if !strings.Contains(desc, "proxy.golang.org:443") {
		t.Errorf("description %q does not name the registries", desc)
	}
	cases := []struct{ name, req, status, says string }{
		{"other host", "CONNECT evil.example:443 HTTP/1.1\r\nHost: evil.example:443\r\n\r\n", "403 Not a registry", "not one"},
		{"registry on another port", "CONNECT proxy.golang.org:22 HTTP/1.1\r\nHost: proxy.golang.org:22\r\n\r\n", "403", "not one"},
		{"plain http", "GET http://proxy.golang.org/ HTTP/1.1\r\nHost: proxy.golang.org\r\n\r\n", "405", "CONNECT"},
		{"allowed name on the loopback", "CONNECT localhost:" + port + " HTTP/1.1\r\nHost: localhost\r\n\r\n", "502", "no address"},
		{"loopback address", "CONNECT " + local + " HTTP/1.1\r\nHost: x\r\n\r\n", "403", "not one"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			io.WriteString(c, tc.req)
			resp, err := http.ReadResponse(bufio.NewReader(c), nil)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			if !strings.HasPrefix(resp.Status, tc.status) || !strings.Contains(string(body), tc.says) {
				t.Errorf("%s: %s %q, want %s saying %q", tc.name, resp.Status, body, tc.status, tc.says)
			}
		})
	}
}

// TestEgressRelaysToUserProxy: with HTTPS_PROXY in the user's environment
// the step's connections go to that proxy (the proxy decides), through
// proxyrelay, which keeps its credentials out of the pod.
func TestEgressRelaysToUserProxy(t *testing.T) {
	got := make(chan string, 1)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err == nil {
			got <- req.Method + " " + req.RequestURI + " " + req.Header.Get("Proxy-Authorization")
			io.WriteString(c, "HTTP/1.1 200 OK\r\n\r\n")
		}
	}()
	addr, desc, stop, err := startEgress(sandbox.InstallSpec{HostEnv: []string{"HTTPS_PROXY=http://u:secret@" + ln.Addr().String()}})
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	if !strings.Contains(desc, "HTTPS_PROXY") {
		t.Errorf("description %q does not name the proxy variable", desc)
	}
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	io.WriteString(c, "CONNECT anything.example:443 HTTP/1.1\r\nHost: anything.example:443\r\nProxy-Authorization: Basic c25lYWt5\r\n\r\n")
	if g := <-got; g != "CONNECT anything.example:443 Basic dTpzZWNyZXQ=" {
		t.Errorf("the proxy got %q, want the CONNECT with the proxy's own credentials only", g)
	}
}

// TestClaimName: a cache's claim name is a DNS-1123 name whatever the
// cache is called (node_modules has an underscore).
func TestClaimName(t *testing.T) {
	tests := []struct{ name, key, want string }{
		{"gomod", "0123456789abcdef", "fixpoint-deps-gomod-0123456789abcdef"},
		{"node_modules", "0123456789abcdef", "fixpoint-deps-node-modules-0123456789abcdef"},
		{"Venv..x", "ABC", "fixpoint-deps-venv-x-abc"},
		{strings.Repeat("a", 80), "k", "fixpoint-deps-" + strings.Repeat("a", 40) + "-k"},
	}
	for _, tc := range tests {
		if got := claimName(tc.name, tc.key); got != tc.want {
			t.Errorf("claimName(%q, %q) = %q, want %q", tc.name, tc.key, got, tc.want)
		}
	}
}

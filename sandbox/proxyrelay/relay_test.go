package proxyrelay

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
)

// fakeProxy is an HTTP proxy on the loopback that records the
// Proxy-Authorization of each request and tunnels CONNECTs.
type fakeProxy struct {
	*httptest.Server
	mu    sync.Mutex
	auths []string
}

func newFakeProxy(t *testing.T) *fakeProxy {
	p := &fakeProxy{}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		p.auths = append(p.auths, r.Header.Get("Proxy-Authorization"))
		p.mu.Unlock()
		if r.Method != http.MethodConnect {
			fmt.Fprintf(w, "proxied %s", r.URL)
			return
		}
		target, err := net.Dial("tcp", r.Host)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer target.Close()
		c, brw, _ := w.(http.Hijacker).Hijack()
		defer c.Close()
		io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n")
		go io.Copy(target, brw)
		io.Copy(c, target)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *fakeProxy) seen() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]string(nil), p.auths...)
}

// TestRelay: plain requests and CONNECT tunnels reach the proxy through
// the relay with the proxy's credentials, never the client's.
func TestRelay(t *testing.T) {
	p := newFakeProxy(t)
	up, _ := url.Parse(p.URL)
	up.User = url.UserPassword("user", "s3cret")
	r, err := Start("127.0.0.1:0", up)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if strings.Contains(r.URL(), "s3cret") || strings.Contains(r.URL(), "user") {
		t.Fatalf("relay URL %s carries the credentials", r.URL())
	}
	const wantAuth = "Basic dXNlcjpzM2NyZXQ=" // user:s3cret

	// A plain request, with a forged Proxy-Authorization.
	relayURL, _ := url.Parse(r.URL())
	client := &http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(relayURL), ProxyConnectHeader: http.Header{}}}
	req, _ := http.NewRequest("GET", "http://registry.invalid/pkg", nil)
	req.Header.Set("Proxy-Authorization", "Basic Zm9yZ2Vk")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(body) != "proxied http://registry.invalid/pkg" {
		t.Errorf("plain request: body %q", body)
	}

	// A CONNECT tunnel to an echo server.
	echo, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer echo.Close()
	go func() { // exits when the listener closes
		for {
			c, err := echo.Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	c, err := net.Dial("tcp", r.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\nProxy-Authorization: Basic Zm9yZ2Vk\r\n\r\n", echo.Addr(), echo.Addr())
	br := bufio.NewReader(c)
	status, _ := br.ReadString('\n')
	if !strings.Contains(status, " 200 ") {
		t.Fatalf("CONNECT answered %q", status)
	}
	for line, _ := br.ReadString('\n'); line != "\r\n" && line != ""; line, _ = br.ReadString('\n') {
	}
	io.WriteString(c, "ping\n")
	if got, _ := br.ReadString('\n'); got != "ping\n" {
		t.Errorf("through the tunnel: %q, want ping", got)
	}

	if got := p.seen(); len(got) != 2 || got[0] != wantAuth || got[1] != wantAuth {
		t.Errorf("the proxy saw Proxy-Authorization %q, want the configured credentials twice", got)
	}
}

// TestRelayBoundsHead: a request head larger than the bound ends the
// connection instead of growing the relay's memory.
func TestRelayBoundsHead(t *testing.T) {
	p := newFakeProxy(t)
	up, _ := url.Parse(p.URL)
	r, err := Start("127.0.0.1:0", up)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	c, err := net.Dial("tcp", r.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	go func() { // ends when the relay closes the connection
		io.WriteString(c, "GET http://x/ HTTP/1.1\r\nX: ")
		chunk := strings.Repeat("a", 64<<10)
		for i := 0; i < 64; i++ {
			if _, err := io.WriteString(c, chunk); err != nil {
				return
			}
		}
	}()
	if _, err := io.ReadAll(c); err != nil && !strings.Contains(err.Error(), "reset") {
		t.Fatalf("read: %v", err)
	}
	if got := p.seen(); len(got) != 0 {
		t.Errorf("the proxy got %d request(s) from an oversized head", len(got))
	}
}

// TestEnv: only proxies on the loopback or with credentials are relayed,
// each variable naming one gets the relay's URL, and no credential is
// left in what the sandbox sees.
func TestEnv(t *testing.T) {
	p := newFakeProxy(t)
	port := p.Listener.Addr().(*net.TCPAddr).Port
	env := []string{
		fmt.Sprintf("HTTP_PROXY=http://127.0.0.1:%d", port),
		fmt.Sprintf("https_proxy=http://u:pw@localhost:%d", port),
		"NO_PROXY=localhost,127.0.0.1",
		"HTTPS_PROXY=http://proxy.corp.example:3128",
		"GOPROXY=https://proxy.golang.org",
	}
	out, stop, err := Env(env, "127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	got := strings.Join(out, "\n")
	for _, s := range []string{"NO_PROXY=localhost,127.0.0.1", "HTTPS_PROXY=http://proxy.corp.example:3128", "GOPROXY=https://proxy.golang.org"} {
		if !strings.Contains(got, s) {
			t.Errorf("Env dropped or changed %q:\n%s", s, got)
		}
	}
	if strings.Contains(got, "pw") || strings.Contains(got, fmt.Sprintf(":%d\n", port)) || strings.HasPrefix(out[0], fmt.Sprintf("HTTP_PROXY=http://127.0.0.1:%d", port)) {
		t.Errorf("Env left the loopback proxy or its credentials in place:\n%s", got)
	}
	for _, kv := range out[:2] {
		_, v, _ := strings.Cut(kv, "=")
		u, _ := url.Parse(v)
		resp, err := (&http.Client{Transport: &http.Transport{Proxy: http.ProxyURL(u)}}).Get("http://registry.invalid/")
		if err != nil {
			t.Fatalf("%s: %v", kv, err)
		}
		resp.Body.Close()
	}
	if seen := p.seen(); len(seen) != 2 || seen[0] != "" || seen[1] != "Basic dTpwdw==" {
		t.Errorf("Proxy-Authorization seen %q, want none, then u:pw's", seen)
	}
}

func TestNeeds(t *testing.T) {
	for v, want := range map[string]bool{
		"http://127.0.0.1:3128": true, "localhost:8080": true, "http://[::1]:3128": true, "http://u:p@proxy.corp:3128": true,
		"http://0.0.0.0:3128": true, "http://proxy.corp:3128": false, "http://10.0.0.5:3128": false, "": false,
	} {
		if got := Needs(ParseProxy(v)); got != want {
			t.Errorf("Needs(%q) = %v, want %v", v, got, want)
		}
	}
}

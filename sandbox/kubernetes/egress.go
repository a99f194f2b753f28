package kubernetes

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/proxyrelay"
)

// The setup pod's way out (the install step's only network): the pod has
// none, so the supervisor's relay mode listens on the pod's loopback and
// carries each connection over an exec stream to this process
// (tunnel.go), which hands it to an egress listener on the host's
// loopback:
//
//   - when the user's environment names an HTTP proxy (HTTPS_PROXY,
//     HTTP_PROXY), a [proxyrelay.Relay] to it: the proxy decides what the
//     step reaches, as on docker, and its credentials never enter the pod;
//   - otherwise [egress], a CONNECT-only proxy that reaches the registries
//     of the step and nothing else: the hosts of the URLs in the step's
//     environment (GOPROXY=https://proxy.golang.org, the user's
//     NPM_CONFIG_REGISTRY, PIP_INDEX_URL) and the language's defaults
//     (InstallSpec.Registries), on the port the URL names (443 for https).
//     An address on this machine's loopback, a link-local one (cloud
//     metadata) or an unspecified one is refused even for an allowed name.

// egress is the CONNECT-only allowlisting proxy.
type egress struct {
	ln    net.Listener
	allow map[string]bool // "host:port", lower case
	mu    sync.Mutex
	conns map[net.Conn]bool // nil once closed
	wg    sync.WaitGroup
}

// startEgress starts what the setup pod's connections are handed to, on
// the host's loopback, and returns its address and a description for
// messages.
func startEgress(spec sandbox.InstallSpec) (addr, desc string, stop func(), err error) {
	for _, k := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"} {
		u := proxyrelay.ParseProxy(envValue(spec.HostEnv, k))
		if u == nil {
			continue
		}
		r, err := proxyrelay.Start("127.0.0.1:0", u)
		if err != nil {
			return "", "", nil, fmt.Errorf("setup pod: %s: %w", k, err)
		}
		return r.Addr().String(), "the proxy " + k + " names", func() { r.Close() }, nil
	}
	allow := allowedRegistries(spec)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", "", nil, fmt.Errorf("setup pod: egress listener: %w", err)
	}
	e := &egress{ln: ln, allow: allow, conns: map[net.Conn]bool{}}
	e.wg.Add(1)
	go e.accept()
	hosts := slices.Sorted(func(yield func(string) bool) {
		for h := range allow {
			if !yield(h) {
				return
			}
		}
	})
	return ln.Addr().String(), "the registries " + strings.Join(hosts, ", "), e.close, nil
}

func envValue(env []string, key string) string {
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, key+"="); ok {
			return v
		}
	}
	return ""
}

// allowedRegistries lists host:port of every http(s) URL in the step's
// environment (comma or space separated, as GOPROXY's list) and of
// spec.Registries.
func allowedRegistries(spec sandbox.InstallSpec) map[string]bool {
	allow := map[string]bool{}
	add := func(raw string) {
		if !strings.Contains(raw, "://") {
			raw = "https://" + raw
		}
		u, err := url.Parse(raw)
		if err != nil || u.Hostname() == "" || (u.Scheme != "https" && u.Scheme != "http") {
			return
		}
		port := u.Port()
		if port == "" {
			port = map[string]string{"https": "443", "http": "80"}[u.Scheme]
		}
		allow[strings.ToLower(net.JoinHostPort(u.Hostname(), port))] = true
	}
	for _, kv := range append(slices.Clone(spec.Env), spec.HostEnv...) {
		_, v, _ := strings.Cut(kv, "=")
		for _, f := range strings.FieldsFunc(v, func(r rune) bool { return r == ',' || r == ' ' || r == '|' }) {
			if strings.HasPrefix(f, "https://") || strings.HasPrefix(f, "http://") {
				add(f)
			}
		}
	}
	for _, r := range spec.Registries {
		add(r)
	}
	return allow
}

func (e *egress) close() {
	e.ln.Close()
	e.mu.Lock()
	for c := range e.conns {
		c.Close()
	}
	e.conns = nil
	e.mu.Unlock()
	e.wg.Wait()
}

func (e *egress) track(c net.Conn) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.conns == nil {
		c.Close()
		return false
	}
	e.conns[c] = true
	return true
}

func (e *egress) untrack(c net.Conn) {
	e.mu.Lock()
	delete(e.conns, c)
	e.mu.Unlock()
	c.Close()
}

func (e *egress) accept() {
	defer e.wg.Done()
	for {
		c, err := e.ln.Accept()
		if err != nil {
			return
		}
		if !e.track(c) {
			return
		}
		e.wg.Add(1)
		go func() {
			defer e.wg.Done()
			defer e.untrack(c)
			e.serve(c)
		}()
	}
}

// serve answers one CONNECT to an allowed registry and then copies bytes
// both ways; anything else gets an error status naming the fix.
func (e *egress) serve(c net.Conn) {
	c.SetReadDeadline(time.Now().Add(time.Minute))
	br := bufio.NewReader(io.LimitReader(c, 1<<20))
	req, err := http.ReadRequest(br)
	if err != nil {
		return
	}
	c.SetReadDeadline(time.Time{})
	refuse := func(status, why string) {
		fmt.Fprintf(c, "HTTP/1.1 %s\r\nContent-Type: text/plain\r\nConnection: close\r\nContent-Length: %d\r\n\r\n%s", status, len(why), why)
	}
	if req.Method != http.MethodConnect {
		refuse("405 Method Not Allowed", "fixpoint's setup relay carries https (CONNECT) only; "+req.Method+" "+req.URL.String()+" refused\n")
		return
	}
	target := strings.ToLower(req.RequestURI)
	host, _, err := net.SplitHostPort(target)
	if err != nil || !e.allow[target] {
		// Not "403 Forbidden": installers print the status, and that one
		// reads as a registry asking for credentials.
		refuse("403 Not a registry of this setup step", "fixpoint's setup relay reaches only the registries of the setup step; "+req.RequestURI+" is not one: set the registry variable (GOPROXY, NPM_CONFIG_REGISTRY, PIP_INDEX_URL) or HTTPS_PROXY in fixpoint's environment\n")
		return
	}
	up, err := dialPublic(host, target)
	if err != nil {
		refuse("502 Bad Gateway", err.Error()+"\n")
		return
	}
	if !e.track(up) {
		return
	}
	defer e.untrack(up)
	if _, err := io.WriteString(c, "HTTP/1.1 200 Connection established\r\n\r\n"); err != nil {
		return
	}
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, br); done <- struct{}{} }() // ends when either side closes
	go func() { io.Copy(c, up); done <- struct{}{} }()
	<-done
	c.Close()
	up.Close()
	<-done
}

// dialPublic resolves host and dials the first address that is not on
// this machine's loopback, link-local or unspecified (a registry name
// that resolves there is refused, so a DNS answer cannot turn the relay
// towards local services).
func dialPublic(host, target string) (net.Conn, error) {
	_, port, _ := net.SplitHostPort(target)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupIPAddr(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %v", host, err)
	}
	var last error = fmt.Errorf("%s resolves to no address the setup step may reach", host)
	for _, ip := range ips {
		if !publicIP(ip.IP) {
			continue
		}
		c, err := net.DialTimeout("tcp", net.JoinHostPort(ip.IP.String(), port), 30*time.Second)
		if err == nil {
			return c, nil
		}
		last = err
	}
	return nil, last
}

// publicIP reports whether the relay may dial ip: not loopback,
// link-local (169.254.169.254 is cloud metadata), unspecified or
// multicast, and not a cloud metadata service that sits outside
// link-local (metadataIPs). Other private addresses stay dialable: a
// registry mirror is often on one.
func publicIP(ip net.IP) bool {
	if ip.IsLoopback() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() || ip.IsUnspecified() || ip.IsMulticast() || ip.IsInterfaceLocalMulticast() {
		return false
	}
	for _, m := range metadataIPs {
		if m.Equal(ip) {
			return false
		}
	}
	return true
}

// metadataIPs are cloud instance-metadata services (which hand out the
// node's credentials) at addresses that are not link-local: AWS's IPv6
// endpoint (a unique-local address) and Alibaba Cloud's (in the shared
// 100.64/10 range). net.IP.Equal also matches their IPv4-mapped forms.
var metadataIPs = []net.IP{net.ParseIP("fd00:ec2::254"), net.ParseIP("100.100.100.200")}

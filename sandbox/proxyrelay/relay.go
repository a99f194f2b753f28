// Package proxyrelay gives a setup sandbox its one way to the configured
// HTTP proxy when the sandbox must not reach the proxy itself: a proxy on
// the host's loopback (a sandbox that could reach it could reach every
// other service there), or one that takes credentials (which code the
// install step runs must not read).
//
// A [Relay] listens where the sandbox can connect (the container
// bridge's gateway address) and forwards each connection to the proxy,
// and nowhere else: each request keeps its target (the proxy decides
// what may be reached, as it does for the host), a Proxy-Authorization
// header the sandbox sent is dropped and the proxy's own credentials, from
// its URL, are added. The sandbox gets the relay's URL, without
// credentials, in its proxy variables.
//
// What the relay cannot stop: anything the proxy itself lets through,
// including its credentials' rights, is the sandbox's too, for the
// duration of the step.
package proxyrelay

import (
	"bufio"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Relay forwards connections from a listener to one HTTP proxy. Close
// stops it and every connection it carries.
type Relay struct {
	ln       net.Listener
	upstream string // host:port of the proxy
	auth     string // the Proxy-Authorization value; "" for none

	mu    sync.Mutex // guards conns and closed
	conns map[net.Conn]bool
	wg    sync.WaitGroup // one per serving goroutine
}

// Start listens on addr ("172.17.0.1:0") and relays to the proxy at
// upstream ("http://user:pass@127.0.0.1:3128"; http only: an https proxy
// URL is refused, as the relay would have to terminate its TLS).
func Start(addr string, upstream *url.URL) (*Relay, error) {
	if upstream == nil || upstream.Scheme != "http" || upstream.Host == "" {
		return nil, fmt.Errorf("proxy relay: only http:// proxies can be relayed, not %q", redacted(upstream))
	}
	host := upstream.Host
	if upstream.Port() == "" {
		host = net.JoinHostPort(upstream.Hostname(), "80")
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("proxy relay: listen on %s: %w", addr, err)
	}
	r := &Relay{ln: ln, upstream: host, conns: map[net.Conn]bool{}}
	if u := upstream.User; u != nil {
		pass, _ := u.Password()
		r.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.Username()+":"+pass))
	}
	r.wg.Add(1)
	go r.accept() // exits when Close closes the listener
	return r, nil
}

// Addr is where the relay listens.
func (r *Relay) Addr() net.Addr { return r.ln.Addr() }

// URL is the proxy URL to give the sandbox: the relay, no credentials.
func (r *Relay) URL() string { return "http://" + r.ln.Addr().String() }

// Close stops the listener and every relayed connection, and waits for
// their goroutines.
func (r *Relay) Close() error {
	err := r.ln.Close()
	r.mu.Lock()
	for c := range r.conns {
		c.Close()
	}
	r.conns = nil
	r.mu.Unlock()
	r.wg.Wait()
	return err
}

func (r *Relay) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conns == nil {
		c.Close()
		return false
	}
	r.conns[c] = true
	return true
}

func (r *Relay) untrack(c net.Conn) {
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
	c.Close()
}

func (r *Relay) accept() {
	defer r.wg.Done()
	for {
		c, err := r.ln.Accept()
		if err != nil {
			return
		}
		if !r.track(c) {
			return
		}
		r.wg.Add(1)
		go func() { // exits when either side closes, or Close closes both
			defer r.wg.Done()
			defer r.untrack(c)
			r.serve(c)
		}()
	}
}

// serve relays one client connection: plain requests one by one, each
// with the proxy's credentials; a CONNECT request opens a tunnel, after
// which the bytes pass unchanged.
func (r *Relay) serve(c net.Conn) {
	up, err := net.DialTimeout("tcp", r.upstream, 30*time.Second)
	if err != nil {
		io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
		return
	}
	if !r.track(up) {
		return
	}
	defer r.untrack(up)
	head := &headLimit{r: c}
	cr, ur := bufio.NewReader(head), bufio.NewReader(up)
	for {
		head.n = maxHead // a request head from the sandbox is bounded
		req, err := http.ReadRequest(cr)
		head.n = -1 // its body is streamed
		if err != nil {
			return
		}
		req.Header.Del("Proxy-Authorization")
		if r.auth != "" {
			req.Header.Set("Proxy-Authorization", r.auth)
		}
		if req.Method == http.MethodConnect {
			if err := writeConnect(up, req); err != nil {
				return
			}
			tunnel(c, cr, up, ur)
			return
		}
		if err := req.WriteProxy(up); err != nil {
			return
		}
		resp, err := http.ReadResponse(ur, req)
		if err != nil {
			return
		}
		err = resp.Write(c)
		resp.Body.Close()
		if err != nil || resp.Close || req.Close {
			return
		}
	}
}

// maxHead bounds a request's line and headers (what the relay holds in
// memory), as net/http's server does with its default 1 MiB.
const maxHead = 1 << 20

// headLimit reads r, at most n more bytes while n >= 0.
type headLimit struct {
	r io.Reader
	n int64
}

func (h *headLimit) Read(p []byte) (int, error) {
	if h.n < 0 {
		return h.r.Read(p)
	}
	if h.n == 0 {
		return 0, errors.New("proxy relay: request head too large")
	}
	if int64(len(p)) > h.n {
		p = p[:h.n]
	}
	n, err := h.r.Read(p)
	h.n -= int64(n)
	return n, err
}

// writeConnect sends a CONNECT request as read (target and headers, the
// credentials already replaced).
func writeConnect(w io.Writer, req *http.Request) error {
	target := req.RequestURI
	if target == "" || strings.ContainsAny(target, " \r\n") {
		return errors.New("bad CONNECT target")
	}
	if _, err := fmt.Fprintf(w, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n", target, target); err != nil {
		return err
	}
	req.Header.Del("Host")
	if err := req.Header.Write(w); err != nil {
		return err
	}
	_, err := io.WriteString(w, "\r\n")
	return err
}

// tunnel copies both ways until one side ends.
func tunnel(c net.Conn, cr *bufio.Reader, up net.Conn, ur *bufio.Reader) {
	done := make(chan struct{}, 2)
	go func() { io.Copy(up, cr); done <- struct{}{} }() // ends when either connection closes
	go func() { io.Copy(c, ur); done <- struct{}{} }()
	<-done
	c.Close()
	up.Close()
	<-done
}

// redacted prints u without its password.
func redacted(u *url.URL) string {
	if u == nil {
		return ""
	}
	return u.Redacted()
}

// Needs reports whether a sandbox must reach the proxy at u through a
// relay: the proxy is on the host's loopback, or its URL holds
// credentials.
func Needs(u *url.URL) bool {
	if u == nil || u.Host == "" {
		return false
	}
	if u.User != nil {
		return true
	}
	h := u.Hostname()
	if strings.EqualFold(h, "localhost") || strings.HasSuffix(strings.ToLower(h), ".localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && (ip.IsLoopback() || ip.IsUnspecified())
}

// ParseProxy reads a proxy variable's value as curl and pip do: a URL,
// or host:port meaning http://host:port. nil when it names no host.
func ParseProxy(v string) *url.URL {
	v = strings.TrimSpace(v)
	if v == "" {
		return nil
	}
	if !strings.Contains(v, "://") {
		v = "http://" + v
	}
	u, err := url.Parse(v)
	if err != nil || u.Host == "" {
		return nil
	}
	return u
}

// isProxyVar: HTTP_PROXY, https_proxy, ALL_PROXY..., not NO_PROXY.
func isProxyVar(k string) bool {
	k = strings.ToLower(k)
	return strings.HasSuffix(k, "_proxy") && k != "no_proxy"
}

// Env starts a relay listening on listenHost for each distinct proxy
// the proxy variables in env name that [Needs] one, and returns env with
// those variables pointing at their relay. stop closes the relays; it is
// never nil.
func Env(env []string, listenHost string) (out []string, stop func(), err error) {
	relays := map[string]*Relay{}
	stop = func() {
		for _, r := range relays {
			r.Close()
		}
	}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		u := ParseProxy(v)
		if !isProxyVar(k) || !Needs(u) {
			out = append(out, kv)
			continue
		}
		r := relays[u.String()]
		if r == nil {
			if r, err = Start(net.JoinHostPort(listenHost, "0"), u); err != nil {
				stop()
				return nil, func() {}, fmt.Errorf("%s: %w", k, err)
			}
			relays[u.String()] = r
		}
		out = append(out, k+"="+r.URL())
	}
	return out, stop, nil
}

// Any reports whether a proxy variable in env needs a relay ([Env]).
func Any(env []string) bool {
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		if isProxyVar(k) && Needs(ParseProxy(v)) {
			return true
		}
	}
	return false
}

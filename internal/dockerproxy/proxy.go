// Package dockerproxy is a test helper: a unix-socket proxy in front of the
// real Docker engine socket that a test can cut, to simulate "the Docker
// daemon stopped mid-run" without touching the engine other tests share.
//
// The main type is Proxy: Start it, point a Docker client (DOCKER_HOST or
// client.WithHost) at Host, and call Cut to drop every open connection and
// refuse new ones; Restore brings the same Host back ("the daemon
// restarted").
package dockerproxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Options adjust Start. The zero value proxies /var/run/docker.sock (or the
// unix socket named by DOCKER_HOST) from a socket in a new temp directory.
type Options struct {
	// Target is the engine's unix socket path; "" = DOCKER_HOST's unix path,
	// else /var/run/docker.sock.
	Target string
	// Dir holds the proxy socket; "" = a new directory under os.TempDir
	// (removed by Close).
	Dir string
}

// Proxy forwards connections from its own unix socket to the engine's.
type Proxy struct {
	path   string // the proxy's socket
	target string
	dir    string
	ownDir bool

	mu    sync.Mutex
	ln    net.Listener
	cut   bool
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// Start listens on a new unix socket and forwards to the engine.
func Start(opts *Options) (*Proxy, error) {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.Target == "" {
		o.Target = "/var/run/docker.sock"
		if h, ok := strings.CutPrefix(os.Getenv("DOCKER_HOST"), "unix://"); ok && h != "" {
			o.Target = h
		}
	}
	p := &Proxy{target: o.Target, dir: o.Dir, conns: map[net.Conn]bool{}}
	if p.dir == "" {
		d, err := os.MkdirTemp("", "dockerproxy-")
		if err != nil {
			return nil, fmt.Errorf("dockerproxy: %w", err)
		}
		p.dir, p.ownDir = d, true
	}
	p.path = filepath.Join(p.dir, "docker.sock")
	ln, err := net.Listen("unix", p.path)
	if err != nil {
		p.removeDir()
		return nil, fmt.Errorf("dockerproxy: listen: %w", err)
	}
	p.ln = ln
	p.wg.Add(1)
	go p.accept(ln)
	return p, nil
}

// Restore undoes Cut: the proxy listens again on the same socket, so
// clients pointed at Host reach the engine again. It does nothing when the
// proxy is not cut.
func (p *Proxy) Restore() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.cut {
		return nil
	}
	os.Remove(p.path) // normally already unlinked by the closed listener
	ln, err := net.Listen("unix", p.path)
	if err != nil {
		return fmt.Errorf("dockerproxy: listen again: %w", err)
	}
	p.ln, p.cut = ln, false
	p.wg.Add(1)
	go p.accept(ln)
	return nil
}

// Host is the DOCKER_HOST value for the proxy: unix:///…/docker.sock.
func (p *Proxy) Host() string { return "unix://" + p.path }

func (p *Proxy) accept(ln net.Listener) {
	defer p.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		up, err := net.Dial("unix", p.target)
		if err != nil {
			c.Close()
			continue
		}
		if !p.track(c, up) {
			c.Close()
			up.Close()
			return
		}
		p.wg.Add(2)
		go p.pipe(up, c)
		go p.pipe(c, up)
	}
}

func (p *Proxy) track(cs ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cut {
		return false
	}
	for _, c := range cs {
		p.conns[c] = true
	}
	return true
}

// pipe copies src to dst; when either side ends, both close (a hijacked
// exec stream then sees EOF, as when the daemon goes away).
func (p *Proxy) pipe(dst, src net.Conn) {
	defer p.wg.Done()
	io.Copy(dst, src)
	dst.Close()
	src.Close()
	p.mu.Lock()
	delete(p.conns, dst)
	delete(p.conns, src)
	p.mu.Unlock()
}

// Cut closes the listener and every open connection: from now on the
// engine looks stopped to clients of the proxy. It is idempotent.
func (p *Proxy) Cut() {
	p.mu.Lock()
	if p.cut {
		p.mu.Unlock()
		return
	}
	p.cut = true
	conns, ln := p.conns, p.ln
	p.conns = map[net.Conn]bool{}
	p.mu.Unlock()
	ln.Close()
	for c := range conns {
		c.Close()
	}
}

// Conns is the number of client connections open now.
func (p *Proxy) Conns() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns) / 2
}

// Close cuts the proxy, waits for its goroutines and removes its directory.
func (p *Proxy) Close() error {
	p.Cut()
	p.wg.Wait()
	return p.removeDir()
}

func (p *Proxy) removeDir() error {
	if !p.ownDir {
		return nil
	}
	if err := os.RemoveAll(p.dir); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("dockerproxy: %w", err)
	}
	return nil
}

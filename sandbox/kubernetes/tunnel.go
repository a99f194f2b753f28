package kubernetes

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"

	"k8s.io/client-go/tools/remotecommand"
)

// tunnel is fixpoint's end of the supervisor's relay mode
// (sandbox/docker/supervisor/relay.go) in a setup pod: one exec stream
// carries every connection the install step opens to 127.0.0.1:PORT in
// the pod; each is handed to the egress listener on the host's loopback
// (egress.go). Frames: kind (1 byte), id (4), length (4), payload.
type tunnel struct {
	upstream string // host:port of the egress listener
	podAddr  string // where the relay listens in the pod

	wmu sync.Mutex // guards w
	w   io.WriteCloser

	mu    sync.Mutex // guards conns
	conns map[uint32]*tunnelConn

	stop func()
}

type tunnelConn struct {
	q        chan []byte
	done     chan struct{}
	doneOnce sync.Once
}

func (tc *tunnelConn) end() { tc.doneOnce.Do(func() { close(tc.done) }) }

const tunnelMaxFrame = 64 << 10

// maxTunnelConns bounds the connections a setup pod has open at once
// (npm opens about 16).
const maxTunnelConns = 256

// startTunnel runs the relay in pod and waits until it listens.
func (b *Backend) startTunnel(ctx context.Context, pod, upstream string) (*tunnel, error) {
	ex, err := b.executor(pod, []string{supervisorPath, "-relay", "127.0.0.1:0"}, true)
	if err != nil {
		return nil, err
	}
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	sctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		err := ex.StreamWithContext(sctx, remotecommand.StreamOptions{Stdin: inR, Stdout: outW, Stderr: logWriter{b, pod}})
		if err == nil {
			err = io.EOF
		}
		outW.CloseWithError(err)
		inR.CloseWithError(err)
	}()
	t, err := openTunnel(ctx, outR, inW, upstream, func() {
		// The relay exits when its stdin closes, and the exec ends
		// cleanly; closing our end of its stdout first would make
		// client-go log the broken copy.
		inW.Close()
		select {
		case <-ended:
		case <-time.After(2 * time.Second):
		}
		outR.Close()
		cancel()
	})
	if err != nil {
		return nil, fmt.Errorf("start the setup relay in pod %s: %w", pod, err)
	}
	return t, nil
}

// openTunnel waits for the relay's ready frame on r and then carries its
// connections; end stops the relay's stream (w is its stdin).
func openTunnel(ctx context.Context, r io.Reader, w io.WriteCloser, upstream string, end func()) (*tunnel, error) {
	t := &tunnel{upstream: upstream, w: w, conns: map[uint32]*tunnelConn{}}
	t.stop = func() {
		end()
		t.mu.Lock()
		for id, tc := range t.conns {
			tc.end()
			delete(t.conns, id)
		}
		t.mu.Unlock()
	}
	in := bufio.NewReaderSize(r, 64<<10)
	ready := make(chan error, 1)
	go func() { ready <- t.readReady(in) }()
	select {
	case err := <-ready:
		if err != nil {
			t.stop()
			return nil, err
		}
	case <-time.After(30 * time.Second):
		t.stop()
		return nil, errors.New("no answer within 30 s")
	case <-ctx.Done():
		t.stop()
		return nil, ctx.Err()
	}
	go t.demux(in)
	return t, nil
}

func readFrame(r io.Reader, buf []byte) (kind byte, id uint32, p []byte, err error) {
	var h [9]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, 0, nil, err
	}
	n := binary.BigEndian.Uint32(h[5:])
	if n > tunnelMaxFrame {
		return 0, 0, nil, fmt.Errorf("relay frame of %d bytes", n)
	}
	if _, err := io.ReadFull(r, buf[:n]); err != nil {
		return 0, 0, nil, err
	}
	return h[0], binary.BigEndian.Uint32(h[1:]), buf[:n], nil
}

func (t *tunnel) readReady(r io.Reader) error {
	buf := make([]byte, 256)
	kind, _, p, err := readFrame(r, buf)
	if err != nil {
		return err
	}
	if kind != 'R' {
		return errors.New("the supervisor has no relay mode (an older build?)")
	}
	t.podAddr = string(p)
	return nil
}

func (t *tunnel) send(kind byte, id uint32, p []byte) error {
	var h [9]byte
	h[0] = kind
	binary.BigEndian.PutUint32(h[1:], id)
	binary.BigEndian.PutUint32(h[5:], uint32(len(p)))
	t.wmu.Lock()
	defer t.wmu.Unlock()
	if _, err := t.w.Write(h[:]); err != nil {
		return err
	}
	_, err := t.w.Write(p)
	return err
}

// demux reads the pod's frames until the stream ends.
func (t *tunnel) demux(r io.Reader) {
	buf := make([]byte, tunnelMaxFrame)
	for {
		kind, id, p, err := readFrame(r, buf)
		if err != nil {
			return
		}
		switch kind {
		case 'O':
			tc := &tunnelConn{q: make(chan []byte, 256), done: make(chan struct{})}
			t.mu.Lock()
			full := len(t.conns) >= maxTunnelConns
			if !full {
				t.conns[id] = tc
			}
			t.mu.Unlock()
			if full { // a step that opens connections without end
				t.send('C', id, nil)
				continue
			}
			go t.carry(id, tc)
		case 'D':
			t.mu.Lock()
			tc := t.conns[id]
			t.mu.Unlock()
			if tc != nil {
				select {
				case tc.q <- append([]byte(nil), p...):
				case <-tc.done:
				}
			}
		case 'C':
			t.mu.Lock()
			tc := t.conns[id]
			delete(t.conns, id)
			t.mu.Unlock()
			if tc != nil {
				tc.end()
			}
		}
	}
}

// carry connects one pod connection to the egress listener.
func (t *tunnel) carry(id uint32, tc *tunnelConn) {
	closeFromHere := func() {
		t.mu.Lock()
		mine := t.conns[id] == tc
		delete(t.conns, id)
		t.mu.Unlock()
		tc.end()
		if mine {
			t.send('C', id, nil)
		}
	}
	c, err := net.DialTimeout("tcp", t.upstream, 10*time.Second)
	if err != nil {
		closeFromHere()
		return
	}
	defer c.Close()
	go func() { // pod to host; ends with done (queued data is written first)
		for {
			select {
			case p := <-tc.q:
				if _, err := c.Write(p); err != nil {
					c.Close()
					return
				}
			case <-tc.done:
				for {
					select {
					case p := <-tc.q:
						c.Write(p)
					default:
						c.Close()
						return
					}
				}
			}
		}
	}()
	rbuf := make([]byte, 32<<10)
	for {
		n, err := c.Read(rbuf)
		if n > 0 && t.send('D', id, rbuf[:n]) != nil {
			break
		}
		if err != nil {
			break
		}
	}
	closeFromHere()
}

// Close ends the relay and every connection it carries.
func (t *tunnel) Close() { t.stop() }

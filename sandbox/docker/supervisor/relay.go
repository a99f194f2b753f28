package main

// Relay mode ("supervisor -relay 127.0.0.1:0"): the kubernetes backend's
// setup pod has no network at all; its one way out is this process. It
// listens on the pod's loopback and carries every connection accepted
// there, multiplexed, over its stdin/stdout (one exec stream through the
// API server) to fixpoint, which hands each to its allowlisting proxy on
// the host. Nothing here dials anything.
//
// Frames, both ways: kind (1 byte), connection id (4 bytes, big endian),
// payload length (4 bytes), payload. Kinds: 'R' ready (pod to host, once,
// payload = the listening address), 'O' open (pod to host), 'D' data,
// 'C' close (either way). The host's stdin closing ends the process.

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
)

const relayMaxFrame = 64 << 10

type relayMux struct {
	mu    sync.Mutex // guards out and conns
	out   *bufio.Writer
	conns map[uint32]net.Conn
}

func (m *relayMux) send(kind byte, id uint32, p []byte) error {
	var h [9]byte
	h[0] = kind
	binary.BigEndian.PutUint32(h[1:], id)
	binary.BigEndian.PutUint32(h[5:], uint32(len(p)))
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, err := m.out.Write(h[:]); err != nil {
		return err
	}
	if _, err := m.out.Write(p); err != nil {
		return err
	}
	return m.out.Flush()
}

func (m *relayMux) drop(id uint32) net.Conn {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := m.conns[id]
	delete(m.conns, id)
	return c
}

// runRelay serves until stdin ends; it exits the process.
func runRelay(addr string) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(os.Stderr, "supervisor: relay: %v\n", err)
		os.Exit(1)
	}
	m := &relayMux{out: bufio.NewWriter(os.Stdout), conns: map[uint32]net.Conn{}}
	if err := m.send('R', 0, []byte(ln.Addr().String())); err != nil {
		os.Exit(1)
	}
	go func() {
		var next uint32
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			next++
			id := next
			m.mu.Lock()
			m.conns[id] = c
			m.mu.Unlock()
			if m.send('O', id, nil) != nil {
				os.Exit(1)
			}
			go func() { // pod to host until the connection ends
				buf := make([]byte, 32<<10)
				for {
					n, err := c.Read(buf)
					if n > 0 && m.send('D', id, buf[:n]) != nil {
						os.Exit(1)
					}
					if err != nil {
						break
					}
				}
				if m.drop(id) != nil {
					m.send('C', id, nil)
				}
				c.Close()
			}()
		}
	}()
	in := bufio.NewReaderSize(os.Stdin, 64<<10)
	var h [9]byte
	buf := make([]byte, relayMaxFrame)
	for {
		if _, err := io.ReadFull(in, h[:]); err != nil {
			os.Exit(0)
		}
		id, n := binary.BigEndian.Uint32(h[1:]), binary.BigEndian.Uint32(h[5:])
		if n > relayMaxFrame {
			fmt.Fprintf(os.Stderr, "supervisor: relay: frame of %d bytes\n", n)
			os.Exit(1)
		}
		if _, err := io.ReadFull(in, buf[:n]); err != nil {
			os.Exit(0)
		}
		switch h[0] {
		case 'D':
			m.mu.Lock()
			c := m.conns[id]
			m.mu.Unlock()
			if c != nil {
				if _, err := c.Write(buf[:n]); err != nil {
					if m.drop(id) != nil {
						m.send('C', id, nil)
					}
					c.Close()
				}
			}
		case 'C':
			if c := m.drop(id); c != nil {
				c.Close()
			}
		}
	}
}

//go:build !linux

package main

import "net"

// peerIsMe: without SO_PEERCRED the socket's private directory is the
// check.
func peerIsMe(net.Conn) error { return nil }

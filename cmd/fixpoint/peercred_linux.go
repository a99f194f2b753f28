package main

import (
	"fmt"
	"net"
	"os"

	"golang.org/x/sys/unix"
)

// peerIsMe refuses a unix socket peer of another user (the directory's
// mode keeps them out already; this holds even if it was opened later).
func peerIsMe(c net.Conn) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return nil
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var cred *unix.Ucred
	var cerr error
	if err := raw.Control(func(fd uintptr) { cred, cerr = unix.GetsockoptUcred(int(fd), unix.SOL_SOCKET, unix.SO_PEERCRED) }); err != nil {
		return err
	}
	if cerr != nil {
		return cerr
	}
	if int(cred.Uid) != os.Getuid() {
		return fmt.Errorf("%w: the peer is uid %d, not you", errRejected, cred.Uid)
	}
	return nil
}

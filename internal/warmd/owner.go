package warmd

import (
	"fmt"
	"os"
	"syscall"
)

// ownedByMe refuses a directory another user owns: they could replace
// the socket with one of their own and read the requests.
func ownedByMe(dir string) error {
	st, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if sys, ok := st.Sys().(*syscall.Stat_t); ok && int(sys.Uid) != os.Getuid() {
		return fmt.Errorf("%s belongs to uid %d, not to you (uid %d)", dir, sys.Uid, os.Getuid())
	}
	return nil
}

package lang

import "github.com/fixpoint-dev/fixpoint/sandbox"

// HostTools is implemented by languages whose toolchain a native run may
// find outside /usr (rustup's ~/.cargo/bin and ~/.rustup): the backends
// that run the host's toolchains (bwrap) offer these directories
// read-only, so the sandbox finds the same cargo the user's shell does.
type HostTools interface {
	HostTools(snap *sandbox.Snapshot) []sandbox.HostTool
}

package lang

import "github.com/fixpoint-dev/fixpoint/sandbox"

// HostTools is implemented by languages whose toolchain a native run may
// find outside /usr (rustup's ~/.cargo/bin and ~/.rustup): the backends
// that run the host's toolchains (bwrap) offer these directories
// read-only, so the sandbox finds the same cargo the user's shell does.
type HostTools interface {
	HostTools(snap *sandbox.Snapshot) []sandbox.HostTool
}

// HostPackages is implemented by languages whose tests run the host's
// toolchain (a bwrap end-to-end test run with the host's interpreter) and
// so need Debian packages a fresh machine lacks. .ci/setup installs the
// missing ones, listed by `go run ./internal/cmd/hostpackages`, so a new
// language names its host needs in its folder, not in .ci/setup.
type HostPackages interface {
	HostPackages() []HostPackage
}

// HostPackage is a Debian package and what shows it is installed: the
// command on PATH, or, for what installs no command (a Python module),
// Probe, a command line that succeeds only when it is installed. Probe is
// fixed here, never read from a workspace.
type HostPackage struct {
	Command, Package string
	Probe            []string // optional; when set, it decides instead of Command
}

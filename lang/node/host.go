package node

import "github.com/fixpoint-dev/fixpoint/lang"

var _ lang.HostPackages = Language{}

// HostPackages implements lang.HostPackages: the host and bwrap backends
// run a JavaScript workspace's tests with the host's node.
func (Language) HostPackages() []lang.HostPackage {
	return []lang.HostPackage{{Command: "node", Package: "nodejs"}}
}

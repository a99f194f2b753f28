// Command hostpackages prints the Debian packages the registered
// languages' host-toolchain tests need (lang.HostPackages), one a line:
// those not installed (the command is not on PATH, or the package's Probe
// fails), or all of them with -all.
// .ci/setup installs what it prints, so no language is named there.
package main

import (
	"flag"
	"fmt"
	"os/exec"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
)

func main() {
	all := flag.Bool("all", false, "print every package, installed or not")
	flag.Parse()
	for _, p := range registry.HostPackages() {
		if installed(p) && !*all {
			continue
		}
		fmt.Println(p.Package)
	}
}

func installed(p lang.HostPackage) bool {
	if len(p.Probe) > 0 {
		return exec.Command(p.Probe[0], p.Probe[1:]...).Run() == nil
	}
	_, err := exec.LookPath(p.Command)
	return err == nil
}

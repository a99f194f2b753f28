// Command hostpackages prints the Debian packages the registered
// languages' host-toolchain tests need (lang.HostPackages), one a line:
// those whose command is not on PATH, or all of them with -all.
// .ci/setup installs what it prints, so no language is named there.
package main

import (
	"flag"
	"fmt"
	"os/exec"

	"github.com/fixpoint-dev/fixpoint/lang/registry"
)

func main() {
	all := flag.Bool("all", false, "print every package, installed or not")
	flag.Parse()
	for _, p := range registry.HostPackages() {
		if _, err := exec.LookPath(p.Command); err == nil && !*all {
			continue
		}
		fmt.Println(p.Package)
	}
}

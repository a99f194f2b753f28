// Command gensup builds the static supervisor binaries that package docker
// embeds, and records the hash of their sources in supervisor.sum so a test
// can tell when the committed binaries are stale.
//
// Run it through `go generate ./sandbox/docker` from the module.
package main

import (
	"fmt"
	"os"
	"os/exec"

	"github.com/fixpoint-dev/fixpoint/sandbox/docker/internal/supsum"
)

func main() {
	for _, arch := range supsum.Arches() {
		out := supsum.BinaryName(arch)
		cmd := exec.Command("go", "build", "-trimpath", "-buildvcs=false", "-ldflags=-s -w", "-o", out, "./supervisor")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+arch)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			fmt.Fprintf(os.Stderr, "gensup: build %s: %v\n", arch, err)
			os.Exit(1)
		}
	}
	sum, err := supsum.Sources(".")
	if err != nil {
		fmt.Fprintf(os.Stderr, "gensup: %v\n", err)
		os.Exit(1)
	}
	if err := os.WriteFile("supervisor.sum", []byte(sum+"\n"), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "gensup: %v\n", err)
		os.Exit(1)
	}
}

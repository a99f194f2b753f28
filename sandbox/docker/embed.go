package docker

import (
	_ "embed"
	"strings"
)

//go:generate go run ./internal/gensup

//go:embed supervisor_linux_amd64.bin
var supervisorAMD64 []byte

//go:embed supervisor_linux_arm64.bin
var supervisorARM64 []byte

//go:embed supervisor.sum
var supervisorSum string

// supervisorBinary returns the embedded supervisor for a Docker engine's
// architecture (as reported by the engine: "x86_64", "aarch64", "amd64"...).
func supervisorBinary(arch string) ([]byte, bool) {
	switch arch {
	case "x86_64", "amd64":
		return supervisorAMD64, true
	case "aarch64", "arm64":
		return supervisorARM64, true
	}
	return nil, false
}

// supervisorID names the supervisor build: the hash of its sources.
func supervisorID() string { return strings.TrimSpace(supervisorSum) }

// SupervisorBinary returns the embedded supervisor for a GOARCH or a
// kernel's machine name ("amd64", "x86_64", "arm64", "aarch64"): other
// backends (kubernetes) copy the same program into their sandboxes.
func SupervisorBinary(arch string) ([]byte, bool) { return supervisorBinary(arch) }

// SupervisorID names the embedded supervisor build (a hash of its sources).
func SupervisorID() string { return supervisorID() }

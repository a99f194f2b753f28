package config

import "strings"

// The sandbox backends, declared once: config validation, the CLI's
// --backend and --sandbox flags, the parity suite and sandbox/backends
// (which switches on them in one place, backends.Open) use these.
const (
	BackendDocker = "docker" // containers through a Docker-compatible engine
	BackendBwrap  = "bwrap"  // bubblewrap namespaces on the host
	BackendNone   = "none"   // no isolation: the host itself
	// BackendKubernetes runs sessions as pods on a cluster the user
	// names ([Sandbox.Kubernetes]); never chosen automatically.
	BackendKubernetes = "kubernetes"
)

// Backends lists the sandbox backends, most isolated first. The empty
// name (automatic) picks docker when an engine answers, else bwrap.
func Backends() []string {
	return []string{BackendDocker, BackendKubernetes, BackendBwrap, BackendNone}
}

// ValidBackend reports whether name is a backend, or "" (automatic).
func ValidBackend(name string) bool {
	for _, b := range Backends() {
		if name == b {
			return true
		}
	}
	return name == ""
}

// BackendChoices names the backends for messages: "docker, bwrap or none".
func BackendChoices() string {
	b := Backends()
	return strings.Join(b[:len(b)-1], ", ") + " or " + b[len(b)-1]
}

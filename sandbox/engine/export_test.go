package engine

// Exported for engine_test (an external test package: sandboxtest imports
// engine).
var (
	ResolveHost  = resolveHost
	DockerSocket = dockerSocket
)

// SetSSHCommand replaces the ssh client and returns a restore function.
func SetSSHCommand(path string) func() {
	old := sshCommand
	sshCommand = path
	return func() { sshCommand = old }
}

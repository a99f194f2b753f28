package cli

import "example.com/api"

// Run runs.
func Run() string { return api.Greet("cli") }

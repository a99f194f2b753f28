package main

// sandboxCommand is not built yet: hidden from help until its issue lands.
func sandboxCommand() *command {
	return &command{name: "sandbox", hidden: true}
}

package main

// memoryCommand is not built yet: hidden from help until its issue lands.
func memoryCommand() *command {
	return &command{name: "memory", hidden: true}
}

package main

// benchCommand is not built yet: hidden from help until its issue lands.
func benchCommand() *command {
	return &command{name: "bench", hidden: true}
}

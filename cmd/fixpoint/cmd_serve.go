package main

// serveCommand is not built yet: hidden from help until its issue lands.
func serveCommand() *command {
	return &command{name: "serve", hidden: true}
}

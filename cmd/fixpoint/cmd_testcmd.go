package main

// testCommand is not built yet: hidden from help until its issue lands.
func testCommand() *command {
	return &command{name: "test", hidden: true}
}

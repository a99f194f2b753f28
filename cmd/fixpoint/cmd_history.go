package main

// historyCommand is not built yet: hidden from help until its issue lands.
func historyCommand() *command {
	return &command{name: "history", hidden: true}
}

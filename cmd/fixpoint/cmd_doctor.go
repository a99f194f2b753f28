package main

// doctorCommand is not built yet: hidden from help until its issue lands.
func doctorCommand() *command {
	return &command{name: "doctor", hidden: true}
}

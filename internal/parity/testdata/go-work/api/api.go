package api

// Greet greets.
func Greet(n string) string { return "hello " + n }

package api

import "testing"

func TestGreet(t *testing.T) {
	if Greet("a") != "hello a" {
		t.Fatal(Greet("a"))
	}
}

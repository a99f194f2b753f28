package cli

import "testing"

func TestRun(t *testing.T) {
	if Run() != "hello cli" {
		t.Fatal(Run())
	}
}

func TestRunTwice(t *testing.T) {
	if Run()+Run() == "" {
		t.Fatal("empty")
	}
}

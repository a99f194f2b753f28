package store

import "testing"

func TestGetOK(t *testing.T) {
	if Get([]int{1, 2}, 1) != 2 {
		t.Fatal("bad")
	}
}

func TestPut(t *testing.T) {
	var s Store
	t.Log("putting a value")
	s.Put("a", 1)
}

func TestAfterPanic(t *testing.T) {}

package util

import "testing"

func TestDouble(t *testing.T) {
	for i := range 3 {
		if Double(i) != i+i {
			t.Fatal("bad")
		}
	}
}

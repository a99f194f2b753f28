package cgoshape

import "testing"

func TestAdd(t *testing.T) {
	if Add(2, 3) != 5 {
		t.Fatal("2+3")
	}
}

func TestAddNegative(t *testing.T) {
	if Add(-2, -3) != -5 {
		t.Fatal("-2-3")
	}
}

func TestSkipped(t *testing.T) { t.Skip("documented skip") }

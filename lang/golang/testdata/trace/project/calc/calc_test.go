package calc_test

import (
	"testing"

	"example.com/m/calc"
)

func TestDouble(t *testing.T) {
	if got := calc.Run(calc.Pick("double"), 2); got != 5 {
		t.Fatalf("got %d", got)
	}
}

func TestOther(t *testing.T) {}

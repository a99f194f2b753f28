package calc

import (
	"fmt"
	"testing"
)

func TestAbs(t *testing.T) {
	if got := Abs(-3); got != 3 {
		t.Fatalf("Abs(-3) = %d, want 3", got)
	}
}

func TestAdd(t *testing.T) {
	if got, want := Add(1, 2), 3; got != want {
		t.Errorf("Add(1, 2) = %d, want %d", got, want)
	}
}

func TestAddTable(t *testing.T) {
	tests := []struct {
		name string
		a, b int
		want int
	}{
		{"zero", 0, 0, 0},
		{"case_1", 2, 3, 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Logf("adding %d and %d", tt.a, tt.b)
			if got := Add(tt.a, tt.b); got != tt.want {
				t.Errorf("got %d, want %d", got, tt.want)
			}
		})
	}
}

// equal mimics testify's assert.Equal output format.
func equal(t *testing.T, expected, actual any) {
	t.Helper()
	if expected != actual {
		t.Errorf("\n\tError Trace:\t%s\n\tError:      \tNot equal: \n\t            \texpected: %v\n\t            \tactual  : %v\n\tTest:       \t%s", "calc_test.go:53", expected, actual, t.Name())
	}
}

func TestAddTestifyStyle(t *testing.T) {
	equal(t, 7, Add(4, 3))
}

func TestSkipped(t *testing.T) {
	t.Skip("not implemented yet")
}

func ExampleAbs() {
	fmt.Println(Abs(-1))
	// Output: 1
}

func ExampleAdd() {
	fmt.Println(Add(1, 1))
	// Output: 2
}

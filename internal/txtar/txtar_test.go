package txtar

import "testing"

func TestRoundTrip(t *testing.T) {
	in := "comment\n-- a --\nx\n-- b --\ny\n"
	a := Parse(in)
	if got := a.Format(); got != in {
		t.Errorf("Format(Parse(%q)) = %q", in, got)
	}
	if d, ok := a.Get("b"); !ok || d != "y\n" {
		t.Errorf(`Get("b") = %q, %v`, d, ok)
	}
	a.Set("b", "z\n")
	a.Set("c", "w\n")
	if got, want := a.Format(), "comment\n-- a --\nx\n-- b --\nz\n-- c --\nw\n"; got != want {
		t.Errorf("after Set: %q, want %q", got, want)
	}
}

package redact

import (
	"strings"
	"testing"
)

// Two secrets, one a prefix of the other: the longer is masked whole, not
// its prefix with the rest printed (held-out mutation audit).
func TestMaskerLongestValueFirst(t *testing.T) {
	short := "Zq8vR2mK7tLp"
	long := short + "Xw4nB9cD2fGh"
	m := NewMasker([]string{short, long})
	out := m.String("token=" + long + " end")
	if strings.Contains(out, "Xw4nB9cD2fGh") || strings.Contains(out, short) {
		t.Errorf("String = %q: a part of the longer secret is printed", out)
	}
}

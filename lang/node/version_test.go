package node

import (
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang/langtest"
)

var v = langtest.MustVersion

func TestNodeRange(t *testing.T) {
	tests := []struct {
		rng  string
		ver  string
		want bool
	}{
		{"^20.19.0 || ^22.12.0 || >=24.0.0", "18.20.4", false},
		{"^20.19.0 || ^22.12.0 || >=24.0.0", "20.18.9", false},
		{"^20.19.0 || ^22.12.0 || >=24.0.0", "20.19.0", true},
		{"^20.19.0 || ^22.12.0 || >=24.0.0", "22.11.0", false},
		{"^20.19.0 || ^22.12.0 || >=24.0.0", "24.1.0", true},
		{">=12.13", "18.20.4", true},
		{">= 0.8", "18.20.4", true},
		{">=99", "24.21.0", false},
		{"20", "20.5.1", true},
		{"20", "21.0.0", false},
		{"v20.19.0", "20.19.0", true},
		{"v20.19.0", "20.19.1", false},
		{"~20.1", "20.1.9", true},
		{"~20.1", "20.2.0", false},
		{"^0.2.3", "0.3.0", false},
		{"16 - 18", "18.9.0", true},
		{"16 - 18", "19.0.0", false},
		{">18 <20", "19.1.0", true},
		{">18 <20", "18.5.0", false},
		{"20.x", "20.9.0", true},
		{"*", "1.0.0", true},
	}
	for _, tt := range tests {
		r, err := ParseRange(tt.rng)
		if err != nil {
			t.Fatalf("ParseRange(%q): %v", tt.rng, err)
		}
		if got := r.Allows(v(tt.ver)); got != tt.want {
			t.Errorf("ParseRange(%q).Allows(%s) = %v, want %v", tt.rng, tt.ver, got, tt.want)
		}
	}
}

func TestParseRangeErrors(t *testing.T) {
	for _, s := range []string{"banana", ">=1.2.3.4"} {
		if _, err := ParseRange(s); err == nil {
			t.Errorf("ParseRange(%q) = nil error, want one", s)
		}
	}
}

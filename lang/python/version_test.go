package python

import (
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang/langtest"
)

var v = langtest.MustVersion

func TestPythonSpec(t *testing.T) {
	tests := []struct {
		spec string
		ver  string
		want bool
	}{
		{">=3.10", "3.11.2", true},
		{">= 3.10", "3.9.18", false},
		{">=3.12", "3.11.2", false},
		{">=3.8,<4", "3.11.2", true},
		{">=3.8,<3.11", "3.11.2", false},
		{"~=3.10", "3.11.2", true},
		{"~=3.10.1", "3.11.0", false},
		{"==3.11.*", "3.11.2", true},
		{"!=3.11.*", "3.11.2", false},
		{"!=3.11.*,>=3.8", "3.12.0", true},
		{"3.11", "3.11.7", true},
		{"3.12", "3.11.7", false},
		{"==3.11.2", "3.11.2", true},
	}
	for _, tt := range tests {
		r, err := ParseSpec(tt.spec)
		if err != nil {
			t.Fatalf("ParseSpec(%q): %v", tt.spec, err)
		}
		if got := r.Allows(v(tt.ver)); got != tt.want {
			t.Errorf("ParseSpec(%q).Allows(%s) = %v, want %v", tt.spec, tt.ver, got, tt.want)
		}
	}
}

func TestParseSpecErrors(t *testing.T) {
	for _, s := range []string{"~=3", ">=", "banana"} {
		if _, err := ParseSpec(s); err == nil {
			t.Errorf("ParseSpec(%q) = nil error, want one", s)
		}
	}
}

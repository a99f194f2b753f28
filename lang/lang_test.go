package lang

import "testing"

func v(s string) Version {
	x, err := ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return x
}

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
		r, err := ParseNodeRange(tt.rng)
		if err != nil {
			t.Fatalf("ParseNodeRange(%q): %v", tt.rng, err)
		}
		if got := r.Allows(v(tt.ver)); got != tt.want {
			t.Errorf("ParseNodeRange(%q).Allows(%s) = %v, want %v", tt.rng, tt.ver, got, tt.want)
		}
	}
}

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
		r, err := ParsePythonSpec(tt.spec)
		if err != nil {
			t.Fatalf("ParsePythonSpec(%q): %v", tt.spec, err)
		}
		if got := r.Allows(v(tt.ver)); got != tt.want {
			t.Errorf("ParsePythonSpec(%q).Allows(%s) = %v, want %v", tt.spec, tt.ver, got, tt.want)
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, s := range []string{"banana", ">=1.2.3.4"} {
		if _, err := ParseNodeRange(s); err == nil {
			t.Errorf("ParseNodeRange(%q) = nil error, want one", s)
		}
	}
	for _, s := range []string{"~=3", ">=", "banana"} {
		if _, err := ParsePythonSpec(s); err == nil {
			t.Errorf("ParsePythonSpec(%q) = nil error, want one", s)
		}
	}
}

func TestBest(t *testing.T) {
	r, _ := ParseNodeRange("^20.19.0 || ^22.12.0")
	got, ok := r.Best([]Version{v("18.20.4"), v("20.19.5"), v("22.12.0"), v("22.23.3"), v("24.0.0")})
	if !ok || got != v("22.23.3") {
		t.Errorf("Best = %v %v, want 22.23.3", got, ok)
	}
}

package lang

import "testing"

func v(s string) Version {
	x, err := ParseVersion(s)
	if err != nil {
		panic(err)
	}
	return x
}

func TestBest(t *testing.T) {
	// ^20.19.0 || ^22.12.0
	r := AnyOf([]Bound{{Op: ">=", V: v("20.19.0")}, {Op: "<", V: v("21.0.0")}}, []Bound{{Op: ">=", V: v("22.12.0")}, {Op: "<", V: v("23.0.0")}})
	got, ok := r.Best([]Version{v("18.20.4"), v("20.19.5"), v("22.12.0"), v("22.23.3"), v("24.0.0")})
	if !ok || got != v("22.23.3") {
		t.Errorf("Best = %v %v, want 22.23.3", got, ok)
	}
}

package lang

import "testing"

// lowestPicker is a language that runs the lowest allowed release.
type lowestPicker struct{ Language }

func (lowestPicker) PickRelease(r Range, published []Version) (Version, bool) {
	return r.Lowest(published, func(v Version) Version { return v }, func(Version) bool { return true })
}

// ChooseRelease asks the language's picker when it has one, else takes
// the newest allowed release, and returns the release (URL and SRI) of
// the chosen version.
func TestChooseRelease(t *testing.T) {
	rel := func(s string) Release {
		v, err := ParseVersion(s)
		if err != nil {
			t.Fatal(err)
		}
		return Release{Version: v, URL: "https://x/" + s + ".tgz", SRI: "sha512-" + s}
	}
	published := []Release{rel("18.1.0"), rel("20.3.0"), rel("20.11.1"), rel("22.0.0")}
	twenty := AnyOf(Series(Version{Major: 20}, 1))
	tests := []struct {
		name string
		l    Language
		r    Range
		want string // "" = none
	}{
		{name: "newest allowed", l: nil, r: twenty, want: "20.11.1"},
		{name: "the language's picker", l: lowestPicker{}, r: twenty, want: "20.3.0"},
		{name: "none allowed", l: nil, r: AtLeast(rel("23.0.0").Version), want: ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := ChooseRelease(tt.l, tt.r, published)
			if tt.want == "" {
				if ok {
					t.Fatalf("ChooseRelease = %v, want none", got.Version)
				}
				return
			}
			if !ok || got != rel(tt.want) {
				t.Fatalf("ChooseRelease = %+v, %v; want %+v", got, ok, rel(tt.want))
			}
		})
	}
}

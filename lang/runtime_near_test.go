package lang_test

import (
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/node"
)

// TestChooseReleaseNear: a sandbox runs the host's runtime version when
// the project allows it and it is published (what a native run on this
// machine runs), else the language's own choice.
func TestChooseReleaseNear(t *testing.T) {
	v := func(s string) lang.Version {
		x, err := lang.ParseVersion(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	var rels []lang.Release
	for _, s := range []string{"18.20.4", "20.19.0", "20.20.2", "22.12.0", "24.1.0"} {
		rels = append(rels, lang.Release{Version: v(s)})
	}
	r := func(s string) lang.Range {
		x, err := node.ParseRange(s)
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	l := node.Language{}
	tests := []struct {
		name   string
		rng    string
		host   string // "" = no node on the host
		want   string
		prefer bool // PreferHost over an image with 18.20.4 (publication aside)
	}{
		{"host allowed and published", ">=18", "20.20.2", "20.20.2", true},
		{"no host runtime", ">=18", "", "18.20.4", false}, // node's pick: the oldest even major's newest
		{"host not allowed", "^22.12.0", "20.20.2", "22.12.0", false},
		{"host unpublished", ">=18", "20.20.3", "18.20.4", true},
		{"host is the image's", ">=18", "18.20.4", "18.20.4", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			host, ok := lang.Version{}, tt.host != ""
			if ok {
				host = v(tt.host)
			}
			got, found := lang.ChooseReleaseNear(l, r(tt.rng), rels, host, ok)
			if !found || got.Version != v(tt.want) {
				t.Errorf("ChooseReleaseNear(%s, host %q) = %v, %v; want %s", tt.rng, tt.host, got.Version, found, tt.want)
			}
			image := v("18.20.4")
			if p := lang.PreferHost(r(tt.rng), image, host, ok); p != tt.prefer {
				t.Errorf("PreferHost(%s, image 18.20.4, host %q) = %v", tt.rng, tt.host, p)
			}
		})
	}
}

package image

import "testing"

// ImageLang inverts ImageName for fixpoint's default images only.
func TestImageLang(t *testing.T) {
	tests := []struct {
		img, lang string
		ok        bool
	}{
		{img: ImageName("rust"), lang: "rust", ok: true},
		{img: "fixpoint-sandbox-node:20.11.1", ok: false}, // a per-version image
		{img: "fixpoint-sandbox-", ok: false},
		{img: "registry.example/fixpoint-sandbox-go", ok: false},
		{img: ProjectImagePrefix + "abc", ok: false},
		{img: "python:3.12", ok: false},
	}
	for _, tt := range tests {
		lang, ok := ImageLang(tt.img)
		if lang != tt.lang || ok != tt.ok {
			t.Errorf("ImageLang(%q) = %q, %v; want %q, %v", tt.img, lang, ok, tt.lang, tt.ok)
		}
	}
}

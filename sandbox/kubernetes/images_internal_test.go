package kubernetes

import (
	"errors"
	"strings"
	"testing"
)

// TestImageRef: with a registry configured, fixpoint's own images come
// from it pinned by digest; other images are left alone; a language that
// was not pushed, a bad registry or a bad pin fail naming the key and the
// fix.
func TestImageRef(t *testing.T) {
	const dig = "sha256:0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
	cases := []struct {
		name     string
		registry string
		tags     map[string]string
		img      string
		want     string
		wantErr  string // checkImages or imageRef
	}{
		{name: "no registry", img: "fixpoint-sandbox-python", want: "fixpoint-sandbox-python"},
		{name: "pinned", registry: "127.0.0.1:5000", tags: map[string]string{"python": "3f2a0c1d9e8b@" + dig},
			img: "fixpoint-sandbox-python", want: "127.0.0.1:5000/fixpoint-sandbox-python:3f2a0c1d9e8b@" + dig},
		{name: "registry path", registry: "registry.example.com/team", tags: map[string]string{"go": "abc"},
			img: "fixpoint-sandbox-go", want: "registry.example.com/team/fixpoint-sandbox-go:abc"},
		{name: "user image untouched", registry: "127.0.0.1:5000", tags: map[string]string{"python": "t"},
			img: "ghcr.io/acme/ci:1", want: "ghcr.io/acme/ci:1"},
		{name: "per-version image untouched", registry: "127.0.0.1:5000", img: "fixpoint-sandbox-node:20.11.1", want: "fixpoint-sandbox-node:20.11.1"},
		{name: "not pushed", registry: "127.0.0.1:5000", tags: map[string]string{"python": "t"},
			img: "fixpoint-sandbox-go", wantErr: "fixpoint sandbox images push 127.0.0.1:5000 --lang go"},
		{name: "scheme", registry: "https://r.example.com", wantErr: "sandbox.kubernetes.image_registry"},
		{name: "tag in registry", registry: "r.example.com/x:1", wantErr: "sandbox.kubernetes.image_registry"},
		{name: "bad pin", registry: "r.example.com", tags: map[string]string{"python": "t@sha256:abc"}, wantErr: "sandbox.kubernetes.image_tags"},
		{name: "path in tag", registry: "r.example.com", tags: map[string]string{"python": "../evil"}, wantErr: "sandbox.kubernetes.image_tags"},
		{name: "tags without registry", tags: map[string]string{"python": "t"}, wantErr: "without image_registry"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			b := &Backend{opts: Options{ImageRegistry: tc.registry, ImageTags: tc.tags}}
			err := b.checkImages()
			got := ""
			if err == nil {
				got, err = b.imageRef(tc.img)
			}
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) || !errors.Is(err, ErrConfig) {
					t.Errorf("imageRef(%q) = %q, %v; want an ErrConfig naming %q", tc.img, got, err, tc.wantErr)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Errorf("imageRef(%q) = %q, %v; want %q", tc.img, got, err, tc.want)
			}
		})
	}
}

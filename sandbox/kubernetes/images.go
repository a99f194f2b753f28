package kubernetes

import (
	"fmt"
	"maps"
	"slices"

	"github.com/fixpoint-dev/fixpoint/sandbox/image"
)

// checkImages validates Options.ImageRegistry and ImageTags.
func (b *Backend) checkImages() error {
	if b.opts.ImageRegistry == "" {
		if len(b.opts.ImageTags) > 0 {
			return fmt.Errorf("%w: sandbox.kubernetes.image_tags is set without image_registry: set both as `fixpoint sandbox images push REGISTRY` prints them", ErrConfig)
		}
		return nil
	}
	if err := image.ValidateRegistry(b.opts.ImageRegistry); err != nil {
		return fmt.Errorf("%w: sandbox.kubernetes.image_registry: %w", ErrConfig, err)
	}
	for _, l := range slices.Sorted(maps.Keys(b.opts.ImageTags)) {
		if _, err := image.RemoteRef(b.opts.ImageRegistry, l, b.opts.ImageTags[l]); err != nil {
			return fmt.Errorf("%w: sandbox.kubernetes.image_tags: %w", ErrConfig, err)
		}
	}
	return nil
}

// imageRef is the image a session's pod uses for img: with a registry
// configured, fixpoint's own image of a language (fixpoint-sandbox-LANG)
// becomes REGISTRY/fixpoint-sandbox-LANG:TAG@DIGEST; any other image
// (sandbox.image) is used as it is.
func (b *Backend) imageRef(img string) (string, error) {
	l, ok := image.ImageLang(img)
	if b.opts.ImageRegistry == "" || !ok {
		return img, nil
	}
	tag, ok := b.opts.ImageTags[l]
	if !ok {
		return "", fmt.Errorf("%w: %s was not pushed to %s (no %q in sandbox.kubernetes.image_tags): run `fixpoint sandbox images push %s --lang %s` and put the setting it prints in your user config",
			ErrConfig, img, b.opts.ImageRegistry, l, b.opts.ImageRegistry, l)
	}
	return image.RemoteRef(b.opts.ImageRegistry, l, tag)
}

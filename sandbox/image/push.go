package image

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/distribution/reference"
	"github.com/docker/docker/api/types"
	dimage "github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/jsonmessage"
)

// PushClient is the part of the engine API [Push] uses.
type PushClient interface {
	ImageInspect(ctx context.Context, image string, opts ...client.ImageInspectOption) (dimage.InspectResponse, error)
	ImageTag(ctx context.Context, source, target string) error
	ImagePush(ctx context.Context, ref string, opts dimage.PushOptions) (io.ReadCloser, error)
}

// Pushed is one image [Push] put in a registry.
type Pushed struct {
	Local  string // the local image, fixpoint-sandbox-python
	Remote string // REGISTRY/fixpoint-sandbox-python:TAG
	Tag    string // the recipe hash the image carries (LabelRecipe)
	Digest string // the manifest digest the registry stores, sha256:…
	ID     string // the local image id (its config digest)
}

// Pinned is the tag and digest a pod references: "TAG@sha256:…".
func (p Pushed) Pinned() string { return p.Tag + "@" + p.Digest }

// ErrRegistry wraps a registry argument that is not a registry.
var ErrRegistry = errors.New("bad registry")

// ValidateRegistry checks a registry prefix: a host with an optional port
// and path ("registry.example.com/team", "127.0.0.1:5000"), no scheme, no
// tag and no digest.
func ValidateRegistry(registry string) error {
	switch {
	case registry == "":
		return fmt.Errorf("%w: empty", ErrRegistry)
	case strings.Contains(registry, "://"):
		return fmt.Errorf("%w %q: give the registry without a scheme (registry.example.com/team, 127.0.0.1:5000)", ErrRegistry, registry)
	}
	// With the image name appended, a tag or digest in registry, or
	// anything else a reference cannot hold, fails to parse.
	if _, err := reference.ParseNormalizedNamed(registry + "/" + ImageName("python")); err != nil {
		return fmt.Errorf("%w %q: want HOST[:PORT][/PATH] without a tag or digest (registry.example.com/team, 127.0.0.1:5000): %v", ErrRegistry, registry, err)
	}
	return nil
}

// RegistryHost is the registry's host (and port), as credentials are keyed
// by it: "docker.io" for a Docker Hub namespace.
func RegistryHost(registry string) string {
	named, err := reference.ParseNormalizedNamed(registry + "/" + ImageName("python"))
	if err != nil {
		return registry
	}
	return reference.Domain(named)
}

var pinnedTag = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}(@sha256:[0-9a-f]{64})?$`)

// RemoteRef is the reference of fixpoint's image for language lang in
// registry, pinned as [Pushed.Pinned] gives it ("TAG@sha256:…", or a bare
// tag).
func RemoteRef(registry, lang, pinned string) (string, error) {
	if !pinnedTag.MatchString(pinned) {
		return "", fmt.Errorf("tag %q of %s: want TAG or TAG@sha256:<64 hex digits>, as `fixpoint sandbox images push` prints it", pinned, lang)
	}
	ref := registry + "/" + ImageName(lang) + ":" + pinned
	if _, err := reference.ParseNormalizedNamed(ref); err != nil {
		return "", fmt.Errorf("image %s: %w", ref, err)
	}
	return ref, nil
}

// Push tags the local image local (one of fixpoint's, carrying its recipe
// hash in LabelRecipe) as REGISTRY/NAME:<recipe hash> and pushes it
// through the engine, which talks to the registry. auth is the encoded
// X-Registry-Auth value ([RegistryAuth]; "" = none); it is never logged.
// Progress, when non-nil, receives one line per layer state.
func Push(ctx context.Context, cli PushClient, local, registry, auth string, progress io.Writer) (*Pushed, error) {
	if err := ValidateRegistry(registry); err != nil {
		return nil, err
	}
	insp, err := cli.ImageInspect(ctx, local)
	if err != nil {
		return nil, fmt.Errorf("inspect %s: %w", local, err)
	}
	var tag string
	if insp.Config != nil {
		tag = insp.Config.Labels[LabelRecipe]
	}
	if tag == "" {
		return nil, fmt.Errorf("image %s has no %s label: build it with `fixpoint sandbox images build`", local, LabelRecipe)
	}
	name, _, _ := strings.Cut(local, ":")
	p := &Pushed{Local: local, Remote: registry + "/" + name + ":" + tag, Tag: tag, ID: insp.ID}
	if err := cli.ImageTag(ctx, local, p.Remote); err != nil {
		return nil, fmt.Errorf("tag %s as %s: %w", local, p.Remote, err)
	}
	body, err := cli.ImagePush(ctx, p.Remote, dimage.PushOptions{RegistryAuth: auth})
	if err != nil {
		return nil, fmt.Errorf("push %s: %w", p.Remote, err)
	}
	defer body.Close()
	p.Digest, err = pushDigest(body, progress)
	if err != nil {
		return nil, fmt.Errorf("push %s: %w", p.Remote, err)
	}
	return p, nil
}

// pushDigest reads the engine's push stream and returns the manifest
// digest of its final aux message; an error message in the stream (the
// engine reports a refused push there, with a nil error from ImagePush)
// fails it.
func pushDigest(r io.Reader, progress io.Writer) (string, error) {
	dec := json.NewDecoder(r)
	digest := ""
	for {
		var m jsonmessage.JSONMessage
		if err := dec.Decode(&m); err == io.EOF {
			break
		} else if err != nil {
			return "", fmt.Errorf("read the engine's push stream: %w", err)
		}
		if m.Error != nil {
			return "", errors.New(m.Error.Message)
		}
		if m.Aux != nil {
			var res types.PushResult
			if json.Unmarshal(*m.Aux, &res) == nil && res.Digest != "" {
				digest = res.Digest
			}
			continue
		}
		if progress != nil && m.Status != "" && m.Progress == nil {
			if m.ID != "" {
				fmt.Fprintf(progress, "  %s: %s\n", m.ID, m.Status)
			} else {
				fmt.Fprintf(progress, "  %s\n", m.Status)
			}
		}
	}
	if digest == "" {
		return "", errors.New("the engine reported no manifest digest")
	}
	return digest, nil
}

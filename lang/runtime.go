package lang

import (
	"context"
	"io/fs"
)

// RuntimeSource is implemented by languages whose runtime can be fetched
// in other versions than the one of their default image (Node from the
// npm registry, Go from the module proxy). sandbox/image lays a release on
// top of the default image as a per-version image; it downloads, verifies
// and caches the release itself and asks the language only where releases
// are listed and what a downloaded one puts into the image. A language
// without it has the one version of its default image.
type RuntimeSource interface {
	// SourceEnv names the host environment variables that configure the
	// source ("NPM_CONFIG_REGISTRY", "GOPROXY"); the first one set is
	// passed to Releases as src.
	SourceEnv() []string
	// Releases lists the published releases, pre-releases left out, from
	// src ("" = the public source). get fetches listings with the caller's
	// HTTP client. An error names what could not be listed.
	Releases(ctx context.Context, get Get, src string) ([]Release, error)
	// Layer turns a release, downloaded to file (and checked against its
	// SRI), into what the per-version image adds to the default image.
	// It may unpack file next to itself (file without its extension), once.
	Layer(r Release, file string) (*RuntimeLayer, error)
}

// Get fetches url and returns the body of a 200 response; accept, when
// not "", is sent as the Accept header.
type Get func(ctx context.Context, url, accept string) ([]byte, error)

// Release is one downloadable runtime build.
type Release struct {
	Version Version
	// URL is the archive to download; its extension names the cached
	// file's, which Layer receives.
	URL string
	// SRI is a subresource-integrity string ("sha512-<base64>", as npm
	// gives it) the download must match; "" when the source gives none.
	SRI string
}

// RuntimeLayer is what a per-version image adds on top of the default
// image: files and host directories copied in (owned by root), then
// environment variables. Paths are absolute inside the image.
type RuntimeLayer struct {
	Files []LayerFile
	Trees []LayerTree
	// Env is KEY=VALUE set in the image; values hold no whitespace or
	// quotes.
	Env []string
}

// LayerFile is one file of a [RuntimeLayer].
type LayerFile struct {
	Path string // "/usr/local/bin/node"
	Mode fs.FileMode
	Data []byte
}

// LayerTree is a host directory copied into the image as Path.
type LayerTree struct {
	Src  string // host directory
	Path string // "/usr/local/go1.22.12"
	// Skip, when non-nil, leaves out entries by their slash path relative
	// to Src (a marker file of the unpacking); a skipped directory is not
	// entered.
	Skip func(rel string) bool
}

// ChooseRelease is the release fixpoint runs for a requirement r among the
// published releases: the one l's ReleasePicker picks when l has one, else
// the newest release r allows. ok is false when none satisfies r. The
// setup phase (which builds the per-version image) and `fixpoint doctor`
// (which reports it) both ask here, so they name the same release.
func ChooseRelease(l Language, r Range, published []Release) (Release, bool) {
	vs := make([]Version, len(published))
	for i, rel := range published {
		vs[i] = rel.Version
	}
	best, ok := r.Best(vs)
	if p, isPicker := l.(ReleasePicker); isPicker {
		best, ok = p.PickRelease(r, vs)
	}
	if !ok {
		return Release{}, false
	}
	for _, rel := range published {
		if rel.Version == best {
			return rel, true
		}
	}
	return Release{}, false
}

// ChooseReleaseNear is ChooseRelease with the host's runtime version
// (hostOK when the host has one): when r allows host and host is
// published, it is the release, so that a sandbox runs what a native run
// on this machine runs (Node 20 on the host, engines ">=18": 20, not the
// image's 18, nor the newest 24). Otherwise ChooseRelease decides.
func ChooseReleaseNear(l Language, r Range, published []Release, host Version, hostOK bool) (Release, bool) {
	if hostOK && r.Allows(host) {
		for _, rel := range published {
			if rel.Version == host {
				return rel, true
			}
		}
	}
	return ChooseRelease(l, r, published)
}

// PreferHost reports whether a sandbox whose runtime is have should move
// to the host's version host for requirement r: the host has a runtime
// (hostOK), r allows it, and have is another version. A sandbox whose
// version r does not allow must move anyway (ChooseReleaseNear).
func PreferHost(r Range, have, host Version, hostOK bool) bool {
	return hostOK && host != have && r.Allows(host)
}

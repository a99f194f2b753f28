package setup

import (
	"context"
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fixpoint-dev/fixpoint/flock"
)

// An image's runtime version is read by running its version command in a
// throw-away container (Prober): half a second or more of every setup
// phase, so of every `fix` and `test`, for an answer that cannot change
// while the image does not. A backend that can name an image's content
// (ImageIDer: docker's image ID, a hash of the image) lets the answer be
// kept per (image ID, command), in the user's cache directory:
//
//	image-probes/<sha256 of image ID and command>   the command's output
//
// A rebuilt or re-pulled image has another ID, so it is probed again. Only
// successful probes are kept; a file that cannot be read or written costs
// a probe, never a wrong answer beyond what the user's own cache directory
// holds (no sandbox can write there).

// ImageIDer names the content of an image (docker's image ID).
type ImageIDer interface {
	ImageID(ctx context.Context, image string) (string, error)
}

func defaultProbeDir() string { return flock.Dir("image-probes") }

// probe runs argv in img through pr, or returns the output kept from an
// earlier probe of the same image content and command.
func (p *Preparer) probe(ctx context.Context, pr Prober, img string, argv []string) (string, error) {
	ider, ok := pr.(ImageIDer)
	if !ok || p.opts.ProbeDir == "-" {
		return pr.Probe(ctx, img, argv)
	}
	id, err := ider.ImageID(ctx, img)
	if err != nil || id == "" {
		return pr.Probe(ctx, img, argv)
	}
	sum := sha256.Sum256([]byte(id + "\x00" + strings.Join(argv, "\x00")))
	path := filepath.Join(p.opts.ProbeDir, fmt.Sprintf("%x", sum[:16]))
	if b, err := os.ReadFile(path); err == nil {
		return string(b), nil
	}
	out, err := pr.Probe(ctx, img, argv)
	if err != nil {
		return out, err
	}
	if err := writeFileAtomic(path, []byte(out)); err != nil {
		p.log.Debug("keeping an image probe", "path", path, "err", err)
	}
	return out, nil
}

// writeFileAtomic writes data to path through a temporary file in its
// directory, so that a reader sees the whole content or none.
func writeFileAtomic(path string, data []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".probe-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

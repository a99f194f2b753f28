package image

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/docker/docker/api/types/build"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/jsonmessage"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// ProjectImagePrefix starts the name of every image built from a project
// Dockerfile.
const ProjectImagePrefix = "fixpoint-project-"

// fixpointSkip are the directories fixpoint owns, never sent as build
// context nor hashed: version control metadata and fixpoint's own state.
// The languages' generated directories (node_modules, target, .venv) come
// from the caller (skipDirs, DockerfileOptions.SkipDirs).
var fixpointSkip = []string{".git", ".fixpoint"}

// skipper reports whether a directory named name stays out of the build
// context: fixpoint's own or one of skipDirs.
func skipper(skipDirs []string) func(name string) bool {
	return func(name string) bool { return slices.Contains(fixpointSkip, name) || slices.Contains(skipDirs, name) }
}

// ProjectImageName names the image built from dockerfile: a hash of the
// Dockerfile and of every file in its directory (the build context),
// without the directories named in skipDirs (the languages' generated
// directories, sandbox.Snapshot.GeneratedDirs) and fixpoint's own. The
// same Dockerfile, context and skipDirs always give the same name, so an
// existing image is reused; BuildDockerfile must get the same skipDirs
// (DockerfileOptions.SkipDirs). An unreadable Dockerfile gives a name that
// does not exist; the build then reports why.
func ProjectImageName(dockerfile string, skipDirs []string) string {
	h, err := contextHash(dockerfile, skipper(skipDirs))
	if err != nil {
		return ProjectImagePrefix + "unreadable"
	}
	return ProjectImagePrefix + h
}

func contextHash(dockerfile string, skip func(name string) bool) (string, error) {
	h := sha256.New()
	data, err := os.ReadFile(dockerfile)
	if err != nil {
		return "", err
	}
	fmt.Fprintf(h, "dockerfile\x00%d\x00", len(data))
	h.Write(data)
	root := filepath.Dir(dockerfile)
	err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && skip(d.Name()) {
				return filepath.SkipDir
			}
			return nil
		}
		rel, _ := filepath.Rel(root, p)
		info, err := d.Info()
		if err != nil {
			return err
		}
		fmt.Fprintf(h, "%s\x00%o\x00%d\x00", filepath.ToSlash(rel), info.Mode(), info.Size())
		if info.Mode().IsRegular() {
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = io.Copy(h, f)
			return err
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", h.Sum(nil))[:12], nil
}

// DockerfileOptions configure BuildDockerfile. The zero value is usable.
type DockerfileOptions struct {
	// Progress receives the build output; nil = discard. It is also kept
	// (the last lines) for the error message.
	Progress io.Writer
	// Force rebuilds even when the image exists.
	Force bool
	// SkipDirs are directory names left out of the build context besides
	// fixpoint's own: those ProjectImageName hashed without.
	SkipDirs []string
	Logger   *slog.Logger
}

// BuildDockerfile builds dockerfile, with its directory as context, into
// image name unless name already exists. A failing step is an error that
// quotes the step's output (ImageBuild itself reports success).
func BuildDockerfile(ctx context.Context, cli *client.Client, dockerfile, name string, opts *DockerfileOptions) (built bool, err error) {
	o := DockerfileOptions{}
	if opts != nil {
		o = *opts
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	if !o.Force {
		if _, err := cli.ImageInspect(ctx, name); err == nil {
			return false, nil
		}
	}
	if _, err := os.Stat(dockerfile); err != nil {
		return false, fmt.Errorf("sandbox.dockerfile: %w", err)
	}
	root := filepath.Dir(dockerfile)
	skip := skipper(o.SkipDirs)
	hash := strings.TrimPrefix(name, ProjectImagePrefix)
	fmt.Fprintf(o.Progress, "building %s from %s\n", name, dockerfile)
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(writeTar(pw, []tree{{Src: root, Skip: func(rel string) bool { return skip(filepath.Base(rel)) }}}, nil))
	}()
	defer pr.Close()
	resp, err := cli.ImageBuild(ctx, pr, build.ImageBuildOptions{
		Tags:        []string{name},
		Dockerfile:  filepath.Base(dockerfile),
		Remove:      true,
		ForceRemove: true,
		Labels:      map[string]string{LabelRecipe: hash, LabelLang: "project"},
	})
	if err != nil {
		return false, fmt.Errorf("build %s: %w", dockerfile, err)
	}
	defer resp.Body.Close()
	tail := &sandbox.TailBuffer{Max: 4 << 10}
	err = jsonmessage.DisplayJSONMessagesStream(resp.Body, io.MultiWriter(o.Progress, tail), 0, false, nil)
	if err != nil {
		return false, fmt.Errorf("build %s failed: %v\n%s", dockerfile, err, tail.String())
	}
	if _, err := cli.ImageInspect(ctx, name); err != nil {
		return false, fmt.Errorf("build %s: image %s missing after build\n%s", dockerfile, name, tail.String())
	}
	return true, nil
}

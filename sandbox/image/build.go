package image

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	cerrdefs "github.com/containerd/errdefs"
	"github.com/docker/docker/api/types/image"
	"github.com/docker/docker/client"
	"github.com/docker/docker/pkg/jsonmessage"
	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox/engine"
)

// Options configure a [Builder]. The zero value is ready to use.
type Options struct {
	// Client talks to the engine; nil = client.FromEnv with API negotiation.
	Client *client.Client
	// CacheDir holds debootstrapped trees, downloaded packages and logs;
	// "" = $XDG_CACHE_HOME/fixpoint, else ~/.cache/fixpoint.
	CacheDir string
	// Mirror is the Debian mirror; "" = the machine's apt sources, else
	// DefaultMirror.
	Mirror string
	// Suite is the Debian release; "" = the host's codename, else bookworm.
	Suite string
	// GoRoot is copied into the go image; "" = `go env GOROOT`, else
	// $GOROOT when it holds bin/go. (Not runtime.GOROOT: that is the
	// build machine's, meaningless once the binary is copied.)
	GoRoot string
	// Debootstrap is the program to run; "" = "debootstrap" on PATH.
	Debootstrap string
	// Progress receives one readable line per build step; nil = discard.
	Progress io.Writer
	// Logger receives debug logs; nil = discard.
	Logger *slog.Logger
	// Tag, when set, names the images built and inspected
	// fixpoint-sandbox-<language>:<Tag> instead of the default (latest)
	// ones: a new recipe can be built and tried beside the images in use.
	Tag string
}

// Builder builds the default sandbox images. It is safe for one goroutine.
type Builder struct {
	opts     Options
	cli      *client.Client
	cacheDir string
	log      *slog.Logger
}

// NewBuilder returns a builder. It does not contact the engine.
func NewBuilder(opts *Options) (*Builder, error) {
	b := &Builder{}
	if opts != nil {
		b.opts = *opts
	}
	if b.opts.Debootstrap == "" {
		b.opts.Debootstrap = "debootstrap"
	}
	if b.opts.Progress == nil {
		b.opts.Progress = io.Discard
	}
	b.log = b.opts.Logger
	if b.log == nil {
		b.log = slog.New(slog.DiscardHandler)
	}
	b.cli = b.opts.Client
	if b.cli == nil {
		cli, err := engine.NewClient()
		if err != nil {
			return nil, fmt.Errorf("docker client: %w", err)
		}
		b.cli = cli
	}
	b.cacheDir = b.opts.CacheDir
	if b.cacheDir == "" {
		b.cacheDir = DefaultCacheDir(os.Getenv)
	}
	return b, nil
}

// DefaultCacheDir is $XDG_CACHE_HOME/fixpoint, else ~/.cache/fixpoint.
func DefaultCacheDir(getenv func(string) string) string {
	if x := getenv("XDG_CACHE_HOME"); x != "" {
		return filepath.Join(x, "fixpoint")
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, ".cache", "fixpoint")
}

// Inputs resolves the machine facts the recipes depend on.
func (b *Builder) Inputs(ctx context.Context, r Recipe) (Inputs, error) {
	in := Inputs{Suite: b.opts.Suite, Mirror: b.opts.Mirror}
	if in.Suite == "" {
		in.Suite = HostSuite("/")
	}
	if in.Mirror == "" {
		in.Mirror = MachineMirror("/")
	}
	if r.GoRoot {
		goroot, err := b.goRoot(ctx)
		if err != nil {
			return in, err
		}
		if in.GoVersion, err = GoVersion(goroot); err != nil {
			return in, err
		}
	}
	return in, nil
}

func (b *Builder) goRoot(ctx context.Context) (string, error) {
	if b.opts.GoRoot != "" {
		return b.opts.GoRoot, nil
	}
	if out, err := exec.CommandContext(ctx, "go", "env", "GOROOT").Output(); err == nil {
		if s := strings.TrimSpace(string(out)); s != "" {
			b.opts.GoRoot = s
			return s, nil
		}
	}
	if r := os.Getenv("GOROOT"); r != "" {
		if _, err := os.Stat(filepath.Join(r, "bin", "go")); err == nil {
			b.opts.GoRoot = r
			return r, nil
		}
	}
	return "", errors.New("no Go toolchain found for the go image: install Go or set GOROOT")
}

// Status is what the engine has for one recipe.
type Status struct {
	Name     string
	Present  bool
	UpToDate bool   // present and labelled with the current recipe hash
	Want     string // current recipe hash
	Have     string // hash on the existing image ("" when absent or unlabelled)
	ID       string
	Size     int64
}

// ref is the image a recipe builds: its name, tagged Options.Tag when
// set. The tag is not part of the recipe's hash.
func (b *Builder) ref(r Recipe) string {
	if b.opts.Tag != "" {
		return r.Name + ":" + b.opts.Tag
	}
	return r.Name
}

// Status inspects the default image of l without building anything.
func (b *Builder) Status(ctx context.Context, l lang.Language) (Status, error) {
	r := RecipeFor(l)
	in, err := b.Inputs(ctx, r)
	if err != nil {
		return Status{}, err
	}
	st := Status{Name: b.ref(r), Want: r.Hash(in)}
	insp, err := b.cli.ImageInspect(ctx, b.ref(r))
	if isNotFound(err) {
		return st, nil
	}
	if err != nil {
		return st, fmt.Errorf("inspect %s: %w", b.ref(r), err)
	}
	st.Present, st.ID, st.Size = true, insp.ID, insp.Size
	if insp.Config != nil {
		st.Have = insp.Config.Labels[LabelRecipe]
	}
	st.UpToDate = st.Have == st.Want
	return st, nil
}

// Outcome reports one Build.
type Outcome struct {
	Name     string
	Hash     string
	Skipped  bool // the image was up to date
	Duration time.Duration
	Size     int64
}

// Build builds the default image of l unless it is up to date (force
// rebuilds the image, but reuses the cached root filesystem).
func (b *Builder) Build(ctx context.Context, l lang.Language, force bool) (*Outcome, error) {
	start := time.Now()
	st, err := b.Status(ctx, l)
	if err != nil {
		return nil, err
	}
	out := &Outcome{Name: st.Name, Hash: st.Want}
	if st.UpToDate && !force {
		b.progressf("%s is up to date (recipe %s)", st.Name, st.Want)
		out.Skipped, out.Size = true, st.Size
		return out, nil
	}
	switch {
	case st.Present && st.Have != st.Want:
		b.progressf("%s: recipe changed (%s -> %s), rebuilding", st.Name, orNone(st.Have), st.Want)
	case force && st.Present:
		b.progressf("%s: --force given, rebuilding (recipe %s)", st.Name, st.Want)
	default:
		b.progressf("%s: building (recipe %s)", st.Name, st.Want)
	}
	r := RecipeFor(l)
	in, err := b.Inputs(ctx, r)
	if err != nil {
		return nil, err
	}
	rootfs, err := b.ensureRootfs(ctx, r, in)
	if err != nil {
		return nil, err
	}
	trees := []tree{{Src: rootfs, Skip: skipRootfs}}
	var progEntries []entry
	if r.GoRoot {
		goroot, _ := b.goRoot(ctx)
		trees = append(trees, tree{Src: goroot, Dst: strings.TrimPrefix(GoRootInImage, "/"), Skip: skipGoRoot, Root: true})
		cache, err := b.ensureGoCache(ctx, r, in, goroot, rootfs)
		if err != nil {
			return nil, err
		}
		r.goCacheProg = GoCacheProgSupported(in.GoVersion)
		if !r.goCacheProg {
			trees = append(trees, tree{Src: cache, Dst: strings.TrimPrefix(GoCacheDir, "/"), Own: true})
		} else {
			prog, err := b.ensureGoCacheProg(ctx, goroot, filepath.Dir(cache))
			if err != nil {
				return nil, err
			}
			trees = append(trees, tree{Src: cache, Dst: strings.TrimPrefix(GoCacheImageDir, "/"), Root: true})
			if progEntries, err = goCacheProgEntries(prog); err != nil {
				return nil, err
			}
		}
	}
	entries, err := userEntries(rootfs, r)
	if err != nil {
		return nil, err
	}
	entries = append(entries, progEntries...)
	b.progressf("%s: importing into the engine", r.Name)
	if err := b.importTar(ctx, r, st.Want, trees, entries); err != nil {
		return nil, err
	}
	after, err := b.Status(ctx, l)
	if err != nil {
		return nil, err
	}
	if !after.UpToDate {
		return nil, fmt.Errorf("%s: imported image lacks label %s=%s", r.Name, LabelRecipe, st.Want)
	}
	if st.Present && st.ID != after.ID {
		// The old image is now untagged; drop it unless a container uses it.
		if _, err := b.cli.ImageRemove(ctx, st.ID, image.RemoveOptions{PruneChildren: true}); err != nil {
			b.log.Debug("keep old image", "id", st.ID, "err", err)
		}
	}
	out.Duration, out.Size = time.Since(start), after.Size
	b.progressf("%s: built in %s (recipe %s, %d MB)", r.Name, out.Duration.Round(time.Second), st.Want, after.Size>>20)
	return out, nil
}

func (b *Builder) importTar(ctx context.Context, r Recipe, hash string, trees []tree, entries []entry) error {
	pr, pw := io.Pipe()
	writeErr := make(chan error, 1)
	go func() {
		err := writeTar(pw, trees, entries)
		pw.CloseWithError(err)
		writeErr <- err
	}()
	body, err := b.cli.ImageImport(ctx, image.ImportSource{Source: pr, SourceName: "-"}, b.ref(r),
		image.ImportOptions{Changes: r.Changes(hash), Message: "fixpoint sandbox image " + r.Lang})
	if err == nil {
		err = jsonmessage.DisplayJSONMessagesStream(body, io.Discard, 0, false, nil)
		body.Close()
	}
	pr.CloseWithError(errors.New("import finished")) // unblocks the writer on early failure
	werr := <-writeErr
	if err != nil {
		return fmt.Errorf("import %s: %w", b.ref(r), err)
	}
	if werr != nil {
		return fmt.Errorf("write %s layer: %w", r.Name, werr)
	}
	return nil
}

// userEntries adds the sandbox user and its directories to the image.
func userEntries(rootfs string, r Recipe) ([]entry, error) {
	passwd, err := os.ReadFile(filepath.Join(rootfs, "etc/passwd"))
	if err != nil {
		return nil, fmt.Errorf("read rootfs passwd: %w", err)
	}
	group, err := os.ReadFile(filepath.Join(rootfs, "etc/group"))
	if err != nil {
		return nil, fmt.Errorf("read rootfs group: %w", err)
	}
	passwd = appendLine(passwd, User+":", fmt.Sprintf("%s:x:%d:%d:fixpoint sandbox:%s:/bin/sh", User, UID, GID, Home))
	group = appendLine(group, User+":", fmt.Sprintf("%s:x:%d:", User, GID))
	es := []entry{
		{Name: "etc/passwd", Mode: 0o644, Data: passwd},
		{Name: "etc/group", Mode: 0o644, Data: group},
		{Name: "tmp", Mode: 0o1777, Dir: true},
		{Name: strings.TrimPrefix(Workspace, "/"), Mode: 0o755, Dir: true, UID: UID, GID: GID},
		{Name: strings.TrimPrefix(Home, "/"), Mode: 0o755, Dir: true, UID: UID, GID: GID},
	}
	if r.GoRoot {
		es = append(es,
			entry{Name: "go", Mode: 0o755, Dir: true, UID: UID, GID: GID},
			entry{Name: "go/pkg", Mode: 0o755, Dir: true, UID: UID, GID: GID},
			entry{Name: "go/pkg/mod", Mode: 0o755, Dir: true, UID: UID, GID: GID},
		)
	}
	return es, nil
}

func appendLine(data []byte, prefix, line string) []byte {
	for _, l := range bytes.Split(data, []byte("\n")) {
		if bytes.HasPrefix(l, []byte(prefix)) {
			return data
		}
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		data = append(data, '\n')
	}
	return append(data, line+"\n"...)
}

func (b *Builder) progressf(format string, args ...any) {
	fmt.Fprintf(b.opts.Progress, format+"\n", args...)
}

func isNotFound(err error) bool {
	return err != nil && cerrdefs.IsNotFound(err)
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

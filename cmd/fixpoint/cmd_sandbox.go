package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/fixpoint-dev/fixpoint/agent/termsafe"
	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox/engine"

	"github.com/fixpoint-dev/fixpoint/agent"
	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/fixpoint-dev/fixpoint/sandbox/backends"
	"github.com/fixpoint-dev/fixpoint/sandbox/image"
)

func sandboxCommand() *command {
	c := &command{
		name:    "sandbox",
		summary: "run a command in a sandbox, or build the sandbox images",
		usage: `Usage:
  fixpoint sandbox run [--dir D] [--image I] [--backend ` + strings.Join(config.Backends(), "|") + `] [--timeout 30s] [--memory 512m] -- CMD ARGS...
  fixpoint sandbox images build [--lang ` + langChoices() + `] [--force]
  fixpoint sandbox images push REGISTRY [--lang ` + langChoices() + `]

run     copies D into a fresh sandbox, runs CMD in /workspace, streams its output
        and exits with CMD's exit code (124 on timeout, 137 when killed for
        memory). D on the host is never modified.
images  build: builds the default sandbox images offline (debootstrap + docker
        import); push: pushes them to a registry a Kubernetes cluster pulls from.
Example:
  fixpoint sandbox run --dir . -- sh -c 'id -u; ls'
  fixpoint sandbox images build --lang ` + exampleLang() + `
  fixpoint sandbox images push registry.example.com/team`,
	}
	c.run = func(ctx context.Context, a *app, args []string) int {
		if len(args) == 0 {
			newFlags(c, a.stderr).Usage()
			return exitUsage
		}
		switch args[0] {
		case "-h", "--help", "help":
			newFlags(c, a.stdout).Usage()
			return exitOK
		case "run":
			return sandboxRun(ctx, a, args[1:])
		case "images":
			switch {
			case len(args) >= 2 && args[1] == "build":
				return sandboxImagesBuild(ctx, a, args[2:])
			case len(args) >= 2 && args[1] == "push":
				return sandboxImagesPush(ctx, a, args[2:])
			}
			fmt.Fprintf(a.stderr, "fixpoint sandbox images: want `fixpoint sandbox images build [--lang %s] [--force]` or `fixpoint sandbox images push REGISTRY [--lang %s]`\n", langChoices(), langChoices())
			return exitUsage
		}
		fmt.Fprintf(a.stderr, "fixpoint sandbox: unknown subcommand %q (want run or images build)\n", args[0])
		return exitUsage
	}
	return c
}

// langChoices is the --lang values of `sandbox images build`: every
// language with a default image, or all.
func langChoices() string { return strings.Join(append(registry.Names(), "all"), "|") }

// exampleLang is the language the help's examples build an image for:
// the fallback's, whose image runs a workspace in no known language.
func exampleLang() string { return registry.Fallback().Name() }

// defaultImages describes `sandbox run --image`'s default: each registered
// language's image, and the fallback's for a workspace in none.
func defaultImages() string {
	var names []string
	for _, l := range registry.Names() {
		names = append(names, image.ImageName(l))
	}
	return "default by language: " + strings.Join(names, ", ") + " (" + image.ImageName(exampleLang()) + " for a workspace in none)"
}

// imageTagRe is a Docker tag.
var imageTagRe = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

func sandboxImagesBuild(ctx context.Context, a *app, args []string) int {
	c := &command{name: "sandbox images build", usage: `Usage: fixpoint sandbox images build [--lang ` + langChoices() + `] [--force] [--tag T]

Builds fixpoint-sandbox-<lang> offline: debootstrap from the machine's apt
mirror into a cached root filesystem, then docker import. An image whose
recipe did not change is skipped. Needs root (debootstrap) and a Docker engine.
--tag T builds fixpoint-sandbox-<lang>:T instead, leaving the images in use
alone (try it with --image or FIXPOINT_IMAGE).
Example:
  fixpoint sandbox images build --lang ` + exampleLang()}
	fs := newFlags(c, a.stderr)
	langFlag := fs.String("lang", "all", strings.Join(registry.Names(), ", ")+" or all")
	force := fs.Bool("force", false, "rebuild even when the image is up to date")
	tag := fs.String("tag", "", "build fixpoint-sandbox-<lang>:`tag` instead of the default images")
	if done, code := parseFlags(fs, args); done {
		return code
	}
	if fs.NArg() > 0 {
		return a.fail(usagef("sandbox images build: unexpected argument %q", fs.Arg(0)))
	}
	if *tag != "" && !imageTagRe.MatchString(*tag) {
		return a.fail(usagef("--tag %q: want a Docker tag (letters, digits, _ . -, not starting with . or -, at most 128)", *tag))
	}
	langs := registry.All()
	if *langFlag != "all" {
		l := registry.ByName(*langFlag)
		if l == nil {
			return a.fail(usagef("--lang %s: want %s or all", *langFlag, strings.Join(registry.Names(), ", ")))
		}
		langs = []lang.Language{l}
	}
	if err := requireEngine(ctx); err != nil {
		fmt.Fprintf(a.stderr, "fixpoint: %v\n", err)
		return exitUsage
	}
	// The images build in parallel: they share one debootstrapped tree
	// (built once, under a file lock), then the go image's import overlaps
	// the node image's apt-get.
	progress := &lockedWriter{w: a.stdout, mu: &sync.Mutex{}}
	start := time.Now()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		failed []string
	)
	for _, l := range langs {
		b, err := image.NewBuilder(&image.Options{Progress: progress, Logger: a.logger, CacheDir: image.DefaultCacheDir(a.getenv), Tag: *tag})
		if err != nil {
			return a.fail(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := b.Build(ctx, l, *force); err != nil {
				msg := err.Error()
				if ctx.Err() != nil {
					msg = "interrupted"
				}
				fmt.Fprintf(&lockedWriter{w: a.stderr, mu: progress.mu}, "fixpoint: build %s: %s\n", image.ImageName(l.Name()), msg)
				mu.Lock()
				failed = append(failed, l.Name())
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if ctx.Err() != nil {
		return exitNotReached
	}
	if len(langs) > 1 {
		fmt.Fprintf(a.stdout, "images done in %s\n", time.Since(start).Round(time.Second))
	}
	if len(failed) > 0 {
		fmt.Fprintf(a.stderr, "fixpoint: %d image(s) failed: %s\n", len(failed), strings.Join(failed, ", "))
		return exitNotReached
	}
	return exitOK
}

// lockedWriter serialises writes from concurrent builds.
type lockedWriter struct {
	w  io.Writer
	mu *sync.Mutex
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// errNoEngine is the one-line message for a missing Docker engine.
var errNoEngine = errors.New("no Docker engine answers: start it (`sudo .ci/docker-up` or `systemctl start docker`), or use --backend bwrap")

func sandboxRun(ctx context.Context, a *app, args []string) int {
	c := &command{name: "sandbox run", usage: `Usage: fixpoint sandbox run [--dir D] [--image I] [--backend ` + strings.Join(config.Backends(), "|") + `] [--timeout 30s] [--memory 512m] -- CMD ARGS...

Copies D into a fresh sandbox, runs CMD in /workspace and streams its output.
Exits with CMD's exit code: 124 on timeout, 137 when killed for memory. The
sandbox copy is discarded: D is never modified.
Example:
  fixpoint sandbox run --dir . -- sh -c 'id -u; ls'`}
	fs := newFlags(c, a.stderr)
	dir := fs.String("dir", ".", "workspace directory to copy in")
	img := fs.String("image", "", "container image (docker only); "+defaultImages())
	backendName := fs.String("backend", "", config.BackendChoices()+"; default docker when an engine answers, else bwrap")
	timeout := fs.Duration("timeout", 0, "wall-clock limit for CMD (default: sandbox.timeout, 120s)")
	memory := fs.String("memory", "", "memory limit, e.g. 512m (default: sandbox.memory, 1g)")
	sep := -1
	for i, arg := range args {
		if arg == "--" {
			sep = i
			break
		}
	}
	flagArgs := args
	if sep >= 0 {
		flagArgs = args[:sep]
	}
	if done, code := parseFlags(fs, flagArgs); done {
		return code
	}
	if sep < 0 {
		return a.fail(usagef("sandbox run: missing `--` before the command (fixpoint sandbox run [flags] -- CMD ARGS...)"))
	}
	if fs.NArg() > 0 {
		return a.fail(usagef("sandbox run: unexpected %q before `--`", fs.Arg(0)))
	}
	argv := args[sep+1:]
	if len(argv) == 0 {
		return a.fail(usagef("sandbox run: no command after `--`"))
	}
	if !config.ValidBackend(*backendName) {
		return a.fail(usagef("--backend %s: want %s", *backendName, config.BackendChoices()))
	}
	if *timeout < 0 {
		return a.fail(usagef("--timeout %s: must be positive", *timeout))
	}
	var memBytes int64
	if *memory != "" {
		n, err := config.ParseSize(*memory)
		if err != nil || n == 0 {
			return a.fail(usagef("--memory %s: want a size like 512m or 1g", *memory))
		}
		memBytes = n
	}
	root, err := workspaceDir(*dir)
	if err != nil {
		return a.fail(err)
	}
	cfg, err := a.loadConfig(root, func(c *config.Config) {
		if *img != "" {
			c.Sandbox.Image = *img
		}
		if *backendName != "" {
			c.Sandbox.Backend = *backendName
		}
		if *timeout > 0 {
			c.Sandbox.Timeout = config.Duration(*timeout)
		}
		if *memory != "" {
			c.Sandbox.Memory = *memory
		}
	})
	if err != nil {
		return a.fail(err)
	}
	snap, err := sandbox.SnapshotDir(root, agent.SnapshotOptions(cfg))
	if err != nil {
		return a.fail(err)
	}
	backend, err := backends.Open(ctx, cfg, &backends.Options{Warn: termsafe.Writer{W: a.stderr}, Logger: a.logger})
	if err != nil {
		return sandboxSetupFailed(a, err)
	}
	if cl, ok := backend.(io.Closer); ok {
		defer cl.Close()
	}
	if *img != "" && backend.Name() != config.BackendDocker {
		fmt.Fprintf(a.stderr, "fixpoint: note: --image is ignored by the %s sandbox, which uses this machine's /usr\n", backend.Name())
	}
	spec := backends.SpecFor(cfg, registry.Detect(snap), registry.Fallback(), snap)
	spec.Labels["fixpoint.component"] = "sandbox-run"
	if memBytes > 0 {
		spec.Limits.Memory = memBytes
	}
	sess, err := backend.Start(ctx, spec)
	if err != nil {
		return sandboxSetupFailed(a, err)
	}
	defer sess.Close()
	if _, err := sess.Sync(ctx, snap); err != nil {
		return a.fail(fmt.Errorf("copy %s into the sandbox: %w", root, err))
	}
	fmt.Fprintln(a.stderr, "fixpoint: "+termsafe.Strip(agent.SnapshotSummary(snap))) // it names workspace files
	res, err := sess.Run(ctx, sandbox.Command{Args: argv, Stdout: onTerminal(a.stdout), Stderr: onTerminal(a.stderr)})
	if err != nil {
		if ctx.Err() != nil {
			return exitSIGINT
		}
		return a.fail(err)
	}
	if res.TimedOut {
		fmt.Fprintf(a.stderr, "fixpoint: %s timed out after %s (exit 124)\n", argv[0], spec.Limits.Timeout)
	} else if res.OOMKilled {
		fmt.Fprintf(a.stderr, "fixpoint: %s was killed for memory (exit 137)\n", argv[0])
	}
	return res.ExitCode
}

// sandboxSetupFailed prints a missing engine, bwrap or image as one line
// naming the fix, with exit code 2.
func sandboxSetupFailed(a *app, err error) int {
	if errors.Is(err, sandbox.ErrUnavailable) || errors.Is(err, sandbox.ErrImageMissing) || errors.Is(err, backends.ErrUnknownBackend) {
		msg := strings.ReplaceAll(err.Error(), "\n", " ")
		fmt.Fprintf(a.stderr, "fixpoint: %s\n", msg)
		return exitUsage
	}
	return a.fail(err)
}

// requireEngine pings the Docker engine for at most 5 seconds.
func requireEngine(ctx context.Context) error {
	cli, err := engine.NewClient()
	if err != nil {
		return errNoEngine
	}
	defer cli.Close()
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, err := cli.Ping(ctx); err != nil {
		return errNoEngine
	}
	return nil
}

// onTerminal returns w through termsafe when it is a terminal: what runs
// in the sandbox is the workspace's code, and its output must not take the
// terminal over. A pipe or a file gets the bytes as they are.
func onTerminal(w io.Writer) io.Writer {
	if isTerminal(w) {
		return termsafe.Writer{W: w}
	}
	return w
}

package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fixpoint-dev/fixpoint/config"
	"github.com/fixpoint-dev/fixpoint/sandbox/backends"
	"github.com/fixpoint-dev/fixpoint/sandbox/setup"
)

// newFlags returns a FlagSet whose help prints c's usage and example.
func newFlags(c *command, w io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("fixpoint "+c.name, flag.ContinueOnError)
	fs.SetOutput(w)
	fs.Usage = func() {
		usage, example, _ := strings.Cut(c.usage, "\nExample:")
		fmt.Fprintf(w, "%s\n", strings.TrimSpace(usage))
		var hasFlags bool
		fs.VisitAll(func(*flag.Flag) { hasFlags = true })
		if hasFlags {
			fmt.Fprintf(w, "\nFlags:\n")
			fs.PrintDefaults()
		}
		if example != "" {
			fmt.Fprintf(w, "\nExample:%s\n", strings.TrimRight(example, "\n"))
		}
	}
	return fs
}

// parseFlags parses args. done is true when the caller must return code:
// 0 after --help, 2 after a bad flag (the flag package printed why).
func parseFlags(fs *flag.FlagSet, args []string) (done bool, code int) {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return true, exitOK
	}
	if err != nil {
		return true, exitUsage
	}
	return false, exitOK
}

// sandboxFlags are --sandbox and --image, shared by test, fix and solve.
// Like every flag they override the environment and the config files.
type sandboxFlags struct {
	backend, image string
	retrySetup     bool
	timeout        time.Duration
}

func (f *sandboxFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.backend, "sandbox", "", "sandbox `backend`: "+config.BackendChoices()+" (overrides FIXPOINT_SANDBOX and [sandbox] backend)")
	fs.StringVar(&f.image, "image", "", "docker `image` for the sandbox (overrides FIXPOINT_IMAGE and [sandbox] image)")
	fs.DurationVar(&f.timeout, "timeout", 0, "wall-clock `limit` of each test command run, e.g. 10m (overrides [sandbox] timeout; default 120s)")
	fs.BoolVar(&f.retrySetup, "retry-setup", false, "run a dependency setup that failed before again, although its inputs (manifests, lockfiles, setup command, image) did not change")
}

// forgetFailedSetups honours --retry-setup: the project's remembered
// setup failures are forgotten, so the next setup runs the step again.
func (f *sandboxFlags) forgetFailedSetups(root string) error {
	if !f.retrySetup {
		return nil
	}
	return setup.ForgetFailures("", backends.ProjectLabel(root))
}

// apply writes the flags that were given into c; validation follows in
// config.Load, so a bad backend is a usage error naming the flag's value.
func (f *sandboxFlags) apply(c *config.Config) {
	if f.backend != "" {
		c.Sandbox.Backend = f.backend
	}
	if f.image != "" {
		c.Sandbox.Image = f.image
	}
	if f.timeout != 0 {
		c.Sandbox.Timeout = config.Duration(f.timeout)
	}
}

// workspaceDir resolves --dir: it must exist and be a directory.
func workspaceDir(dir string) (string, error) {
	if dir == "" {
		dir = "."
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", usagef("--dir %s: %v", dir, err)
	}
	st, err := os.Stat(abs)
	if err != nil {
		return "", usagef("--dir %s: no such directory", dir)
	}
	if !st.IsDir() {
		return "", usagef("--dir %s: not a directory", dir)
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	return abs, nil
}

// loadConfig loads the configuration for the workspace at root (may be "").
func (a *app) loadConfig(root string, flags func(*config.Config)) (*config.Config, error) {
	return config.Load(config.LoadOptions{Root: root, Getenv: a.getenv, Flags: flags})
}

func isConfigError(err error) bool { return errors.Is(err, config.ErrInvalid) }

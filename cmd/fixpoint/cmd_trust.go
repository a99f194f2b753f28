package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/fixpoint-dev/fixpoint/config"
)

func trustCommand() *command {
	c := &command{
		name:    "trust",
		summary: "trust a folder: its .fixpoint.toml's user-only keys, and the editor's sandbox preparation",
		usage: `Usage: fixpoint trust [--revoke | --list] [DIR]

Records that you trust DIR (default: the current directory), like direnv
allow. Two things follow:
  - the user-only keys of DIR/.fixpoint.toml (model endpoint and name,
    sandbox backend, image and limits, prewarm, allow_test_edits...) apply,
    as long as the file keeps the exact content it has now; any change is
    refused again until you run fixpoint trust once more;
  - the language server prepares DIR's sandbox on its own (installs its
    dependencies, runs its tests) when the folder opens.
Records are kept in ~/.config/fixpoint/trust ($XDG_CONFIG_HOME), one 0600
file per folder.
  --revoke   forget DIR
  --list     print every trusted folder
Example:
  fixpoint trust ~/src/project`,
	}
	c.run = func(ctx context.Context, a *app, args []string) int {
		fs := newFlags(c, a.stderr)
		revoke := fs.Bool("revoke", false, "forget the folder's trust record")
		list := fs.Bool("list", false, "list the trusted folders")
		if done, code := parseFlags(fs, args); done {
			return code
		}
		store := config.TrustStore{Dir: config.DefaultTrustDir(a.getenv)}
		if *list {
			if *revoke || fs.NArg() > 0 {
				return a.fail(usagef("trust --list takes no folder and no --revoke"))
			}
			return a.listTrust(store)
		}
		if fs.NArg() > 1 {
			return a.fail(usagef("trust takes one folder, got %q", fs.Args()))
		}
		dir, err := workspaceDir(fs.Arg(0))
		if err != nil {
			if *revoke { // a folder that is gone can still be forgotten
				dir, _ = filepath.Abs(fs.Arg(0))
			} else {
				return a.fail(err)
			}
		}
		if *revoke {
			ok, err := store.Revoke(dir)
			switch {
			case err != nil:
				return a.fail(fmt.Errorf("trust --revoke %s: %w", dir, err))
			case ok:
				fmt.Fprintf(a.stdout, "fixpoint: no longer trusting %s\n", quotePath(dir))
			default:
				fmt.Fprintf(a.stdout, "fixpoint: %s was not trusted\n", quotePath(dir))
			}
			return exitOK
		}
		return a.trustDir(store, dir)
	}
	return c
}

// trustDir records dir's trust and says what it covers.
func (a *app) trustDir(store config.TrustStore, dir string) int {
	file := filepath.Join(dir, config.ProjectFile)
	data, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return a.fail(fmt.Errorf("trust: read %s: %w", file, err))
	}
	rec, err := store.TrustConfig(dir)
	if err != nil {
		return a.fail(fmt.Errorf("trust %s: %w", dir, err))
	}
	fmt.Fprintf(a.stdout, "fixpoint: trusting %s: the language server may install its dependencies and run its tests when the folder opens\n", quotePath(rec.Dir))
	switch keys, _ := config.UserOnlySet(data); {
	case data == nil:
		fmt.Fprintf(a.stdout, "No %s there now: one created later that sets user-only keys is refused until you trust it.\n", config.ProjectFile)
	case len(keys) > 0:
		fmt.Fprintf(a.stdout, "%s (sha256 %s) may set: %s\nAny change to the file is refused until you run fixpoint trust again.\n",
			config.ProjectFile, rec.ConfigSHA256[:16], strings.Join(keys, ", "))
	default:
		fmt.Fprintf(a.stdout, "%s sets no user-only key; if it is changed to set one, that change needs fixpoint trust again.\n", config.ProjectFile)
	}
	return exitOK
}

func (a *app) listTrust(store config.TrustStore) int {
	recs, err := store.List()
	if err != nil {
		return a.fail(fmt.Errorf("trust --list: %w", err))
	}
	if len(recs) == 0 {
		fmt.Fprintf(a.stdout, "fixpoint: no trusted folder (records in %s)\n", store.Dir)
		return exitOK
	}
	for _, r := range recs {
		what := "folder only"
		if r.ConfigSHA256 != "" {
			what = "folder and " + config.ProjectFile + " sha256 " + r.ConfigSHA256[:16]
		}
		fmt.Fprintf(a.stdout, "%s\t%s\t%s\n", quotePath(r.Dir), r.TrustedAt.Local().Format("2006-01-02 15:04"), what)
	}
	return exitOK
}

// quotePath shows a path with no control characters in it.
func quotePath(p string) string {
	if strings.ContainsFunc(p, func(r rune) bool { return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) }) {
		return fmt.Sprintf("%q", p)
	}
	return p
}

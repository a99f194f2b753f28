package gitrepo

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func write(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// At finds a .git directory or gitdir file in dir only; Find walks up; a
// linked worktree reads its main repository's config.
func TestFindAndRemote(t *testing.T) {
	base := t.TempDir()
	repo := filepath.Join(base, "repo")
	wt := filepath.Join(base, "wt")
	write(t, filepath.Join(repo, ".git", "config"), "[core]\n\texcludesfile = /x/ignore ; comment\n[remote \"upstream\"]\n\turl = https://example.com/up.git\n[Remote\t\"origin\"]\n\turl = \"https://example.com/app.git\"\n")
	write(t, filepath.Join(repo, ".git", "worktrees", "wt", "commondir"), "../..\n")
	write(t, filepath.Join(wt, ".git"), "gitdir: "+filepath.Join(repo, ".git", "worktrees", "wt")+"\n")
	write(t, filepath.Join(repo, "sub", "a.txt"), "")

	tests := []struct {
		name, dir  string
		find       bool // Find instead of At
		ok         bool
		remote     string
		commonRoot string
	}{
		{name: "repo", dir: repo, ok: true, remote: "https://example.com/app.git", commonRoot: filepath.Join(repo, ".git")},
		{name: "linked worktree", dir: wt, ok: true, remote: "https://example.com/app.git", commonRoot: filepath.Join(repo, ".git")},
		{name: "At in a subdirectory", dir: filepath.Join(repo, "sub"), ok: false},
		{name: "Find in a subdirectory", dir: filepath.Join(repo, "sub"), find: true, ok: true, remote: "https://example.com/app.git", commonRoot: filepath.Join(repo, ".git")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			at := At
			if tt.find {
				at = Find
			}
			r, ok := at(tt.dir)
			if ok != tt.ok {
				t.Fatalf("ok = %v, want %v", ok, tt.ok)
			}
			if !ok {
				return
			}
			if got := r.RemoteURL(); got != tt.remote {
				t.Errorf("RemoteURL() = %q, want %q", got, tt.remote)
			}
			if filepath.Clean(r.Common) != tt.commonRoot {
				t.Errorf("Common = %q, want %q", r.Common, tt.commonRoot)
			}
		})
	}
	if v, ok := ConfigValue(filepath.Join(repo, ".git", "config"), "core", "ExcludesFile"); !ok || v != "/x/ignore" {
		t.Errorf("ConfigValue(core.excludesfile) = %q, %v, want /x/ignore without the comment", v, ok)
	}
}

// ReadSmall refuses what a hostile repository could plant instead of a
// file: a named pipe (would block), a symlink (would redirect), a
// directory; and it stops at the limit.
func TestReadSmallRefuses(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "secret"), "token")
	if err := os.Symlink(filepath.Join(dir, "secret"), filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"fifo", "link", "."} {
		if data, err := ReadSmall(filepath.Join(dir, name), 1<<10); err == nil {
			t.Errorf("ReadSmall(%s) = %q, nil; want an error", name, data)
		}
	}
	write(t, filepath.Join(dir, "big"), "0123456789")
	if data, err := ReadSmall(filepath.Join(dir, "big"), 4); err != nil || string(data) != "0123" {
		t.Errorf("ReadSmall(big, 4) = %q, %v; want \"0123\"", data, err)
	}
}

// TestPublicURL: a remote URL reaches a sandbox without credentials of
// any form, and host paths not at all.
func TestPublicURL(t *testing.T) {
	tests := map[string]string{
		"https://github.com/o/r.git":                      "https://github.com/o/r.git",
		"https://user:ghp_SECRET@github.com/o/r.git":      "https://github.com/o/r.git",
		"https://x-access-token:SECRET@github.com/o/r":    "https://github.com/o/r",
		"https://SECRET@gitlab.com/o/r.git":               "https://gitlab.com/o/r.git",
		"https://host/o/r.git?private_token=SECRET#frag":  "https://host/o/r.git",
		"ssh://git@github.com/o/r.git":                    "ssh://github.com/o/r.git",
		"git@github.com:o/r.git":                          "git@github.com:o/r.git",
		"user:SECRET@host:o/r.git":                        "host:o/r.git",
		"file:///home/me/r.git":                           "",
		"/home/me/r.git":                                  "",
		"../r.git":                                        "",
		"":                                                "",
		"-oProxyCommand=evil:x":                           "",
		"https://github.com/o/r.git\n[core]\nfsmonitor=x": "",
	}
	for in, want := range tests {
		if got := PublicURL(in); got != want {
			t.Errorf("PublicURL(%q) = %q, want %q", in, got, want)
		}
		if strings.Contains(PublicURL(in), "SECRET") {
			t.Errorf("PublicURL(%q) keeps the secret", in)
		}
	}
}

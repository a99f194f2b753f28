package cachedir_test

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
	"time"

	"github.com/fixpoint-dev/fixpoint/flock"
	"github.com/fixpoint-dev/fixpoint/sandbox/cachedir"
)

// makeGroup writes size bytes into each of dirs under root and dates the
// group's last use at when (through Use, then the lock file's time).
func makeGroup(t *testing.T, root, key string, when time.Time, size int, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		p := filepath.Join(root, d, "ab")
		if err := os.MkdirAll(p, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(p, "entry"), make([]byte, size), 0o644); err != nil {
			t.Fatal(err)
		}
		os.Chtimes(filepath.Join(root, d), when, when)
	}
	release, err := cachedir.Use(root, key)
	if err != nil {
		t.Fatal(err)
	}
	release()
	os.Chtimes(filepath.Join(root, ".locks", key+".lock"), when, when)
}

func exists(root, name string) bool {
	_, err := os.Stat(filepath.Join(root, name))
	return err == nil
}

func TestKey(t *testing.T) {
	tests := []struct {
		name, key string
		ok        bool
	}{
		{name: "0123abcd-user", key: "0123abcd", ok: true},
		{name: "0123abcd-model", key: "0123abcd", ok: true},
		{name: "0123abcd-std", key: "0123abcd", ok: true},
		{name: "0123abcd.ok", key: "0123abcd", ok: true},
		{name: "0123abcd", key: "0123abcd", ok: true},
		{name: ".locks", ok: false},
		{name: "-user", key: "-user", ok: true},
	}
	for _, tt := range tests {
		if key, ok := cachedir.Key(tt.name); key != tt.key || ok != tt.ok {
			t.Errorf("Key(%q) = %q, %v; want %q, %v", tt.name, key, ok, tt.key, tt.ok)
		}
	}
}

// Prune removes whole groups, least recently used first, and stops as
// soon as the roots fit the cap: the cap holds, and nothing more goes.
func TestPruneEvictsLeastRecentlyUsedFirst(t *testing.T) {
	root, deps := t.TempDir(), t.TempDir()
	now := time.Now()
	makeGroup(t, root, "aaaa", now.Add(-3*time.Hour), 1000, "aaaa-user", "aaaa-model", "aaaa-std") // oldest: 3000
	makeGroup(t, deps, "bbbb", now.Add(-2*time.Hour), 1000, "bbbb", "bbbb.ok")                     // 2000
	makeGroup(t, root, "cccc", now.Add(-1*time.Hour), 1000, "cccc-user")                           // 1000
	makeGroup(t, root, "dddd", now, 1000, "dddd-user")                                             // newest: 1000
	rep, err := cachedir.Prune([]string{root, deps, filepath.Join(root, "missing")}, 2500)
	if err != nil {
		t.Fatal(err)
	}
	var removed []string
	for _, g := range rep.Removed {
		removed = append(removed, g.Key)
	}
	if !slices.Equal(removed, []string{"aaaa", "bbbb"}) {
		t.Errorf("removed %v, want [aaaa bbbb] (the least recently used, until 2500 bytes fit)", removed)
	}
	if rep.Before != 7000 || rep.After != 2000 || rep.Freed() != 5000 {
		t.Errorf("before %d, after %d, freed %d; want 7000, 2000, 5000", rep.Before, rep.After, rep.Freed())
	}
	for _, name := range []string{"aaaa-user", "aaaa-model", "aaaa-std"} {
		if exists(root, name) {
			t.Errorf("%s survived its group's removal", name)
		}
	}
	if exists(deps, "bbbb") || exists(deps, "bbbb.ok") {
		t.Error("the dependency cache or its marker survived its group's removal")
	}
	if !exists(root, "cccc-user") || !exists(root, "dddd-user") {
		t.Error("a group was removed after the roots fit the cap")
	}
	if n, err := cachedir.Size([]string{root, deps}); err != nil || n != 2000 {
		t.Errorf("Size after = %d, %v; want 2000", n, err)
	}
	// Under the cap: nothing goes.
	rep, err = cachedir.Prune([]string{root, deps}, 2500)
	if err != nil || len(rep.Removed) != 0 {
		t.Errorf("second prune removed %v (%v), want nothing", rep.Removed, err)
	}
}

// A group a session uses survives a prune, however old and big, and the
// prune goes on to the next one; once released, it can go.
func TestPruneKeepsCachesInUse(t *testing.T) {
	root := t.TempDir()
	now := time.Now()
	makeGroup(t, root, "aaaa", now.Add(-time.Hour), 4000, "aaaa-user")
	makeGroup(t, root, "bbbb", now, 1000, "bbbb-user")
	release, err := cachedir.Use(root, "aaaa")
	if err != nil {
		t.Fatal(err)
	}
	os.Chtimes(filepath.Join(root, ".locks", "aaaa.lock"), now.Add(-time.Hour), now.Add(-time.Hour))
	rep, err := cachedir.Prune([]string{root}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if !exists(root, "aaaa-user") || len(rep.KeptInUse) != 1 || rep.KeptInUse[0].Key != "aaaa" {
		t.Errorf("the cache in use: exists %v, kept %+v; want it kept and reported", exists(root, "aaaa-user"), rep.KeptInUse)
	}
	if exists(root, "bbbb-user") {
		t.Error("the prune stopped at the cache in use instead of going on")
	}
	release()
	if rep, err := cachedir.Prune([]string{root}, 0); err != nil || len(rep.Removed) != 1 || exists(root, "aaaa-user") {
		t.Errorf("after release: removed %v, %v; want the cache gone", rep.Removed, err)
	}
}

// A session that starts while a prune removes its group waits, then holds
// the lock of the file at the path (not the removed one): a later prune
// sees it in use and leaves the directory it makes again.
func TestUseDuringPrune(t *testing.T) {
	root := t.TempDir()
	makeGroup(t, root, "aaaa", time.Now(), 10, "aaaa-user")
	lock := filepath.Join(root, ".locks", "aaaa.lock")
	f, err := os.OpenFile(lock, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	if err := flock.TryExclusive(f); err != nil { // a prune in progress
		t.Fatal(err)
	}
	got := make(chan func(), 1)
	go func() {
		release, err := cachedir.Use(root, "aaaa")
		if err != nil {
			t.Error(err)
			release = func() {}
		}
		got <- release
	}()
	os.RemoveAll(filepath.Join(root, "aaaa-user"))
	os.Remove(lock)
	f.Close() // the prune ends
	release := <-got
	defer release()
	if err := os.MkdirAll(filepath.Join(root, "aaaa-user"), 0o755); err != nil {
		t.Fatal(err)
	}
	rep, err := cachedir.Prune([]string{root}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Removed) != 0 || !exists(root, "aaaa-user") {
		t.Errorf("a prune removed %v while a session held the group", rep.Removed)
	}
}

func TestUseRejectsBadKeys(t *testing.T) {
	for _, key := range []string{"", ".locks", "a/b", "aaaa-user"} {
		if _, err := cachedir.Use(t.TempDir(), key); err == nil {
			t.Errorf("Use(%q) succeeded, want an error", key)
		}
	}
}

const pruneChildEnv = "FIXPOINT_CACHEDIR_PRUNE_CHILD"

// Go's module cache makes its directories read-only: a prune by the
// user who owns them (not root, who ignores modes) must still remove
// them, and must not follow a symbolic link out of the tree to change a
// mode there. As root the prune runs in a child process as nobody.
func TestPruneRemovesReadOnlyTrees(t *testing.T) {
	if root := os.Getenv(pruneChildEnv); root != "" {
		if _, err := cachedir.Prune([]string{root}, 0); err != nil {
			t.Fatal(err)
		}
		return
	}
	// Not t.TempDir: its parent is root's alone, and nobody must reach
	// these (and the test binary's copy) in the child.
	base, err := os.MkdirTemp("", "fixpoint-prune-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		filepath.Walk(base, func(p string, fi os.FileInfo, _ error) error {
			if fi != nil && fi.IsDir() {
				os.Chmod(p, 0o755)
			}
			return nil
		})
		os.RemoveAll(base)
	})
	os.Chmod(base, 0o755)
	root, outside := filepath.Join(base, "root"), filepath.Join(base, "outside")
	for _, d := range []string{root, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	makeGroup(t, root, "aaaa", time.Now().Add(-time.Hour), 10, "aaaa-user")
	mod := filepath.Join(root, "aaaa-user", "gomod", "example.com", "m@v1.0.0")
	if err := os.MkdirAll(mod, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module example.com/m\n"), 0o444); err != nil {
		t.Fatal(err)
	}
	locked := filepath.Join(outside, "locked")
	if err := os.Mkdir(locked, 0o500); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(locked, filepath.Join(mod, "link")); err != nil {
		t.Fatal(err)
	}
	for _, d := range []string{mod, filepath.Dir(mod), filepath.Dir(filepath.Dir(mod))} {
		if err := os.Chmod(d, 0o555); err != nil {
			t.Fatal(err)
		}
	}
	if os.Geteuid() == 0 {
		const nobody = 65534
		for _, d := range []string{root, outside} {
			filepath.Walk(d, func(p string, _ os.FileInfo, _ error) error { return os.Lchown(p, nobody, nobody) })
		}
		bin := filepath.Join(base, "cachedir.test")
		b, err := os.ReadFile(os.Args[0])
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(bin, b, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, "-test.run=^TestPruneRemovesReadOnlyTrees$")
		cmd.Env = append(os.Environ(), pruneChildEnv+"="+root)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("prune as nobody: %v\n%s", err, out)
		}
	} else if _, err := cachedir.Prune([]string{root}, 0); err != nil {
		t.Fatal(err)
	}
	if exists(root, "aaaa-user") {
		t.Error("the read-only module cache survived its group's removal")
	}
	st, err := os.Stat(locked)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o500 {
		t.Errorf("a directory outside the cache, linked from it, changed mode to %v", st.Mode().Perm())
	}
}

package edit

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// hostRoot is an open workspace directory on the host. Every path under it
// is reached with openat one component at a time, with O_NOFOLLOW, so a
// symlink anywhere in a path (even one that points back inside the
// workspace) stops the walk instead of being followed: what is checked is
// what is written. os.Root is not enough here: it follows symlinks that
// stay inside the root, such as "gitlink -> .git".
type hostRoot struct {
	fd   int
	path string
}

func openRoot(root string) (*hostRoot, error) {
	fd, err := unix.Open(root, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", root, err)
	}
	return &hostRoot{fd: fd, path: root}, nil
}

func (h *hostRoot) close() { unix.Close(h.fd) }

// parent opens the directory that holds rel and returns its descriptor
// (the caller closes it) and rel's last component. A missing directory is
// created when create is set, else parent returns fd -1 and no error.
// Every directory on the way, the root included, must not look like a git
// directory.
func (h *hostRoot) parent(rel string, create bool) (int, string, error) {
	parts := strings.Split(rel, "/")
	fd, err := unix.Dup(h.fd)
	if err != nil {
		return -1, "", err
	}
	for i, name := range parts[:len(parts)-1] {
		if gitDirAt(fd) {
			unix.Close(fd)
			return -1, "", refuse(ErrGitDir, "%s is inside a git directory (%s)", rel, dirName(parts[:i]))
		}
		next, err := openDirAt(fd, name)
		if errors.Is(err, unix.ENOENT) && create {
			if err := unix.Mkdirat(fd, name, 0o755); err != nil && !errors.Is(err, unix.EEXIST) {
				unix.Close(fd)
				return -1, "", fmt.Errorf("create directory %s: %w", strings.Join(parts[:i+1], "/"), err)
			}
			next, err = openDirAt(fd, name)
		}
		if err != nil {
			defer unix.Close(fd)
			sub := strings.Join(parts[:i+1], "/")
			switch {
			case errors.Is(err, unix.ENOENT):
				return -1, "", nil
			case isSymlinkAt(fd, name):
				return -1, "", refuse(ErrSymlink, "%s goes through %s, which is a symlink", rel, sub)
			case errors.Is(err, unix.ENOTDIR):
				return -1, "", refuse(ErrNotRegular, "%s cannot be written: %s is not a directory", rel, sub)
			}
			return -1, "", fmt.Errorf("open %s: %w", sub, err)
		}
		unix.Close(fd)
		fd = next
	}
	if gitDirAt(fd) {
		unix.Close(fd)
		return -1, "", refuse(ErrGitDir, "%s is inside a git directory (%s)", rel, dirName(parts[:len(parts)-1]))
	}
	return fd, parts[len(parts)-1], nil
}

func dirName(parts []string) string {
	if len(parts) == 0 || len(parts) == 1 && parts[0] == "." {
		return "the workspace root"
	}
	return strings.Join(parts, "/")
}

func openDirAt(fd int, name string) (int, error) {
	for {
		n, err := unix.Openat(fd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return n, err
	}
}

func isSymlinkAt(fd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == unix.S_IFLNK
}

func existsAt(fd int, name string) bool {
	var st unix.Stat_t
	return unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil
}

// gitDirAt applies looksLikeGitDir to an open directory.
func gitDirAt(fd int) bool {
	return looksLikeGitDir(".", func(name string) bool { return existsAt(fd, name) })
}

// statFile looks at name in dir without following it: it reports whether
// it exists, and refuses anything but a regular file with one link (a
// hard link shares its content with a file elsewhere, maybe in .git).
func statFile(dir int, name, rel string) (bool, *unix.Stat_t, error) {
	var st unix.Stat_t
	err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW)
	switch {
	case errors.Is(err, unix.ENOENT):
		return false, nil, nil
	case err != nil:
		return false, nil, fmt.Errorf("stat %s: %w", rel, err)
	}
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
		if st.Nlink > 1 {
			return true, nil, refuse(ErrNotRegular, "%s is a hard link (%d names share its content)", rel, st.Nlink)
		}
		return true, &st, nil
	case unix.S_IFLNK:
		return true, nil, refuse(ErrSymlink, "%s is a symlink", rel)
	case unix.S_IFDIR:
		return true, nil, refuse(ErrNotRegular, "%s is a directory", rel)
	}
	return true, nil, refuse(ErrNotRegular, "%s is a special file", rel)
}

// inspect walks to rel and refuses the path as parent and statFile do.
// A path that does not exist yet is not an error.
func (h *hostRoot) inspect(rel string) error {
	fd, base, err := h.parent(rel, false)
	if err != nil || fd < 0 {
		return err
	}
	defer unix.Close(fd)
	_, _, err = statFile(fd, base, rel)
	return err
}

// exists is inspect without the verdict: for the git-directory test on
// paths that are not themselves written.
func (h *hostRoot) exists(rel string) bool {
	fd, base, err := h.parent(rel, false)
	if err != nil || fd < 0 {
		return false
	}
	defer unix.Close(fd)
	return existsAt(fd, base)
}

// read returns rel's content, or exists false. It does not follow links.
func (h *hostRoot) read(rel string) (data []byte, exists bool, err error) {
	fd, base, err := h.parent(rel, false)
	if err != nil || fd < 0 {
		return nil, false, err
	}
	defer unix.Close(fd)
	ok, _, err := statFile(fd, base, rel)
	if err != nil || !ok {
		return nil, ok, err
	}
	ffd, err := unix.Openat(fd, base, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, true, fmt.Errorf("open %s: %w", rel, err)
	}
	f := os.NewFile(uintptr(ffd), rel)
	defer f.Close()
	data, err = io.ReadAll(f)
	if err != nil {
		return nil, true, fmt.Errorf("read %s: %w", rel, err)
	}
	return data, true, nil
}

// write replaces rel atomically: a new file in the same directory, renamed
// over it. Neither step follows a symlink, and the rename replaces the
// directory entry, never the content of another name for the same file.
func (h *hostRoot) write(rel string, data []byte) error {
	fd, base, err := h.parent(rel, true)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ok, st, err := statFile(fd, base, rel)
	if err != nil {
		return err
	}
	mode := uint32(0o644)
	if ok {
		mode = uint32(st.Mode) & 0o777
	}
	var rnd [6]byte
	rand.Read(rnd[:])
	tmp := ".fixpoint-" + hex.EncodeToString(rnd[:])
	tfd, err := unix.Openat(fd, tmp, unix.O_WRONLY|unix.O_CREAT|unix.O_EXCL|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0o600)
	if err != nil {
		return fmt.Errorf("create a temporary file next to %s: %w", rel, err)
	}
	f := os.NewFile(uintptr(tfd), tmp)
	_, werr := f.Write(data)
	err = errors.Join(werr, unix.Fchmod(tfd, mode), f.Sync(), f.Close())
	if err == nil {
		err = unix.Renameat(fd, tmp, fd, base)
	}
	if err != nil {
		unix.Unlinkat(fd, tmp, 0)
		return fmt.Errorf("write %s: %w", rel, err)
	}
	return nil
}

// remove deletes rel; unlink never follows a symlink.
func (h *hostRoot) remove(rel string) error {
	fd, base, err := h.parent(rel, false)
	if err != nil {
		return err
	}
	if fd < 0 {
		return nil
	}
	defer unix.Close(fd)
	if _, _, err := statFile(fd, base, rel); err != nil {
		return err
	}
	if err := unix.Unlinkat(fd, base, 0); err != nil && !errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("remove %s: %w", rel, err)
	}
	return nil
}

// Change is one verified file change to write into the workspace.
type Change struct {
	Path    string // workspace-relative, slash-separated
	Before  []byte // the content the run started from (ignored when Created)
	After   []byte
	Created bool // the file did not exist when the run started
	Deleted bool
}

// ErrChangedOnDisk means a file changed on disk after the run's snapshot.
var ErrChangedOnDisk = errors.New("changed on disk since the run started")

// WriteFiles writes changes into the workspace at root, only when every
// file is still as the run saw it, and only through paths that pass
// CheckPaths: no symlink anywhere on a path (they are not followed, ever),
// nothing inside a git directory, no hard links; nor may the written files
// make a directory look like a git directory. It checks every path first,
// then writes each file atomically. The policy on names (protected and
// secret files) is Apply's.
func WriteFiles(root string, changes []Change) error {
	h, err := openRoot(root)
	if err != nil {
		return err
	}
	defer h.close()
	for _, c := range changes {
		if err := checkWritePath(c.Path); err != nil {
			return err
		}
		cur, exists, err := h.read(c.Path)
		switch {
		case err != nil:
			return err
		case c.Created && exists:
			return fmt.Errorf("%s: %w (it now exists)", c.Path, ErrChangedOnDisk)
		case c.Created:
		case !exists:
			return fmt.Errorf("%s: %w (it was deleted)", c.Path, ErrChangedOnDisk)
		case !bytes.Equal(cur, c.Before):
			return fmt.Errorf("%s: %w", c.Path, ErrChangedOnDisk)
		}
	}
	if err := resultGitDirs(h, changes); err != nil {
		return err
	}
	for _, c := range changes {
		if c.Deleted {
			err = h.remove(c.Path)
		} else {
			err = h.write(c.Path, c.After)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// CheckPaths checks the paths a result writes, at the moment it is about
// to be written (by fixpoint or by an editor): each must be clean and
// relative, with no git name, and resolve under root one component at a
// time without following links: no symlink on the way, no directory that
// looks like a git directory (the root included), and nothing there but a
// regular file with one link, or nothing yet.
func CheckPaths(root string, paths []string) error {
	h, err := openRoot(root)
	if err != nil {
		return err
	}
	defer h.close()
	for _, p := range paths {
		if err := checkWritePath(p); err != nil {
			return err
		}
		if err := h.inspect(p); err != nil {
			return err
		}
	}
	return nil
}

func checkWritePath(p string) error {
	if c, err := sandbox.CleanRel(p); err != nil || c != p {
		return refuse(ErrOutside, "%q is not a clean workspace-relative path", p)
	}
	if hasGitName(p) {
		return refuse(ErrGitDir, "%s is inside .git", p)
	}
	return nil
}

// resultGitDirs refuses changes after which a directory holding a written
// file looks like a git directory, counting the host's files and the new
// ones.
func resultGitDirs(h *hostRoot, changes []Change) error {
	written := map[string]bool{}
	dirs := map[string]bool{}
	for _, c := range changes {
		if c.Deleted {
			continue
		}
		written[c.Path] = true
		for d := path.Dir(c.Path); d != "."; d = path.Dir(d) {
			dirs[d] = true
		}
	}
	has := func(rel string) bool { return written[rel] || dirs[rel] || h.exists(rel) }
	for _, c := range changes {
		if c.Deleted {
			continue
		}
		for d := path.Dir(c.Path); ; d = path.Dir(d) {
			if looksLikeGitDir(d, has) {
				return refuse(ErrGitDir, "writing %s would make %s look like a git directory", c.Path, dirName(strings.Split(d, "/")))
			}
			if d == "." {
				break
			}
		}
	}
	return nil
}

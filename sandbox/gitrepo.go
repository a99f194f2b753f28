package sandbox

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"syscall"
)

// This file reads what git itself would consult to decide what belongs to
// a project — the index (tracked files), .git/info/exclude and
// core.excludesFile — without running git. Running the workspace's git
// would run whatever the workspace's .git/config asks for (core.fsmonitor,
// hooks, includes of other config files): a hostile repository must not
// get code execution out of `fixpoint test`. Reading the files directly is
// also faster than a subprocess, and works where git is not installed.

// maxGitFile bounds what is read from any one git metadata file.
const maxGitFile = 256 << 20

// gitRepo is what was found about the repository holding a workspace.
type gitRepo struct {
	workTree string // absolute path of the repository's work tree
	gitDir   string // the repository's git directory (per worktree)
	common   string // the common git directory (info/exclude, config)
}

// findGitRepo looks for the repository that holds dir: a .git directory or
// a .git file ("gitdir: …") in dir or one of its parents. ok is false
// outside git.
func findGitRepo(dir string) (gitRepo, bool) {
	for d := dir; ; {
		dotgit := filepath.Join(d, ".git")
		if st, err := os.Lstat(dotgit); err == nil {
			if r, ok := openGitDir(d, dotgit, st.IsDir()); ok {
				return r, true
			}
		}
		parent := filepath.Dir(d)
		if parent == d {
			return gitRepo{}, false
		}
		d = parent
	}
}

func openGitDir(workTree, dotgit string, isDir bool) (gitRepo, bool) {
	gitDir := dotgit
	if !isDir {
		data, err := readSmall(dotgit, 4096)
		if err != nil {
			return gitRepo{}, false
		}
		line, _, _ := strings.Cut(string(data), "\n")
		target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
		if !ok {
			return gitRepo{}, false
		}
		target = strings.TrimSpace(target)
		if !filepath.IsAbs(target) {
			target = filepath.Join(workTree, target)
		}
		gitDir = target
	}
	r := gitRepo{workTree: workTree, gitDir: gitDir, common: gitDir}
	if data, err := readSmall(filepath.Join(gitDir, "commondir"), 4096); err == nil {
		c := strings.TrimSpace(string(data))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		r.common = c
	}
	return r, true
}

// readSmall reads at most limit bytes of a regular file. A symlink is not
// followed (git does not follow a symlinked .gitignore either), and a named
// pipe planted where a config file is expected cannot block: the open is
// non-blocking and anything but a regular file is refused.
func readSmall(p string, limit int64) ([]byte, error) {
	f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file", p)
	}
	return io.ReadAll(io.LimitReader(f, limit))
}

// excludesFile returns the core.excludesFile git would use: the
// repository's config, then the user's (~/.gitconfig, then
// $XDG_CONFIG_HOME/git/config), then the default $XDG_CONFIG_HOME/git/ignore.
// Only the [core] excludesfile key is read; includes are not followed.
func (r gitRepo) excludesFile() string {
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	var configs []string
	configs = append(configs, filepath.Join(r.common, "config"))
	if home != "" {
		configs = append(configs, filepath.Join(home, ".gitconfig"))
	}
	if xdg != "" {
		configs = append(configs, filepath.Join(xdg, "git", "config"))
	}
	for _, c := range configs {
		if v, ok := configValue(c, "core", "excludesfile"); ok {
			if rest, ok := strings.CutPrefix(v, "~/"); ok && home != "" {
				v = filepath.Join(home, rest)
			}
			return v
		}
	}
	if xdg != "" {
		return filepath.Join(xdg, "git", "ignore")
	}
	return ""
}

// configValue finds section.key in a git config file (a minimal reader:
// case-insensitive section and key names, quoted values, # and ; comments).
func configValue(file, section, key string) (string, bool) {
	data, err := readSmall(file, 1<<20)
	if err != nil {
		return "", false
	}
	cur := ""
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' || line[0] == ';' {
			continue
		}
		if line[0] == '[' {
			end := strings.IndexByte(line, ']')
			if end < 0 {
				continue
			}
			cur = strings.ToLower(strings.TrimSpace(strings.Fields(line[1:end] + " ")[0]))
			line = strings.TrimSpace(line[end+1:])
			if line == "" {
				continue
			}
		}
		if cur != section {
			continue
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(k), key) {
			continue
		}
		v = strings.TrimSpace(v)
		if i := strings.IndexAny(v, "#;"); i >= 0 && !strings.HasPrefix(v, `"`) {
			v = strings.TrimSpace(v[:i])
		}
		return strings.Trim(v, `"`), true
	}
	return "", false
}

// errIndexFormat is returned for an index this reader does not understand.
var errIndexFormat = errors.New("unsupported git index")

// trackedFiles reads the paths of the git index (format versions 2, 3 and
// 4; SHA-1 and SHA-256 repositories), relative to the work tree. A missing
// index (a fresh repository) is an empty set.
func (r gitRepo) trackedFiles() (map[string]bool, error) {
	data, err := readSmall(filepath.Join(r.gitDir, "index"), maxGitFile)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, err
	}
	hashLen := 20
	if v, ok := configValue(filepath.Join(r.common, "config"), "extensions", "objectformat"); ok && strings.EqualFold(v, "sha256") {
		hashLen = 32
	}
	return parseIndex(data, hashLen)
}

// parseIndex decodes the entries of a git index file (gitformat-index(5)).
func parseIndex(data []byte, hashLen int) (map[string]bool, error) {
	if len(data) < 12 || string(data[:4]) != "DIRC" {
		return nil, fmt.Errorf("%w: no DIRC signature", errIndexFormat)
	}
	version := binary.BigEndian.Uint32(data[4:8])
	if version < 2 || version > 4 {
		return nil, fmt.Errorf("%w: version %d", errIndexFormat, version)
	}
	n := binary.BigEndian.Uint32(data[8:12])
	out := make(map[string]bool, min(int(n), 1<<20))
	off := 12
	prev := ""
	fixed := 40 + hashLen + 2 // stat fields, object name, flags
	for i := uint32(0); i < n; i++ {
		start := off
		if off+fixed > len(data) {
			return nil, fmt.Errorf("%w: entry %d truncated", errIndexFormat, i)
		}
		mode := binary.BigEndian.Uint32(data[off+24 : off+28])
		flags := binary.BigEndian.Uint16(data[off+40+hashLen : off+fixed])
		off += fixed
		if version >= 3 && flags&0x4000 != 0 {
			off += 2
		}
		var name string
		if version == 4 {
			strip, w := indexVarint(data[min(off, len(data)):])
			if w == 0 || strip > len(prev) {
				return nil, fmt.Errorf("%w: entry %d: bad name prefix", errIndexFormat, i)
			}
			off += w
			end := bytes.IndexByte(data[min(off, len(data)):], 0)
			if end < 0 {
				return nil, fmt.Errorf("%w: entry %d truncated", errIndexFormat, i)
			}
			name = prev[:len(prev)-strip] + string(data[off:off+end])
			off += end + 1
		} else {
			end := bytes.IndexByte(data[min(off, len(data)):], 0)
			if end < 0 {
				return nil, fmt.Errorf("%w: entry %d truncated", errIndexFormat, i)
			}
			name = string(data[off : off+end])
			off += end + 1
			// entries are padded with NULs to a multiple of 8 bytes
			for (off-start)%8 != 0 {
				off++
			}
		}
		prev = name
		if mode&0o170000 == 0o040000 { // a sparse-index directory entry
			continue
		}
		if name != "" {
			out[name] = true
		}
	}
	return out, nil
}

// indexVarint decodes git's offset varint (used by index v4).
func indexVarint(b []byte) (int, int) {
	if len(b) == 0 {
		return 0, 0
	}
	c := b[0]
	val := int(c & 0x7f)
	i := 1
	for c&0x80 != 0 {
		if i >= len(b) || val > 1<<40 {
			return 0, 0
		}
		c = b[i]
		i++
		val = ((val + 1) << 7) | int(c&0x7f)
	}
	return val, i
}

// relTo returns p relative to base in slash form, or "", false when p is
// not inside base.
func relTo(base, p string) (string, bool) {
	rel, err := filepath.Rel(base, p)
	if err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	rel = filepath.ToSlash(rel)
	if rel == "." {
		rel = ""
	}
	return path.Clean("/" + rel)[1:], true
}

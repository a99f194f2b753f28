// Package gitrepo reads git's metadata files without running git: where a
// repository is (Find, At), its tracked files, its excludes file and its
// remotes. It is the one reader of .git for the whole module (the
// snapshot's ignore rules in sandbox, the project id in memory).
//
// Every file is opened by ReadSmall: no-follow, non-blocking and bounded,
// so a symlink, a named pipe or a huge file planted in a hostile
// repository's .git cannot redirect, block or exhaust the reader.
//
// The package is a leaf: it imports only the standard library.
package gitrepo

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
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

// Repo is what was found about a repository.
type Repo struct {
	WorkTree string // path of the repository's work tree
	GitDir   string // the repository's git directory (per worktree)
	Common   string // the common git directory (info/exclude, config)
}

// Find looks for the repository that holds dir: a .git directory or a .git
// file ("gitdir: …") in dir or one of its parents. ok is false outside git.
func Find(dir string) (Repo, bool) {
	for d := dir; ; {
		if r, ok := At(d); ok {
			return r, true
		}
		parent := filepath.Dir(d)
		if parent == d {
			return Repo{}, false
		}
		d = parent
	}
}

// At is the repository whose work tree is exactly dir (dir/.git is a
// directory, or a "gitdir:" file as in linked worktrees and submodules);
// ok is false otherwise. A symlinked .git is not followed.
func At(dir string) (Repo, bool) {
	dotgit := filepath.Join(dir, ".git")
	st, err := os.Lstat(dotgit)
	if err != nil {
		return Repo{}, false
	}
	return openGitDir(dir, dotgit, st.IsDir())
}

func openGitDir(workTree, dotgit string, isDir bool) (Repo, bool) {
	gitDir := dotgit
	if !isDir {
		data, err := ReadSmall(dotgit, 4096)
		if err != nil {
			return Repo{}, false
		}
		line, _, _ := strings.Cut(string(data), "\n")
		target, ok := strings.CutPrefix(strings.TrimSpace(line), "gitdir:")
		if !ok {
			return Repo{}, false
		}
		target = strings.TrimSpace(target)
		if !filepath.IsAbs(target) {
			target = filepath.Join(workTree, target)
		}
		gitDir = target
	}
	r := Repo{WorkTree: workTree, GitDir: gitDir, Common: gitDir}
	if data, err := ReadSmall(filepath.Join(gitDir, "commondir"), 4096); err == nil {
		c := strings.TrimSpace(string(data))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitDir, c)
		}
		r.Common = c
	}
	return r, true
}

// ReadSmall reads at most limit bytes of a regular file. A symlink is not
// followed (git does not follow a symlinked .gitignore either), and a named
// pipe planted where a config file is expected cannot block: the open is
// non-blocking and anything but a regular file is refused.
func ReadSmall(p string, limit int64) ([]byte, error) {
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

// ExcludesFile returns the core.excludesFile git would use: the
// repository's config, then the user's (~/.gitconfig, then
// $XDG_CONFIG_HOME/git/config), then the default $XDG_CONFIG_HOME/git/ignore.
// Only the [core] excludesfile key is read; includes are not followed.
func (r Repo) ExcludesFile() string {
	home, _ := os.UserHomeDir()
	xdg := os.Getenv("XDG_CONFIG_HOME")
	if xdg == "" && home != "" {
		xdg = filepath.Join(home, ".config")
	}
	var configs []string
	configs = append(configs, r.Config())
	if home != "" {
		configs = append(configs, filepath.Join(home, ".gitconfig"))
	}
	if xdg != "" {
		configs = append(configs, filepath.Join(xdg, "git", "config"))
	}
	for _, c := range configs {
		if v, ok := ConfigValue(c, "core", "excludesfile"); ok {
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

// Config is the path of the repository's config file (in the common dir,
// so a linked worktree reads its main repository's).
func (r Repo) Config() string { return filepath.Join(r.Common, "config") }

// ConfigValue finds section.key in a git config file: the first value of
// key in any [section] or [section "subsection"].
func ConfigValue(file, section, key string) (string, bool) {
	var val string
	found := false
	scanConfig(file, func(sec, _, k, v string) bool {
		if sec == section && strings.EqualFold(k, key) {
			val, found = v, true
			return false
		}
		return true
	})
	return val, found
}

// RemoteURL is the URL of remote "origin" in the repository's config, else
// of the first remote listed; "" when there is none. Credentials in the
// URL are returned as written: the caller strips them.
func (r Repo) RemoteURL() string {
	var first, origin string
	scanConfig(r.Config(), func(sec, sub, k, v string) bool {
		if sec != "remote" || !strings.EqualFold(k, "url") {
			return true
		}
		if first == "" {
			first = v
		}
		if sub == "origin" && origin == "" {
			origin = v
		}
		return true
	})
	if origin != "" {
		return origin
	}
	return first
}

// scanConfig calls fn for each key = value of a git config file until fn
// returns false (a minimal reader: case-insensitive section and key
// names, quoted subsections and values, # and ; comments; includes are
// not followed). A file that cannot be read has no entries.
func scanConfig(file string, fn func(section, subsection, key, value string) bool) {
	data, err := ReadSmall(file, 1<<20)
	if err != nil {
		return
	}
	sec, sub := "", ""
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
			head := strings.TrimSpace(line[1:end])
			name, rest := head, ""
			if i := strings.IndexAny(head, " \t"); i >= 0 {
				name, rest = head[:i], head[i:]
			}
			sec = strings.ToLower(strings.TrimSpace(name))
			sub = strings.Trim(strings.TrimSpace(rest), `"`)
			line = strings.TrimSpace(line[end+1:])
			if line == "" {
				continue
			}
		}
		k, v, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		v = strings.TrimSpace(v)
		if i := strings.IndexAny(v, "#;"); i >= 0 && !strings.HasPrefix(v, `"`) {
			v = strings.TrimSpace(v[:i])
		}
		if !fn(sec, sub, strings.TrimSpace(k), strings.Trim(v, `"`)) {
			return
		}
	}
}

// errIndexFormat is returned for an index this reader does not understand.
var errIndexFormat = errors.New("unsupported git index")

// TrackedFiles reads the paths of the git index (format versions 2, 3 and
// 4; SHA-1 and SHA-256 repositories), relative to the work tree. A missing
// index (a fresh repository) is an empty set.
func (r Repo) TrackedFiles() (map[string]bool, error) {
	data, err := ReadSmall(filepath.Join(r.GitDir, "index"), maxGitFile)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]bool{}, nil
	}
	if err != nil {
		return nil, err
	}
	hashLen := 20
	if v, ok := ConfigValue(r.Config(), "extensions", "objectformat"); ok && strings.EqualFold(v, "sha256") {
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

// PublicURL is a remote URL as a sandbox may see it: without user name,
// password or token (https://user:TOKEN@host/x becomes https://host/x),
// query or fragment; an scp-like "git@host:path" keeps its user only when
// it has no password. Anything else (a local path, a file:// URL, an URL
// that does not parse) is "": it names the host's file system.
func PublicURL(raw string) string {
	raw = strings.TrimSpace(raw)
	if raw == "" || strings.ContainsAny(raw, " \t\n\r\x00") {
		return ""
	}
	if i := strings.Index(raw, "://"); i > 0 {
		u, err := url.Parse(raw)
		if err != nil || u.Host == "" || u.Scheme == "file" {
			return ""
		}
		u.User, u.RawQuery, u.ForceQuery, u.Fragment, u.RawFragment = nil, "", false, "", ""
		return u.String()
	}
	// scp-like: [user@]host:path, with no slash before the colon.
	user, rest := "", raw
	if at := strings.IndexByte(raw, '@'); at >= 0 && !strings.ContainsRune(raw[:at], '/') {
		user, rest = raw[:at], raw[at+1:]
	}
	colon := strings.IndexByte(rest, ':')
	if colon <= 0 || strings.ContainsRune(rest[:colon], '/') || strings.HasPrefix(rest, "-") || strings.HasPrefix(user, "-") {
		return ""
	}
	if user == "" || strings.ContainsRune(user, ':') {
		return rest // no user, or one with a password: drop it
	}
	return user + "@" + rest
}

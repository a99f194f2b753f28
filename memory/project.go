package memory

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
)

// ProjectID returns the id of the project rooted at root: the first 16 hex
// digits of sha256(canonical root + "\n" + git remote URL).
//
// The canonical root is the absolute path with symlinks resolved. The
// remote is the URL of remote "origin" in the repository's git config (or
// of the first remote listed when there is no origin), with any user
// credentials removed; it is "" when root is not a git checkout or has no
// remote. The git config is read directly (root/.git/config, following a
// "gitdir:" file for worktrees and submodules); git is not executed.
//
// So the same checkout always maps to the same memory; two clones at
// different paths, or one directory whose remote changes, get separate
// memories.
func ProjectID(root string) string {
	canon := canonicalRoot(root)
	sum := sha256.Sum256([]byte(canon + "\n" + GitRemote(canon)))
	return hex.EncodeToString(sum[:8])
}

func canonicalRoot(root string) string {
	abs, err := filepath.Abs(root)
	if err != nil {
		abs = root
	}
	if r, err := filepath.EvalSymlinks(abs); err == nil {
		abs = r
	}
	return filepath.Clean(abs)
}

// GitRemote returns the remote URL used in the project id of root ("" when
// there is none), with credentials stripped.
func GitRemote(root string) string {
	cfg := gitConfigPath(root)
	if cfg == "" {
		return ""
	}
	f, err := os.Open(cfg)
	if err != nil {
		return ""
	}
	defer f.Close()
	var (
		section string
		first   string
		origin  string
	)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			section = strings.ToLower(strings.Join(strings.Fields(strings.Trim(line, "[]")), " "))
			continue
		}
		key, val, ok := strings.Cut(line, "=")
		if !ok || !strings.EqualFold(strings.TrimSpace(key), "url") || !strings.HasPrefix(section, "remote ") {
			continue
		}
		url := stripCredentials(strings.Trim(strings.TrimSpace(val), `"`))
		if first == "" {
			first = url
		}
		if section == `remote "origin"` && origin == "" {
			origin = url
		}
	}
	if origin != "" {
		return origin
	}
	return first
}

func gitConfigPath(root string) string {
	dotgit := filepath.Join(root, ".git")
	st, err := os.Stat(dotgit)
	if err != nil {
		return ""
	}
	if st.IsDir() {
		return filepath.Join(dotgit, "config")
	}
	b, err := os.ReadFile(dotgit)
	if err != nil {
		return ""
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir:")
	if !ok {
		return ""
	}
	gitdir = strings.TrimSpace(gitdir)
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(root, gitdir)
	}
	// A linked worktree keeps its config in the common dir.
	if common, err := os.ReadFile(filepath.Join(gitdir, "commondir")); err == nil {
		c := strings.TrimSpace(string(common))
		if !filepath.IsAbs(c) {
			c = filepath.Join(gitdir, c)
		}
		return filepath.Join(c, "config")
	}
	return filepath.Join(gitdir, "config")
}

// stripCredentials turns https://user:token@host/x into https://host/x.
func stripCredentials(url string) string {
	scheme, rest, ok := strings.Cut(url, "://")
	if !ok {
		return url
	}
	host, path, _ := strings.Cut(rest, "/")
	if at := strings.LastIndex(host, "@"); at >= 0 {
		host = host[at+1:]
	}
	if path == "" && !strings.HasSuffix(rest, "/") {
		return scheme + "://" + host
	}
	return scheme + "://" + host + "/" + path
}

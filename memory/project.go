package memory

import (
	"crypto/sha256"
	"encoding/hex"
	"path/filepath"
	"strings"

	"github.com/fixpoint-dev/fixpoint/gitrepo"
)

// ProjectID returns the id of the project rooted at root: the first 16 hex
// digits of sha256(canonical root + "\n" + git remote URL).
//
// The canonical root is the absolute path with symlinks resolved. The
// remote is the URL of remote "origin" in the repository's git config (or
// of the first remote listed when there is no origin), with any user
// credentials removed; it is "" when root is not a git checkout or has no
// remote. The git config is read directly by gitrepo (root/.git/config,
// following a "gitdir:" file for worktrees and submodules, never a
// symlink or a named pipe); git is not executed.
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
// there is none), with credentials stripped. The config is read by
// gitrepo (no-follow, non-blocking, bounded), so a named pipe or a symlink
// planted at .git/config cannot block or redirect it.
func GitRemote(root string) string {
	r, ok := gitrepo.At(root)
	if !ok {
		return ""
	}
	return stripCredentials(r.RemoteURL())
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

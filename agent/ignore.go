package agent

import (
	"path"
	"strings"

	"github.com/fixpoint-dev/fixpoint/agent/redact"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// ignoreRule is one line of a .gitignore file.
type ignoreRule struct {
	dir     string // directory of the .gitignore, "" for the root
	pattern string
	negate  bool
	dirOnly bool
	rooted  bool // contains a slash: matched against the path from dir
}

// ignorer is a simple .gitignore matcher: globs with *, ?, [..] and **,
// negation, directory-only and rooted patterns, nested .gitignore files.
type ignorer struct{ rules []ignoreRule }

func newIgnorer(snap *sandbox.Snapshot) *ignorer {
	ig := &ignorer{}
	for _, p := range snap.Paths() {
		if path.Base(p) != ".gitignore" {
			continue
		}
		dir := path.Dir(p)
		if dir == "." {
			dir = ""
		}
		for _, line := range strings.Split(string(snap.Files[p].Data), "\n") {
			line = strings.TrimRight(line, " \r")
			if line == "" || strings.HasPrefix(line, "#") {
				continue
			}
			r := ignoreRule{dir: dir}
			if strings.HasPrefix(line, "!") {
				r.negate, line = true, line[1:]
			}
			if strings.HasSuffix(line, "/") {
				r.dirOnly, line = true, strings.TrimSuffix(line, "/")
			}
			if strings.Contains(line, "/") {
				r.rooted, line = true, strings.TrimPrefix(line, "/")
			}
			r.pattern = line
			ig.rules = append(ig.rules, r)
		}
	}
	return ig
}

// Ignored reports whether a file path (or any of its parent directories)
// is ignored.
func (ig *ignorer) Ignored(p string) bool {
	if ig == nil || len(ig.rules) == 0 {
		return false
	}
	parts := strings.Split(p, "/")
	for i := 1; i <= len(parts); i++ {
		if ig.match(strings.Join(parts[:i], "/"), i < len(parts)) {
			return true
		}
	}
	return false
}

func (ig *ignorer) match(p string, isDir bool) bool {
	ignored := false
	for _, r := range ig.rules {
		rel := p
		if r.dir != "" {
			if !strings.HasPrefix(p, r.dir+"/") {
				continue
			}
			rel = strings.TrimPrefix(p, r.dir+"/")
		}
		if r.dirOnly && !isDir {
			continue
		}
		var ok bool
		if r.rooted {
			ok = globMatch(r.pattern, rel)
		} else {
			ok = globMatch(r.pattern, path.Base(rel))
		}
		if ok {
			ignored = !r.negate
		}
	}
	return ignored
}

// globMatch matches a gitignore glob where ** spans directories.
func globMatch(pattern, name string) bool {
	if !strings.Contains(pattern, "**") {
		ok, _ := path.Match(pattern, name)
		return ok
	}
	pre, post, _ := strings.Cut(pattern, "**")
	pre = strings.TrimSuffix(pre, "/")
	post = strings.TrimPrefix(post, "/")
	segs := strings.Split(name, "/")
	for i := 0; i <= len(segs); i++ {
		head, tail := strings.Join(segs[:i], "/"), strings.Join(segs[i:], "/")
		if pre != "" {
			if ok, _ := path.Match(pre, head); !ok {
				continue
			}
		}
		if post == "" {
			return true
		}
		for j := 0; j <= len(segs[i:]); j++ {
			if globMatch(post, strings.Join(segs[len(segs)-j:], "/")) && (pre == "" || j <= len(segs)-i) {
				return true
			}
		}
		_ = tail
	}
	return false
}

// isSecretPath reports files never shown to the model (agent/redact).
func isSecretPath(p string) bool { return redact.IsSecretPath(p) }

// redactText masks keys and tokens in prompt and log text (agent/redact).
func redactText(s string) string { return redact.String(s) }

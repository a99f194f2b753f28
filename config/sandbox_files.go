package config

import (
	"bytes"
	"fmt"
	"strings"
)

// SandboxFiles says what of the workspace enters a sandbox, in [sandbox].
// By default that is what git considers the project (tracked files and
// untracked files no ignore rule covers), without secret files, with no
// size limit per file.
type SandboxFiles struct {
	// Include: gitignore-style patterns, relative to the workspace root,
	// of ignored files to take in all the same (e.g. "dist/schema.json").
	Include []string `toml:"include" json:"include"`
	// Exclude: patterns left out even when tracked (e.g. "testdata/huge/").
	// Exclude wins over Include.
	Exclude []string `toml:"exclude" json:"exclude"`
	// IncludeSecrets: secret files (.env*, keys, credentials) a test needs,
	// e.g. "test/fixtures/.env.example". Nothing else secret is synced.
	IncludeSecrets []string `toml:"include_secrets" json:"includeSecrets"`
	// MaxFileSize leaves out (and names) larger files; "" = no limit.
	MaxFileSize string `toml:"max_file_size" json:"maxFileSize"`
	// MaxWorkspaceSize fails a snapshot over it, naming the biggest
	// directories; "" = 4g.
	MaxWorkspaceSize string `toml:"max_workspace_size" json:"maxWorkspaceSize"`
}

// Sizes returns MaxFileSize and MaxWorkspaceSize in bytes (0 = default).
func (s SandboxFiles) Sizes() (maxFile, maxTotal int64) {
	if s.MaxFileSize != "" {
		maxFile, _ = ParseSize(s.MaxFileSize)
	}
	if s.MaxWorkspaceSize != "" {
		maxTotal, _ = ParseSize(s.MaxWorkspaceSize)
	}
	return maxFile, maxTotal
}

// check validates the fields; name and data (the TOML text) place an
// error at its file and line when given.
func (s SandboxFiles) check(name string, data []byte) error {
	bad := func(key, format string, a ...any) error {
		where := "sandbox." + key
		if name != "" {
			where = fmt.Sprintf("%s:%d: %s", name, keyLine(data, key), where)
		}
		return fmt.Errorf("%w: %s: %s", ErrInvalid, where, fmt.Sprintf(format, a...))
	}
	for _, f := range []struct{ key, v string }{{"max_file_size", s.MaxFileSize}, {"max_workspace_size", s.MaxWorkspaceSize}} {
		if f.v == "" {
			continue
		}
		if n, err := ParseSize(f.v); err != nil || n == 0 {
			return bad(f.key, "bad size %q (want e.g. 10m, 2g)", f.v)
		}
	}
	for _, f := range []struct {
		key  string
		list []string
	}{{"include", s.Include}, {"exclude", s.Exclude}, {"include_secrets", s.IncludeSecrets}} {
		for _, p := range f.list {
			if msg := badPattern(p); msg != "" {
				return bad(f.key, "pattern %q %s", p, msg)
			}
		}
	}
	return nil
}

// badPattern says what is wrong with a workspace pattern, or "".
func badPattern(p string) string {
	t := strings.TrimSpace(p)
	switch {
	case t == "" || t == "!":
		return "is empty"
	case strings.ContainsRune(p, 0) || strings.ContainsRune(p, '\\') && strings.HasSuffix(p, `\`):
		return "is not a valid pattern"
	case strings.HasPrefix(t, "#"):
		return "is a comment (escape a leading # as \\#)"
	}
	for _, seg := range strings.Split(strings.TrimPrefix(t, "!"), "/") {
		if seg == ".." {
			return "climbs out of the workspace (patterns are relative to the workspace root)"
		}
	}
	return ""
}

// keyLine finds the line of key in the [sandbox] table of a TOML text
// (1 when not found).
func keyLine(data []byte, key string) int {
	in := false
	for i, line := range bytes.Split(data, []byte("\n")) {
		l := strings.TrimSpace(string(line))
		if strings.HasPrefix(l, "[") {
			in = strings.HasPrefix(l, "[sandbox]")
			continue
		}
		if k, _, ok := strings.Cut(l, "="); ok && in && strings.TrimSpace(k) == key {
			return i + 1
		}
	}
	return 1
}

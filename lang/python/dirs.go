package python

import "github.com/fixpoint-dev/fixpoint/lang"

// GeneratedDirs: virtualenvs, bytecode and the caches of mypy, pytest
// and tox (lang.ProjectDirs).
func (Language) GeneratedDirs() []string {
	return []string{".venv", "venv", "__pycache__", ".mypy_cache", ".pytest_cache", ".tox"}
}

var _ lang.CacheDirs = Language{}

// CacheDirs implements lang.CacheDirs: bytecode caches, only ever stale in
// a sandbox (its python3 writes none: PYTHONDONTWRITEBYTECODE).
func (Language) CacheDirs() []string { return []string{"__pycache__"} }

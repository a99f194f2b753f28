package python

// GeneratedDirs: virtualenvs, bytecode and the caches of mypy, pytest
// and tox (lang.ProjectDirs).
func (Language) GeneratedDirs() []string {
	return []string{".venv", "venv", "__pycache__", ".mypy_cache", ".pytest_cache", ".tox"}
}

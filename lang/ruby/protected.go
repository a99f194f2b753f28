package ruby

import "strings"

// ProtectedFile: bundler's configuration (.bundle/config) chooses the
// Gemfile, the gem sources and paths the user's own `bundle` uses on the
// host (lang.ProtectedFiles).
func (Language) ProtectedFile(rel string) string {
	if rel == ".bundle/config" || strings.HasSuffix(rel, "/.bundle/config") {
		return "package manager configuration (it can swap the toolchain on the host)"
	}
	return ""
}

// GeneratedDirs: bundler's install directory (lang.ProjectDirs).
func (Language) GeneratedDirs() []string { return []string{".bundle"} }

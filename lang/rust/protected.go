package rust

import (
	"path"
	"slices"
	"strings"
)

// ProtectedFile: cargo's configuration (.cargo/ in any directory) can
// swap the toolchain, the linker and the registry on the user's machine
// (lang.ProtectedFiles).
func (Language) ProtectedFile(rel string) string {
	if slices.Contains(strings.Split(path.Dir(rel), "/"), ".cargo") {
		return "package manager configuration (it can swap the toolchain on the host)"
	}
	return ""
}

// GeneratedDirs: cargo's build output (lang.ProjectDirs).
func (Language) GeneratedDirs() []string { return []string{"target"} }

package node

import "path"

// ProtectedFile: yarn's and pnpm's configuration and hooks run code, or
// swap the package manager, on the user's machine (lang.ProtectedFiles).
func (Language) ProtectedFile(rel string) string {
	switch path.Base(rel) {
	case ".yarnrc", ".yarnrc.yml", ".pnpmfile.cjs", ".pnpmfile.mjs":
		return "package manager configuration (it can swap the toolchain on the host)"
	}
	return ""
}

// GeneratedDirs: installed packages (lang.ProjectDirs).
func (Language) GeneratedDirs() []string { return []string{"node_modules"} }

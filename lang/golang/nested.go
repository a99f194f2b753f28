package golang

import (
	"path"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// A repository whose only Go module is in a sub-directory (a major
// version's module in v5/, with the old GOPATH code at the root and no
// go.mod there) is tested as its user does: `cd v5 && go test ./...`,
// here `go -C v5 test ./...` from the workspace root. Its setup step,
// runtime requirement and module cache work on that go.mod the same way.

// nestedModules lists the directories of the shallowest go.mod files
// below the root, when the root has neither go.mod nor go.work; nil
// otherwise. vendor/, testdata/ and directories Go ignores (".x", "_x")
// do not count.
func nestedModules(snap *sandbox.Snapshot) []string {
	if snap == nil {
		return nil
	}
	_, mod := snap.Files["go.mod"]
	_, work := snap.Files["go.work"]
	if mod || work {
		return nil
	}
	best := -1
	var dirs []string
	for p := range snap.Files {
		if path.Base(p) != "go.mod" || p == "go.mod" {
			continue
		}
		d := path.Dir(p)
		if goIgnored(d) {
			continue
		}
		depth := strings.Count(d, "/")
		switch {
		case best < 0 || depth < best:
			best, dirs = depth, []string{d}
		case depth == best:
			dirs = append(dirs, d)
		}
	}
	sort.Strings(dirs)
	return dirs
}

// goIgnored reports whether go (and so a native run) skips directory d:
// vendor/, testdata/, or a name starting with "." or "_".
func goIgnored(d string) bool {
	for _, part := range strings.Split(d, "/") {
		if part == "vendor" || part == "testdata" || strings.HasPrefix(part, ".") || strings.HasPrefix(part, "_") {
			return true
		}
	}
	return false
}

// nestedModule is the directory of the one module below the root
// (nestedModules), "" when there is none or several.
func nestedModule(snap *sandbox.Snapshot) string {
	if dirs := nestedModules(snap); len(dirs) == 1 {
		return dirs[0]
	}
	return ""
}

// moduleDir is where the main module's go.mod is: "." at the root, the
// nested module's directory, or "" when there is no single one.
func moduleDir(snap *sandbox.Snapshot) string {
	if snap == nil {
		return "."
	}
	if _, ok := snap.Files["go.mod"]; ok {
		return "."
	}
	return nestedModule(snap)
}

// inModule is p, a path relative to the main module's directory, made
// workspace-relative.
func inModule(snap *sandbox.Snapshot, p string) string {
	if d := moduleDir(snap); d != "" && d != "." {
		return path.Join(d, p)
	}
	return p
}

// goArgs prefixes a go subcommand with -C for a nested module.
func goArgs(snap *sandbox.Snapshot, args ...string) []string {
	if d := nestedModule(snap); d != "" {
		return append([]string{"go", "-C", d}, args...)
	}
	return append([]string{"go"}, args...)
}

// shellQuote quotes s for sh: a workspace directory name in the setup
// script is data, never shell syntax.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

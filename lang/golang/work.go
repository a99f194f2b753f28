package golang

import (
	"path"
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// A Go workspace (go.work) changes three things a native run relies on:
// go rejects -mod=mod in workspace mode, `./...` at a root that is not a
// module matches nothing, and packages belong to several modules. A
// vendored module (vendor/modules.txt) builds from vendor/, which
// -mod=mod would override with downloads.

var (
	useLine   = regexp.MustCompile(`(?m)^\s*use\s+("?)([^\s"()]+)("?)\s*(?://.*)?$`)
	useBlock  = regexp.MustCompile(`(?ms)^\s*use\s*\((.*?)\)`)
	blockItem = regexp.MustCompile(`(?m)^\s*("?)([^\s"()/][^\s"()]*|\.|\./[^\s"()]*)("?)\s*(?://.*)?$`)
)

// workspaceUses returns the directories of go.work's use directives,
// cleaned and workspace-relative ("." for the root), in file order.
func workspaceUses(gowork string) []string {
	var dirs []string
	seen := map[string]bool{}
	add := func(d string) {
		d = path.Clean(strings.TrimSpace(d))
		if d == "" || path.IsAbs(d) || d == ".." || strings.HasPrefix(d, "../") || seen[d] {
			return
		}
		seen[d] = true
		dirs = append(dirs, d)
	}
	for _, b := range useBlock.FindAllStringSubmatch(gowork, -1) {
		for _, m := range blockItem.FindAllStringSubmatch(b[1], -1) {
			add(m[2])
		}
	}
	for _, m := range useLine.FindAllStringSubmatch(gowork, -1) {
		add(m[2])
	}
	return dirs
}

// modFlags is the -mod part of GOFLAGS for the snapshot: -mod=mod lets go
// add missing go.sum lines, except in workspace mode (go refuses it) and
// for a vendored module (it would bypass vendor/).
func modFlags(snap *sandbox.Snapshot) string {
	if snap != nil {
		if _, ok := snap.Files["go.work"]; ok {
			return "-buildvcs=false"
		}
		if _, ok := snap.Files[inModule(snap, "vendor/modules.txt")]; ok {
			return "-buildvcs=false"
		}
	}
	return "-mod=mod -buildvcs=false"
}

// workspaceModules maps the module path of each go.work member to its
// directory, and returns the test patterns that cover them.
func workspaceModules(snap *sandbox.Snapshot) (map[string]string, []string) {
	gowork, ok := snap.Text("go.work")
	if !ok {
		return nil, nil
	}
	mods := map[string]string{}
	var patterns []string
	for _, d := range workspaceUses(gowork) {
		gomod, ok := snap.Text(path.Join(d, "go.mod"))
		if !ok {
			continue
		}
		m := goModuleRe.FindStringSubmatch(gomod)
		if m == nil {
			continue
		}
		mods[m[2]] = d
		if d == "." {
			patterns = append(patterns, "./...")
		} else {
			patterns = append(patterns, "./"+d+"/...")
		}
	}
	return mods, patterns
}

// requiresModules reports whether any module of the project (the root
// go.mod, or a go.work member) requires another module.
func requiresModules(snap *sandbox.Snapshot) bool {
	mods := []string{inModule(snap, "go.mod")}
	if gowork, ok := snap.Text("go.work"); ok {
		for _, d := range workspaceUses(gowork) {
			mods = append(mods, path.Join(d, "go.mod"))
		}
	}
	for _, m := range mods {
		if f, ok := snap.Files[m]; ok {
			c := lang.Contents(f)
			if requireLine.Match(c) || strings.Contains(string(c), "\nrequire") {
				return true
			}
		}
	}
	return false
}

package policy

import (
	"sort"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// Dep is a dependency an edit adds.
type Dep = lang.Dep

// DepsAdded lists dependencies declared in after's manifests (each
// language's: go.mod, requirements*.txt, pyproject.toml, package.json)
// that before did not declare. Each one needs approval (the allow-list or
// the user): the setup phase, which has network, would install it.
func DepsAdded(before, after *sandbox.Snapshot) []Dep {
	old := map[string]bool{}
	for _, d := range manifestDeps(before) {
		old[d.String()] = true
	}
	var out []Dep
	for _, d := range manifestDeps(after) {
		if !old[d.String()] {
			old[d.String()] = true
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Allowed splits deps into those on the allow-list (exact "name" or
// "ecosystem:name") and the rest.
func Allowed(deps []Dep, allow []string) (ok, need []Dep) {
	set := map[string]bool{}
	for _, a := range allow {
		set[a] = true
	}
	for _, d := range deps {
		if set[d.Name] || set[d.String()] {
			ok = append(ok, d)
		} else {
			need = append(need, d)
		}
	}
	return ok, need
}

// manifestDeps lists what every language's manifests in s declare
// ([lang.Manifests]).
func manifestDeps(s *sandbox.Snapshot) []Dep {
	if s == nil {
		return nil
	}
	var out []Dep
	for _, l := range registry.All() {
		if m, ok := l.(lang.Manifests); ok {
			out = append(out, m.Deps(s)...)
		}
	}
	return out
}

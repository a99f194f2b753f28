package rust

import (
	"path"
	"sort"
	"strings"

	"github.com/pelletier/go-toml/v2"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// buildManifests lists the Cargo.toml files `cargo test` at the root
// builds: the root manifest, its workspace members (globs included, less
// workspace.exclude) and, transitively, the path dependencies of those.
// A nested manifest outside that set is not part of the build: a
// cargo-fuzz crate (fuzz/, its own [workspace]), examples kept as separate
// crates, vendored crates. Their dependencies are not the project's.
func buildManifests(snap *sandbox.Snapshot) []string {
	if _, ok := snap.Files["Cargo.toml"]; !ok {
		return nil
	}
	var dirs []string // directories holding a Cargo.toml, "" for the root
	for _, p := range snap.Paths() {
		if path.Base(p) == "Cargo.toml" {
			d := path.Dir(p)
			if d == "." {
				d = ""
			}
			dirs = append(dirs, d)
		}
	}
	manifest := func(dir string) map[string]any {
		text, ok := snap.Text(path.Join(dir, "Cargo.toml"))
		if !ok {
			return nil
		}
		var m map[string]any
		if toml.Unmarshal([]byte(text), &m) != nil {
			return nil
		}
		return m
	}
	root := manifest("")
	excluded := map[string]bool{}
	in := map[string]bool{"": true}
	queue := []string{""}
	if ws, ok := root["workspace"].(map[string]any); ok {
		for _, e := range stringList(ws["exclude"]) {
			excluded[path.Clean(e)] = true
		}
		for _, pat := range stringList(ws["members"]) {
			pat = path.Clean(pat)
			for _, d := range dirs {
				if d == "" || excluded[d] || in[d] {
					continue
				}
				if ok, _ := path.Match(pat, d); ok {
					in[d] = true
					queue = append(queue, d)
				}
			}
		}
	}
	for len(queue) > 0 {
		d := queue[0]
		queue = queue[1:]
		m := manifest(d)
		for _, dep := range pathDeps(m) {
			target := path.Clean(path.Join(d, dep))
			if target == "." {
				target = ""
			}
			if strings.HasPrefix(target, "../") || target == ".." || in[target] {
				continue
			}
			if _, ok := snap.Files[path.Join(target, "Cargo.toml")]; ok {
				in[target] = true
				queue = append(queue, target)
			}
		}
	}
	var out []string
	for d := range in {
		out = append(out, path.Join(d, "Cargo.toml"))
	}
	sort.Strings(out)
	return out
}

// pathDeps lists the path = "…" values of a manifest's dependency tables.
func pathDeps(m map[string]any) []string {
	tables := []any{m["dependencies"], m["dev-dependencies"], m["build-dependencies"]}
	if ws, ok := m["workspace"].(map[string]any); ok {
		tables = append(tables, ws["dependencies"])
	}
	if targets, ok := m["target"].(map[string]any); ok {
		for _, t := range targets {
			if tm, ok := t.(map[string]any); ok {
				tables = append(tables, tm["dependencies"], tm["dev-dependencies"], tm["build-dependencies"])
			}
		}
	}
	var out []string
	for _, t := range tables {
		deps, _ := t.(map[string]any)
		for _, d := range deps {
			if dm, ok := d.(map[string]any); ok {
				if p, ok := dm["path"].(string); ok {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

func stringList(v any) []string {
	l, _ := v.([]any)
	var out []string
	for _, x := range l {
		if s, ok := x.(string); ok {
			out = append(out, s)
		}
	}
	return out
}

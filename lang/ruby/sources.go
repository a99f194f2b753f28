package ruby

import (
	"path"
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

var (
	symbolRe  = regexp.MustCompile(`(?m)^\s{0,4}(def\s+(?:self\.)?[\w.]+[?!=]?(?:\s*\([^)\n]*\)|[^\n;]*)?|class\s+[A-Z][\w:]*(?:\s*<\s*[A-Z][\w:]*)?|module\s+[A-Z][\w:]*)`)
	requireRe = regexp.MustCompile(`(?m)^\s*(require_relative|require)\s*\(?\s*["']([^"'\n]+)["']`)
)

// Symbols lists a Ruby file's modules, classes and methods (up to two
// levels of nesting) for the repo map.
func (Language) Symbols(p string, data []byte) []string {
	if path.Ext(p) != ".rb" {
		return nil
	}
	var out []string
	for _, m := range symbolRe.FindAllSubmatch(data, 200) {
		out = append(out, strings.Join(strings.Fields(string(m[1])), " "))
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// LocalImports resolves a Ruby file's require_relative (relative to the
// file) and require (under lib/ or test/, the test command's load path)
// to workspace files; dirs is always nil.
func (Language) LocalImports(snap *sandbox.Snapshot, p string) (files, dirs []string) {
	if path.Ext(p) != ".rb" {
		return nil, nil
	}
	text, ok := snap.Text(p)
	if !ok {
		return nil, nil
	}
	for _, m := range requireRe.FindAllStringSubmatch(text, 100) {
		name := strings.TrimSuffix(m[2], ".rb") + ".rb"
		var candidates []string
		if m[1] == "require_relative" {
			candidates = []string{path.Join(path.Dir(p), name)}
		} else {
			candidates = []string{path.Join("lib", name), path.Join("test", name)}
		}
		for _, c := range candidates {
			if _, ok := snap.Files[c]; ok {
				files = append(files, c)
				break
			}
		}
	}
	return files, nil
}

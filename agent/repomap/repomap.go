// Package repomap renders a compact map of a workspace for a model prompt:
// the file tree plus the top-level symbols of each source file.
//
// [Build] renders a [sandbox.Snapshot] within a byte budget; [Symbols]
// extracts the declarations of one file, as its language says
// (lang.Sources: Go through go/ast, Python and JavaScript/TypeScript
// through a simple declaration scan).
package repomap

import (
	"fmt"
	"path"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang/registry"
	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// Options bound a map. Zero values are documented defaults.
type Options struct {
	// MaxBytes bounds the rendered map; default 8000.
	MaxBytes int
	// Include reports whether a path may appear at all (secret and ignored
	// files are filtered out by the caller); nil includes everything.
	Include func(path string) bool
	// Relevant paths get their symbols listed first, before budget runs out.
	Relevant []string
}

// Build renders the map: one line per file, "path: sym; sym" for files with
// symbols. Symbols are dropped from the least relevant files first when the
// budget is short, then files are elided with a final "… N more files" line.
func Build(snap *sandbox.Snapshot, opts *Options) string {
	o := Options{}
	if opts != nil {
		o = *opts
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = 8000
	}
	var paths []string
	for _, p := range snap.Paths() {
		if o.Include == nil || o.Include(p) {
			paths = append(paths, p)
		}
	}
	rank := map[string]int{}
	for i, p := range o.Relevant {
		if _, ok := rank[p]; !ok {
			rank[p] = i + 1
		}
	}
	// Symbol lines, granted in relevance order while they fit: the
	// relevant files, then the other files of their directories, then the
	// rest, tests last (their symbols are test names, rarely what a model
	// must find).
	relDirs := map[string]bool{}
	for _, p := range o.Relevant {
		relDirs[path.Dir(p)] = true
	}
	tier := func(p string) int {
		switch {
		case registry.IsTestFile(p):
			return 3
		case rank[p] > 0:
			return 0
		case relDirs[path.Dir(p)]:
			return 1
		}
		return 2
	}
	order := append([]string(nil), paths...)
	sort.SliceStable(order, func(i, j int) bool {
		ti, tj := tier(order[i]), tier(order[j])
		if ti != tj {
			return ti < tj
		}
		return rank[order[i]] < rank[order[j]]
	})
	base := 0
	for _, p := range paths {
		base += len(p) + 1
	}
	syms := map[string]string{}
	budget := o.MaxBytes - base
	for _, p := range order {
		data, _ := snap.Read(p)
		s := Symbols(p, data)
		if len(s) == 0 {
			continue
		}
		line := ": " + strings.Join(s, "; ")
		if len(line) > budget && !registry.IsTestFile(p) {
			// As many of its symbols as still fit, rather than none: a
			// file to fix should not appear as a bare name.
			line = ""
			for _, sym := range s {
				add := "; " + sym
				if line == "" {
					add = ": " + sym
				}
				if len(line)+len(add)+len("; …") > budget {
					break
				}
				line += add
			}
			if line == "" {
				continue
			}
			line += "; …"
		} else if len(line) > budget {
			continue
		}
		budget -= len(line)
		syms[p] = line
	}
	var b strings.Builder
	for i, p := range paths {
		line := p + syms[p] + "\n"
		if b.Len()+len(line) > o.MaxBytes {
			fmt.Fprintf(&b, "… %d more files\n", len(paths)-i)
			break
		}
		b.WriteString(line)
	}
	return b.String()
}

// Symbols lists the top-level declarations of one file, in source order:
// "func Name(params) results", "type Name", "method (T) Name" for Go;
// "def name", "class Name" (and methods as "Class.name") for Python;
// "function name", "class Name", "const name" for JavaScript/TypeScript.
// Unknown file kinds and unparsable Go files give nil.
//
// Each language says what its files declare (lang.Sources).
func Symbols(p string, data []byte) []string {
	return registry.Symbols(p, data)
}

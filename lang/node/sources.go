package node

import (
	"bufio"
	"bytes"
	"encoding/json"
	"path"
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

var (
	// jsMember is a function assigned to a member at the top level:
	// proto.handle = function handle(…), exports.parse = (s) => ….
	jsMember = regexp.MustCompile(`^(?:[A-Za-z_$][\w$]*\.)+([A-Za-z_$][\w$]*)\s*=\s*(?:async\s+)?(?:function\b|\([^)]*\)\s*=>|[A-Za-z_$][\w$]*\s*=>)`)
	// jsMethod is a method of a class body: send(body) {, async get(k) {.
	jsMethod   = regexp.MustCompile(`^\s+(?:(?:public|private|protected|static|async|get|set|override|readonly)\s+)*\*?([A-Za-z_$][\w$]*)\s*(?:<[^>]*>)?\([^)]*\)\s*(?::\s*[^{]+)?\{\s*$`)
	jsDecl     = regexp.MustCompile(`^(?:export\s+)?(?:default\s+)?(?:async\s+)?(function\*?|class|interface|type|const|let)\s+([A-Za-z_$][\w$]*)`)
	jsImportRe = regexp.MustCompile(`(?:require\(\s*|from\s+|import\s+|import\(\s*)['"](\.{1,2}(?:/[^'"]*)?)['"]`)
)

// isSource reports whether p is a JavaScript or TypeScript source file.
func isSource(p string) bool {
	switch path.Ext(p) {
	case ".js", ".mjs", ".cjs", ".ts", ".tsx", ".jsx", ".mts":
		return true
	}
	return false
}

// Symbols lists a JavaScript or TypeScript file's top-level "function
// name", "class Name", "interface Name", "type Name" and "const name"
// declarations, functions assigned to members ("function
// proto.handle") and class methods ("method Class.name"); nil for other
// files.
func (Language) Symbols(p string, data []byte) []string {
	if !isSource(p) {
		return nil
	}
	return jsSymbols(data)
}

func jsSymbols(data []byte) []string {
	var out []string
	class := "" // the top-level class whose body the scan is in
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if m := jsDecl.FindStringSubmatch(line); m != nil {
			kind := strings.TrimSuffix(m[1], "*")
			if kind == "let" {
				kind = "const"
			}
			out = append(out, kind+" "+m[2])
			class = ""
			if kind == "class" && !strings.HasSuffix(strings.TrimSpace(line), "}") {
				class = m[2]
			}
			continue
		}
		if m := jsMember.FindStringSubmatch(line); m != nil {
			out = append(out, "function "+strings.TrimSpace(strings.SplitN(line, "=", 2)[0]))
			continue
		}
		if strings.HasPrefix(line, "}") {
			class = ""
			continue
		}
		if m := jsMethod.FindStringSubmatch(line); m != nil && class != "" && !jsKeyword[m[1]] {
			out = append(out, "method "+class+"."+m[1])
		}
	}
	return out
}

// jsKeyword are the statements a method-like line (if (x) {) starts with.
var jsKeyword = map[string]bool{"if": true, "for": true, "while": true, "switch": true, "catch": true, "function": true, "return": true, "with": true, "else": true, "do": true, "try": true}

// LocalImports resolves the workspace files a JavaScript or TypeScript
// file imports by relative path: require('../src/x') → src/x.js, and a
// directory — require('..'), require('./lib') — to its package.json main
// (or exports ".") or index file: the package under test.
func (Language) LocalImports(snap *sandbox.Snapshot, p string) (files, dirs []string) {
	if !isSource(p) {
		return nil, nil
	}
	data, _ := snap.Text(p)
	for _, m := range jsImportRe.FindAllStringSubmatch(data, -1) {
		rel := path.Clean(path.Join(path.Dir(p), m[1]))
		if rel == "." || strings.HasPrefix(rel, "../") || rel == ".." {
			if rel != "." {
				continue // outside the workspace
			}
			rel = ""
		}
		if f := resolveModule(snap, rel); f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}

// resolveModule finds the file a relative module path names, as Node
// does: the file, with an extension, or a directory's main or index.
func resolveModule(snap *sandbox.Snapshot, rel string) string {
	if rel != "" {
		for _, c := range []string{rel, rel + ".js", rel + ".ts", rel + ".mjs", rel + ".cjs", rel + ".jsx", rel + ".tsx"} {
			if _, ok := snap.Files[c]; ok {
				return c
			}
		}
		// TypeScript's ESM imports name the file they compile to
		// (import … from './v1.js' in src/v1.ts's neighbour): the source
		// is the .ts beside it.
		ext := path.Ext(rel)
		if ts, ok := map[string][]string{".js": {".ts", ".tsx"}, ".jsx": {".tsx"}, ".mjs": {".mts"}, ".cjs": {".cts"}}[ext]; ok {
			for _, e := range ts {
				if c := strings.TrimSuffix(rel, ext) + e; hasFile(snap, c) {
					return c
				}
			}
		}
	}
	dir := rel
	if pkg, ok := snap.Text(path.Join(dir, "package.json")); ok {
		var m struct {
			Main    string          `json:"main"`
			Module  string          `json:"module"`
			Exports json.RawMessage `json:"exports"`
		}
		if json.Unmarshal([]byte(pkg), &m) == nil {
			for _, entry := range []string{m.Main, m.Module, exportsDot(m.Exports)} {
				if entry == "" {
					continue
				}
				e := path.Clean(path.Join(dir, entry))
				if strings.HasPrefix(e, "../") || e == ".." {
					continue
				}
				for _, c := range []string{e, e + ".js", e + ".ts", e + "/index.js", e + "/index.ts"} {
					if _, ok := snap.Files[c]; ok {
						return c
					}
				}
			}
		}
	}
	for _, c := range []string{"index.js", "index.ts", "index.mjs", "index.cjs"} {
		c = path.Join(dir, c)
		if _, ok := snap.Files[c]; ok {
			return c
		}
	}
	return ""
}

// exportsDot is the file package.json's exports maps "." to (a string, or
// the first string of its conditions: require, import, node, default).
func exportsDot(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return ""
	}
	if dot, ok := m["."]; ok {
		return exportsDot(dot)
	}
	for _, k := range []string{"require", "import", "node", "default"} {
		if v, ok := m[k]; ok {
			if s := exportsDot(v); s != "" {
				return s
			}
		}
	}
	return ""
}

func hasFile(snap *sandbox.Snapshot, p string) bool {
	_, ok := snap.Files[p]
	return ok
}

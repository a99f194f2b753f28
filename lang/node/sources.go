package node

import (
	"bufio"
	"bytes"
	"path"
	"regexp"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

var (
	jsDecl     = regexp.MustCompile(`^(?:export\s+)?(?:default\s+)?(?:async\s+)?(function\*?|class|interface|type|const|let)\s+([A-Za-z_$][\w$]*)`)
	jsImportRe = regexp.MustCompile(`(?:require\(\s*|from\s+|import\s+)['"](\.{1,2}/[^'"]+)['"]`)
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
// declarations; nil for other files.
func (Language) Symbols(p string, data []byte) []string {
	if !isSource(p) {
		return nil
	}
	return jsSymbols(data)
}

func jsSymbols(data []byte) []string {
	var out []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() {
		if m := jsDecl.FindStringSubmatch(sc.Text()); m != nil {
			kind := strings.TrimSuffix(m[1], "*")
			if kind == "let" {
				kind = "const"
			}
			out = append(out, kind+" "+m[2])
		}
	}
	return out
}

// LocalImports resolves the workspace files a JavaScript or TypeScript
// file imports by relative path: require('../src/x') → src/x.js.
func (Language) LocalImports(snap *sandbox.Snapshot, p string) (files, dirs []string) {
	if !isSource(p) {
		return nil, nil
	}
	data, _ := snap.Text(p)
	for _, m := range jsImportRe.FindAllStringSubmatch(data, -1) {
		rel := path.Join(path.Dir(p), m[1])
		for _, c := range []string{rel, rel + ".js", rel + ".ts", rel + ".mjs", rel + ".cjs", rel + "/index.js", rel + "/index.ts"} {
			c = path.Clean(c)
			if _, ok := snap.Files[c]; ok {
				files = append(files, c)
				break
			}
		}
	}
	return files, nil
}

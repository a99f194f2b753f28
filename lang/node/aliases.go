package node

import (
	"regexp"
	"strings"
)

var (
	// jsNamedImportRe is the braces of an import or export-from
	// statement: import {a as b} from, export {a as b} from.
	jsNamedImportRe = regexp.MustCompile(`(?s)\b(?:import|export)\s*(?:type\s+)?(?:[\w$]+\s*,\s*)?\{([^}]*)\}\s*from\b`)
	// jsDestructureRe is a destructuring require: const {a: b} = require(.
	jsDestructureRe = regexp.MustCompile(`(?s)\b(?:const|let|var)\s*\{([^}]*)\}\s*=\s*require\(`)
)

// ImportAliases maps the names a JavaScript or TypeScript module's
// imports and re-exports rename (import {parse as parseV1},
// export {default as v1} from, const {format: fmt} = require(…)) to the
// imported names.
func (Language) ImportAliases(p string, data []byte) map[string]string {
	if !isSource(p) {
		return nil
	}
	out := map[string]string{}
	text := string(data)
	for _, m := range jsNamedImportRe.FindAllStringSubmatch(text, -1) {
		for _, item := range strings.Split(m[1], ",") {
			if f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(item), "type ")); len(f) == 3 && f[1] == "as" && f[0] != f[2] {
				out[f[2]] = f[0]
			}
		}
	}
	for _, m := range jsDestructureRe.FindAllStringSubmatch(text, -1) {
		for _, item := range strings.Split(m[1], ",") {
			if a, b, ok := strings.Cut(item, ":"); ok {
				a, b = strings.TrimSpace(a), strings.TrimSpace(b)
				if i := strings.IndexByte(b, '='); i >= 0 { // a default value
					b = strings.TrimSpace(b[:i])
				}
				if a != "" && b != "" && a != b {
					out[b] = a
				}
			}
		}
	}
	return out
}

package python

import (
	"path"
	"regexp"
	"strings"
)

// pyFromImportRe is a from-import statement and what it imports (a
// parenthesised list over several lines too).
var pyFromImportRe = regexp.MustCompile(`(?m)^[ \t]*from\s+[\w.]+\s+import\s+(\([^)]*\)|[^\n]+)`)

// ImportAliases maps the names a Python module's from-imports rename
// (from ._parser import parse_value as _value) to the imported names.
func (Language) ImportAliases(p string, data []byte) map[string]string {
	if path.Ext(p) != ".py" {
		return nil
	}
	out := map[string]string{}
	for _, m := range pyFromImportRe.FindAllStringSubmatch(string(data), -1) {
		list := strings.Trim(m[1], "()")
		if i := strings.IndexByte(list, '#'); i >= 0 && !strings.Contains(m[1], "(") {
			list = list[:i]
		}
		for _, item := range strings.Split(list, ",") {
			if f := strings.Fields(item); len(f) == 3 && f[1] == "as" && f[0] != f[2] {
				out[f[2]] = f[0]
			}
		}
	}
	return out
}

package rust

import (
	"path"
	"regexp"
	"strings"
)

// rsUseRe is a use declaration, over several lines too.
var rsUseRe = regexp.MustCompile(`(?s)\buse\s+([^;]+);`)

// rsAsRe is one renamed path of a use tree: a::b as c, self as c.
var rsAsRe = regexp.MustCompile(`(\w+)\s+as\s+(\w+)`)

// ImportAliases maps the names a Rust file's use declarations rename
// (use crate::num::as_u64 as to_u64; use super::{parse as parse_inner})
// to the imported names.
func (Language) ImportAliases(p string, data []byte) map[string]string {
	if path.Ext(p) != ".rs" {
		return nil
	}
	code, _ := blank(data)
	out := map[string]string{}
	for _, m := range rsUseRe.FindAllStringSubmatch(string(code), -1) {
		for _, a := range rsAsRe.FindAllStringSubmatch(m[1], -1) {
			if a[2] != "_" && a[1] != "self" && a[1] != a[2] && !strings.HasPrefix(a[2], "r#") {
				out[a[2]] = a[1]
			}
		}
	}
	return out
}

package python

import (
	"fmt"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
)

// ParseSpec parses a PEP 440 version specifier set as found in
// requires-python (">=3.10", ">=3.8,<4", "~=3.10", "==3.11.*", "!=3.9.*").
// A bare version ("3.11", from .python-version) means that release series.
func ParseSpec(s string) (lang.Range, error) {
	var out []lang.Bound
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		op := ""
		for _, p := range []string{"===", "~=", "==", "!=", ">=", "<=", ">", "<"} {
			if strings.HasPrefix(part, p) {
				op, part = p, strings.TrimSpace(part[len(p):])
				break
			}
		}
		wild := strings.HasSuffix(part, ".*")
		v, n, err := lang.ParsePartial(strings.TrimSuffix(part, ".*"))
		if err != nil {
			return lang.Range{}, fmt.Errorf("specifier %q: %w", s, err)
		}
		if n == 0 {
			return lang.Range{}, fmt.Errorf("specifier %q: no version", s)
		}
		switch op {
		case "", "==", "===":
			if wild || op == "" {
				out = append(out, lang.Series(v, n)...)
			} else {
				out = append(out, lang.Bound{Op: ">=", V: v}, lang.Bound{Op: "<", V: lang.After(v, 3)})
			}
		case "!=":
			if wild {
				out = append(out, lang.Bound{Op: "out", V: v, Hi: lang.After(v, n)})
				continue
			}
			out = append(out, lang.Bound{Op: "!=", V: v})
		case "~=":
			if n < 2 {
				return lang.Range{}, fmt.Errorf("specifier %q: ~= needs two numbers", s)
			}
			up := lang.Version{Major: v.Major + 1, Minor: 0, Patch: 0}
			if n == 3 {
				up = lang.Version{Major: v.Major, Minor: v.Minor + 1, Patch: 0}
			}
			out = append(out, lang.Bound{Op: ">=", V: v}, lang.Bound{Op: "<", V: up})
		default:
			out = append(out, lang.Bound{Op: op, V: v})
		}
	}
	if len(out) == 0 {
		return lang.Range{}, nil
	}
	return lang.AnyOf(out), nil
}

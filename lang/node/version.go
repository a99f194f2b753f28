package node

import (
	"fmt"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
)

// ParseRange parses an npm semver range as found in engines.node and
// .nvmrc: "||" alternatives of space-separated comparators, ^, ~, x-ranges
// and hyphen ranges ("^20.19.0 || ^22.12.0 || >=24.0.0").
func ParseRange(s string) (lang.Range, error) {
	var alts [][]lang.Bound
	for _, alt := range strings.Split(s, "||") {
		cs, err := parseNodeAlt(strings.TrimSpace(alt))
		if err != nil {
			return lang.Range{}, fmt.Errorf("range %q: %w", s, err)
		}
		if cs == nil { // "*" or "": anything goes
			return lang.Range{}, nil
		}
		alts = append(alts, cs)
	}
	return lang.AnyOf(alts...), nil
}

func parseNodeAlt(s string) ([]lang.Bound, error) {
	if a, b, ok := strings.Cut(s, " - "); ok {
		lo, _, err := lang.ParsePartial(a)
		if err != nil {
			return nil, err
		}
		hi, n, err := lang.ParsePartial(b)
		if err != nil {
			return nil, err
		}
		out := []lang.Bound{{Op: ">=", V: lo}}
		if n == 3 {
			return append(out, lang.Bound{Op: "<=", V: hi}), nil
		}
		return append(out, lang.Bound{Op: "<", V: lang.After(hi, n)}), nil
	}
	// Join operators separated from their version by spaces (">= 20").
	fields := strings.Fields(s)
	var toks []string
	for i := 0; i < len(fields); i++ {
		f := fields[i]
		if strings.Trim(f, "<>=~^") == "" && i+1 < len(fields) {
			f += fields[i+1]
			i++
		}
		toks = append(toks, f)
	}
	var out []lang.Bound
	for _, t := range toks {
		cs, err := parseNodeComparator(t)
		if err != nil {
			return nil, err
		}
		out = append(out, cs...)
	}
	if len(out) == 0 {
		return nil, nil
	}
	return out, nil
}

func parseNodeComparator(t string) ([]lang.Bound, error) {
	op := ""
	for _, p := range []string{">=", "<=", ">", "<", "=", "^", "~"} {
		if strings.HasPrefix(t, p) {
			op, t = p, t[len(p):]
			break
		}
	}
	v, n, err := lang.ParsePartial(t)
	if err != nil {
		return nil, err
	}
	switch op {
	case "", "=":
		return lang.Series(v, n), nil
	case ">=":
		return []lang.Bound{{Op: ">=", V: v}}, nil
	case ">":
		if n < 3 {
			return []lang.Bound{{Op: ">=", V: lang.After(v, n)}}, nil
		}
		return []lang.Bound{{Op: ">", V: v}}, nil
	case "<":
		return []lang.Bound{{Op: "<", V: v}}, nil
	case "<=":
		if n < 3 {
			return []lang.Bound{{Op: "<", V: lang.After(v, n)}}, nil
		}
		return []lang.Bound{{Op: "<=", V: v}}, nil
	case "~":
		if n <= 1 {
			return lang.Series(v, n), nil
		}
		return []lang.Bound{{Op: ">=", V: v}, {Op: "<", V: lang.Version{Major: v.Major, Minor: v.Minor + 1, Patch: 0}}}, nil
	case "^":
		switch {
		case n == 0:
			return nil, nil
		case v.Major > 0 || n == 1:
			return []lang.Bound{{Op: ">=", V: v}, {Op: "<", V: lang.Version{Major: v.Major + 1, Minor: 0, Patch: 0}}}, nil
		case v.Minor > 0 || n == 2:
			return []lang.Bound{{Op: ">=", V: v}, {Op: "<", V: lang.Version{Major: 0, Minor: v.Minor + 1, Patch: 0}}}, nil
		}
		return []lang.Bound{{Op: ">=", V: v}, {Op: "<", V: lang.Version{Major: 0, Minor: 0, Patch: v.Patch + 1}}}, nil
	}
	return nil, fmt.Errorf("operator %q not understood", op)
}

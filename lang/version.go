package lang

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a release number major.minor.patch. Pre-release and build
// suffixes are dropped: a runtime is matched by its release number.
type Version struct{ Major, Minor, Patch int }

// ParseVersion reads "1.22", "v20.19.0", "go1.22.5" or "3.11.2+deb".
func ParseVersion(s string) (Version, error) {
	v, n, err := parsePartial(s)
	if err != nil {
		return Version{}, err
	}
	if n == 0 {
		return Version{}, fmt.Errorf("version %q has no number", s)
	}
	return v, nil
}

func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v.Major, v.Minor, v.Patch) }

// Compare returns -1, 0 or +1.
func (v Version) Compare(w Version) int {
	for _, d := range [3]int{v.Major - w.Major, v.Minor - w.Minor, v.Patch - w.Patch} {
		if d < 0 {
			return -1
		}
		if d > 0 {
			return 1
		}
	}
	return 0
}

// parsePartial parses a version that may stop early or use x/X/* for a
// component ("20", "20.x", "*"); n is how many components were given.
func parsePartial(s string) (Version, int, error) {
	s = strings.TrimSpace(s)
	s = strings.TrimPrefix(s, "go")
	s = strings.TrimPrefix(strings.TrimPrefix(s, "v"), "=")
	if i := strings.IndexAny(s, "-+ "); i >= 0 {
		s = s[:i]
	}
	if s == "" || s == "*" || s == "x" || s == "X" {
		return Version{}, 0, nil
	}
	var c [3]int
	n := 0
	for i, part := range strings.Split(s, ".") {
		if i >= 3 {
			return Version{}, 0, fmt.Errorf("version %q has more than three numbers", s)
		}
		if part == "x" || part == "X" || part == "*" {
			break
		}
		// Go pre-releases: 1.21rc2 counts as 1.21.
		digits := part
		if j := strings.IndexFunc(part, func(r rune) bool { return r < '0' || r > '9' }); j >= 0 {
			digits = part[:j]
		}
		v, err := strconv.Atoi(digits)
		if err != nil {
			return Version{}, 0, fmt.Errorf("version %q: %q is not a number", s, part)
		}
		c[i] = v
		n++
		if digits != part {
			break
		}
	}
	return Version{c[0], c[1], c[2]}, n, nil
}

// comparator is one bound: op is one of >=, >, <, <=, ==, !=.
type comparator struct {
	op string
	v  Version
	hi Version // for "out": versions in [v, hi) are excluded
}

func (c comparator) allows(v Version) bool {
	d := v.Compare(c.v)
	switch c.op {
	case ">=":
		return d >= 0
	case ">":
		return d > 0
	case "<":
		return d < 0
	case "<=":
		return d <= 0
	case "==":
		return d == 0
	case "!=":
		return d != 0
	case "out":
		return d < 0 || v.Compare(c.hi) >= 0
	}
	return false
}

// Range is a set of versions: any of its alternatives, each of which
// holds when all of its bounds hold. The zero Range allows every version.
type Range struct{ alts [][]comparator }

// Allows reports whether v is in the range.
func (r Range) Allows(v Version) bool {
	if len(r.alts) == 0 {
		return true
	}
	for _, alt := range r.alts {
		ok := true
		for _, c := range alt {
			if !c.allows(v) {
				ok = false
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// Best returns the highest of candidates in the range.
func (r Range) Best(candidates []Version) (Version, bool) {
	var best Version
	found := false
	for _, v := range candidates {
		if r.Allows(v) && (!found || v.Compare(best) > 0) {
			best, found = v, true
		}
	}
	return best, found
}

// AtLeast is the range of versions >= v.
func AtLeast(v Version) Range { return Range{alts: [][]comparator{{{op: ">=", v: v}}}} }

// xrange turns a partial version into bounds: "20" is >=20.0.0 <21.0.0.
func xrange(v Version, n int) []comparator {
	switch n {
	case 0:
		return nil
	case 1:
		return []comparator{{op: ">=", v: v}, {op: "<", v: Version{v.Major + 1, 0, 0}}}
	case 2:
		return []comparator{{op: ">=", v: v}, {op: "<", v: Version{v.Major, v.Minor + 1, 0}}}
	}
	return []comparator{{op: "==", v: v}}
}

// next returns the first version after every version matching the partial.
func next(v Version, n int) Version {
	switch n {
	case 1:
		return Version{v.Major + 1, 0, 0}
	case 2:
		return Version{v.Major, v.Minor + 1, 0}
	}
	return Version{v.Major, v.Minor, v.Patch + 1}
}

// ParseNodeRange parses an npm semver range as found in engines.node and
// .nvmrc: "||" alternatives of space-separated comparators, ^, ~, x-ranges
// and hyphen ranges ("^20.19.0 || ^22.12.0 || >=24.0.0").
func ParseNodeRange(s string) (Range, error) {
	var r Range
	for _, alt := range strings.Split(s, "||") {
		cs, err := parseNodeAlt(strings.TrimSpace(alt))
		if err != nil {
			return Range{}, fmt.Errorf("range %q: %w", s, err)
		}
		if cs == nil { // "*" or "": anything goes
			return Range{}, nil
		}
		r.alts = append(r.alts, cs)
	}
	return r, nil
}

func parseNodeAlt(s string) ([]comparator, error) {
	if a, b, ok := strings.Cut(s, " - "); ok {
		lo, _, err := parsePartial(a)
		if err != nil {
			return nil, err
		}
		hi, n, err := parsePartial(b)
		if err != nil {
			return nil, err
		}
		out := []comparator{{op: ">=", v: lo}}
		if n == 3 {
			return append(out, comparator{op: "<=", v: hi}), nil
		}
		return append(out, comparator{op: "<", v: next(hi, n)}), nil
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
	var out []comparator
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

func parseNodeComparator(t string) ([]comparator, error) {
	op := ""
	for _, p := range []string{">=", "<=", ">", "<", "=", "^", "~"} {
		if strings.HasPrefix(t, p) {
			op, t = p, t[len(p):]
			break
		}
	}
	v, n, err := parsePartial(t)
	if err != nil {
		return nil, err
	}
	switch op {
	case "", "=":
		return xrange(v, n), nil
	case ">=":
		return []comparator{{op: ">=", v: v}}, nil
	case ">":
		if n < 3 {
			return []comparator{{op: ">=", v: next(v, n)}}, nil
		}
		return []comparator{{op: ">", v: v}}, nil
	case "<":
		return []comparator{{op: "<", v: v}}, nil
	case "<=":
		if n < 3 {
			return []comparator{{op: "<", v: next(v, n)}}, nil
		}
		return []comparator{{op: "<=", v: v}}, nil
	case "~":
		if n <= 1 {
			return xrange(v, n), nil
		}
		return []comparator{{op: ">=", v: v}, {op: "<", v: Version{v.Major, v.Minor + 1, 0}}}, nil
	case "^":
		switch {
		case n == 0:
			return nil, nil
		case v.Major > 0 || n == 1:
			return []comparator{{op: ">=", v: v}, {op: "<", v: Version{v.Major + 1, 0, 0}}}, nil
		case v.Minor > 0 || n == 2:
			return []comparator{{op: ">=", v: v}, {op: "<", v: Version{0, v.Minor + 1, 0}}}, nil
		}
		return []comparator{{op: ">=", v: v}, {op: "<", v: Version{0, 0, v.Patch + 1}}}, nil
	}
	return nil, fmt.Errorf("operator %q not understood", op)
}

// ParsePythonSpec parses a PEP 440 version specifier set as found in
// requires-python (">=3.10", ">=3.8,<4", "~=3.10", "==3.11.*", "!=3.9.*").
// A bare version ("3.11", from .python-version) means that release series.
func ParsePythonSpec(s string) (Range, error) {
	var out []comparator
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
		v, n, err := parsePartial(strings.TrimSuffix(part, ".*"))
		if err != nil {
			return Range{}, fmt.Errorf("specifier %q: %w", s, err)
		}
		if n == 0 {
			return Range{}, fmt.Errorf("specifier %q: no version", s)
		}
		switch op {
		case "", "==", "===":
			if wild || op == "" {
				out = append(out, xrange(v, n)...)
			} else {
				out = append(out, comparator{op: ">=", v: v}, comparator{op: "<", v: next(v, 3)})
			}
		case "!=":
			if wild {
				out = append(out, comparator{op: "out", v: v, hi: next(v, n)})
				continue
			}
			out = append(out, comparator{op: "!=", v: v})
		case "~=":
			if n < 2 {
				return Range{}, fmt.Errorf("specifier %q: ~= needs two numbers", s)
			}
			up := Version{v.Major + 1, 0, 0}
			if n == 3 {
				up = Version{v.Major, v.Minor + 1, 0}
			}
			out = append(out, comparator{op: ">=", v: v}, comparator{op: "<", v: up})
		default:
			out = append(out, comparator{op: op, v: v})
		}
	}
	if len(out) == 0 {
		return Range{}, nil
	}
	return Range{alts: [][]comparator{out}}, nil
}

// Lowest returns the newest release of the oldest release line that the
// range allows, where line maps a version to its line (its major for
// Node, major.minor for Go): the most conservative choice that still
// gets bug fixes. Candidates for which keep returns false are used only
// when no kept candidate is allowed.
func (r Range) Lowest(candidates []Version, line func(Version) Version, keep func(Version) bool) (Version, bool) {
	pick := func(filter bool) (Version, bool) {
		var best Version
		var bestLine Version
		found := false
		for _, v := range candidates {
			if !r.Allows(v) || (filter && keep != nil && !keep(v)) {
				continue
			}
			l := line(v)
			switch {
			case !found, l.Compare(bestLine) < 0:
				best, bestLine, found = v, l, true
			case l == bestLine && v.Compare(best) > 0:
				best = v
			}
		}
		return best, found
	}
	if v, ok := pick(true); ok {
		return v, true
	}
	return pick(false)
}

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
	v, n, err := ParsePartial(s)
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
func ParsePartial(s string) (Version, int, error) {
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

// Bound is one bound of a [Range]: Op is one of >=, >, <, <=, ==, !=
// against V, or "out", which excludes the versions in [V, Hi). The
// languages parse their version syntax (lang/node's npm ranges,
// lang/python's PEP 440 specifiers) into bounds.
type Bound struct {
	Op    string
	V, Hi Version
}

func (c Bound) allows(v Version) bool {
	d := v.Compare(c.V)
	switch c.Op {
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
		return d < 0 || v.Compare(c.Hi) >= 0
	}
	return false
}

// Range is a set of versions: any of its alternatives, each of which
// holds when all of its bounds hold. The zero Range allows every version.
type Range struct{ alts [][]Bound }

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
func AtLeast(v Version) Range { return AnyOf([]Bound{{Op: ">=", V: v}}) }

// AnyOf is the range of the versions that satisfy every bound of one of
// alts; with no alternatives, every version.
func AnyOf(alts ...[]Bound) Range { return Range{alts: alts} }

// Series turns a partial version of n numbers (ParsePartial) into
// bounds: "20" is >=20.0.0 <21.0.0, "3.11" is >=3.11.0 <3.12.0, a whole
// version is itself; none for n = 0.
func Series(v Version, n int) []Bound {
	switch n {
	case 0:
		return nil
	case 1:
		return []Bound{{Op: ">=", V: v}, {Op: "<", V: Version{v.Major + 1, 0, 0}}}
	case 2:
		return []Bound{{Op: ">=", V: v}, {Op: "<", V: Version{v.Major, v.Minor + 1, 0}}}
	}
	return []Bound{{Op: "==", V: v}}
}

// After returns the first version after every version that the partial
// version v of n numbers names.
func After(v Version, n int) Version {
	switch n {
	case 1:
		return Version{v.Major + 1, 0, 0}
	case 2:
		return Version{v.Major, v.Minor + 1, 0}
	}
	return Version{v.Major, v.Minor, v.Patch + 1}
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

package python

import (
	"path"
	"regexp"
	"strings"
)

// The sandbox's platform as a Python program sees it.
const (
	sysPlatform    = "linux" // sys.platform
	osName         = "posix" // os.name
	platformSystem = "Linux" // platform.system()
)

var (
	pyPlatCmp    = regexp.MustCompile(`^(sys\.platform|os\.name|platform\.system\(\))\s*(==|!=)\s*['"]([\w.-]*)['"]$`)
	pyPlatIn     = regexp.MustCompile(`^(sys\.platform|os\.name|platform\.system\(\))\s+(not\s+in|in)\s*[\(\[{](.*)[\)\]}]$`)
	pyPlatStarts = regexp.MustCompile(`^sys\.platform\.startswith\(\s*['"]([\w.-]*)['"]\s*\)$`)
	pyIfClause   = regexp.MustCompile(`^(\s*)(if|elif)\s+(.+?):\s*(?:#.*)?$`)
	pyElse       = regexp.MustCompile(`^(\s*)else\s*:\s*(?:#.*)?$`)
	pyAlias      = regexp.MustCompile(`^([A-Za-z_]\w*)\s*=\s*(.+?)\s*(?:#.*)?$`)
)

// platformValue is what expression e is on the sandbox's platform; ok is
// false when e is not a platform test this knows (aliases: module-level
// names bound to one, WINDOWS = sys.platform == "win32").
func platformValue(e string, aliases map[string]bool) (val, ok bool) {
	e = strings.TrimSpace(e)
	for strings.HasPrefix(e, "(") && strings.HasSuffix(e, ")") {
		e = strings.TrimSpace(e[1 : len(e)-1])
	}
	if rest, found := strings.CutPrefix(e, "not "); found {
		v, ok := platformValue(rest, aliases)
		return !v, ok
	}
	if v, found := aliases[e]; found {
		return v, true
	}
	of := func(subject string) string {
		switch subject {
		case "sys.platform":
			return sysPlatform
		case "os.name":
			return osName
		}
		return platformSystem
	}
	if m := pyPlatCmp.FindStringSubmatch(e); m != nil {
		eq := of(m[1]) == m[3]
		return eq == (m[2] == "=="), true
	}
	if m := pyPlatIn.FindStringSubmatch(e); m != nil {
		in := false
		for _, item := range strings.Split(m[3], ",") {
			if strings.Trim(strings.TrimSpace(item), `'"`) == of(m[1]) {
				in = true
			}
		}
		return in == (m[2] == "in"), true
	}
	if m := pyPlatStarts.FindStringSubmatch(e); m != nil {
		return strings.HasPrefix(sysPlatform, m[1]), true
	}
	return false, false
}

// OtherPlatformLines returns the branches of a Python module's platform
// tests (if sys.platform == "win32": … else: …, os.name, platform.system(),
// and module-level names bound to such a test) that linux does not take.
func (Language) OtherPlatformLines(p string, data []byte) [][2]int {
	if path.Ext(p) != ".py" {
		return nil
	}
	ls := strings.Split(string(data), "\n")
	aliases := map[string]bool{}
	for _, l := range ls {
		if m := pyAlias.FindStringSubmatch(l); m != nil {
			if v, ok := platformValue(m[2], aliases); ok {
				aliases[m[1]] = v
			}
		}
	}
	// bodyEnd is the last line (0-based) of the block opened at line i.
	bodyEnd := func(i int) int {
		ind := indentOf(ls[i])
		end := i
		for j := i + 1; j < len(ls); j++ {
			t := strings.TrimSpace(ls[j])
			if t == "" || strings.HasPrefix(t, "#") {
				continue
			}
			if indentOf(ls[j]) <= ind {
				break
			}
			end = j
		}
		return end
	}
	out := [][2]int{}
	for i := 0; i < len(ls); i++ {
		m := pyIfClause.FindStringSubmatch(ls[i])
		if m == nil || m[2] != "if" {
			continue
		}
		ind := m[1]
		// The chain: if, elif…, else at the same indentation.
		type clause struct {
			from, to  int
			val, know bool
		}
		var chain []clause
		j := i
		for {
			end := bodyEnd(j)
			c := clause{from: j, to: end, know: true, val: true}
			if cm := pyIfClause.FindStringSubmatch(ls[j]); cm != nil {
				c.val, c.know = platformValue(cm[3], aliases)
			}
			chain = append(chain, c)
			k := end + 1
			for k < len(ls) && strings.TrimSpace(ls[k]) == "" {
				k++
			}
			if k >= len(ls) {
				break
			}
			if cm := pyIfClause.FindStringSubmatch(ls[k]); cm != nil && cm[1] == ind && cm[2] == "elif" {
				j = k
				continue
			}
			if em := pyElse.FindStringSubmatch(ls[k]); em != nil && em[1] == ind {
				j = k
				continue
			}
			break
		}
		taken := -1
		for ci, c := range chain {
			if !c.know {
				taken = -2
				break
			}
			if c.val {
				taken = ci
				break
			}
		}
		if taken == -2 || (len(chain) == 1 && !chain[0].know) {
			continue
		}
		for ci, c := range chain {
			if ci != taken {
				out = append(out, [2]int{c.from + 1, c.to + 1})
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " \t")) }

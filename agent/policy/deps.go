package policy

import (
	"encoding/json"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/sandbox"
)

// Dep is a dependency an edit adds.
type Dep struct {
	Ecosystem string `json:"ecosystem"` // go, python, npm
	Name      string `json:"name"`
	File      string `json:"file"` // manifest that declares it
}

func (d Dep) String() string { return d.Ecosystem + ":" + d.Name }

// DepsAdded lists dependencies declared in after's manifests (go.mod,
// requirements*.txt, pyproject.toml, package.json) that before did not
// declare. The sandbox has no network, so each one needs approval.
func DepsAdded(before, after *sandbox.Snapshot) []Dep {
	old := map[string]bool{}
	for _, d := range manifestDeps(before) {
		old[d.String()] = true
	}
	var out []Dep
	for _, d := range manifestDeps(after) {
		if !old[d.String()] {
			old[d.String()] = true
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].String() < out[j].String() })
	return out
}

// Allowed splits deps into those on the allow-list (exact "name" or
// "ecosystem:name") and the rest.
func Allowed(deps []Dep, allow []string) (ok, need []Dep) {
	set := map[string]bool{}
	for _, a := range allow {
		set[a] = true
	}
	for _, d := range deps {
		if set[d.Name] || set[d.String()] {
			ok = append(ok, d)
		} else {
			need = append(need, d)
		}
	}
	return ok, need
}

var (
	goRequireRe  = regexp.MustCompile(`(?m)^\s*(?:require\s+)?([A-Za-z0-9][\w.\-/]*\.[\w.\-/]+)\s+v[\w.\-+]+`)
	pyReqRe      = regexp.MustCompile(`^\s*([A-Za-z0-9][A-Za-z0-9._\-]*)`)
	pyprojDepsRe = regexp.MustCompile(`(?s)\bdependencies\s*=\s*\[(.*?)\]`)
	pyStringRe   = regexp.MustCompile(`["']([A-Za-z0-9][A-Za-z0-9._\-]*)`)
)

func manifestDeps(s *sandbox.Snapshot) []Dep {
	if s == nil {
		return nil
	}
	var out []Dep
	for p := range s.Files {
		base := path.Base(p)
		switch {
		case base == "go.mod", base == "pyproject.toml", base == "package.json",
			strings.HasPrefix(base, "requirements") && strings.HasSuffix(base, ".txt"):
		default:
			continue // read only the manifests: contents stay on disk
		}
		text, _ := s.Text(p)
		switch {
		case base == "go.mod":
			for _, m := range goRequireRe.FindAllStringSubmatch(text, -1) {
				if !strings.HasPrefix(strings.TrimSpace(m[0]), "module") {
					out = append(out, Dep{"go", m[1], p})
				}
			}
		case strings.HasPrefix(base, "requirements") && strings.HasSuffix(base, ".txt"):
			for _, line := range strings.Split(text, "\n") {
				line = strings.TrimSpace(line)
				if line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, "-") {
					continue
				}
				if m := pyReqRe.FindStringSubmatch(line); m != nil {
					out = append(out, Dep{"python", strings.ToLower(m[1]), p})
				}
			}
		case base == "pyproject.toml":
			for _, block := range pyprojDepsRe.FindAllStringSubmatch(text, -1) {
				for _, m := range pyStringRe.FindAllStringSubmatch(block[1], -1) {
					out = append(out, Dep{"python", strings.ToLower(m[1]), p})
				}
			}
		case base == "package.json":
			var pj map[string]json.RawMessage
			if json.Unmarshal([]byte(text), &pj) != nil {
				continue
			}
			for _, key := range []string{"dependencies", "devDependencies", "optionalDependencies", "peerDependencies"} {
				var deps map[string]string
				if json.Unmarshal(pj[key], &deps) == nil {
					for name := range deps {
						out = append(out, Dep{"npm", name, p})
					}
				}
			}
		}
	}
	return out
}

package python

import (
	"bytes"
	"fmt"
	"path"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
	"github.com/fixpoint-dev/fixpoint/sandbox"
	"github.com/pelletier/go-toml/v2"
)

var (
	// plainReqRe is a requirement line pip resolves from the index by name
	// alone: name, extras, version specifiers, an environment marker and
	// --hash options. Anything else (-e, -r, -c, index and find-links
	// options, --config-settings, paths, URLs, VCS, name @ url) is not.
	plainReqRe = regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[A-Za-z0-9._,\s-]*\])?\s*((?:(?:===|==|~=|!=|<=|>=|<|>)\s*[A-Za-z0-9.*+!_-]+\s*,?\s*)*)(;(?:\s*[^@\s$-][^@\s$]*)*)?((?:\s+--hash[=\s]\S+)*)$`)
	reqRefRe   = regexp.MustCompile(`^(?:-r|-c|--requirement|--constraint)[=\s]\s*(\S+)`)
	pyStrRe    = regexp.MustCompile(`["']([A-Za-z0-9_./-]+\.py)["']`)
	cfgSection = regexp.MustCompile(`(?m)^\s*\[([^\]]+)\]\s*$`)
)

// toolSafe are [tool.*] tables of pyproject.toml (and setup.cfg
// sections) read by linters and test runners only, never by pip or a
// build backend. pytest's are test infrastructure (TestInfra), not setup.
var toolSafe = []string{"pytest", "ruff", "black", "isort", "mypy", "coverage", "pylint", "pyright", "codespell",
	"flake8", "pycodestyle", "pydocstyle", "tool:pytest"}

// SetupChanges: requirement lines that are not a plain name and version,
// changed version specs, setup.py and the workspace code it imports,
// setup.cfg and pyproject.toml outside linter and test-runner tables,
// in-tree build backends and *.pth files.
func (Language) SetupChanges(before, after *sandbox.Snapshot, changed []string) []lang.SetupChange {
	reqs := reqFiles(after)
	build := buildCode(after)
	for p := range buildCode(before) {
		build[p] = true
	}
	var out []lang.SetupChange
	for _, p := range changed {
		old, hadOld := lang.FileBytes(before, p)
		cur, ok := lang.FileBytes(after, p)
		if !ok || hadOld && bytes.Equal(old, cur) {
			continue // deleted or unchanged
		}
		base := path.Base(p)
		switch {
		case reqFile.MatchString(base) || reqs[p]:
			out = append(out, requirementChanges(p, "", old, cur)...)
		case base == "setup.py":
			out = append(out, lang.SetupChange{File: p, What: "changes setup.py, which pip runs when it installs the project"})
		case base == "setup.cfg":
			if s := changedSections(cfgSections(old), cfgSections(cur)); s != "" {
				out = append(out, lang.SetupChange{File: p, What: "changes " + s + ", which pip's build reads"})
			}
		case base == "pyproject.toml":
			out = append(out, pyprojectChanges(p, old, cur)...)
		case strings.HasSuffix(base, ".pth"):
			out = append(out, lang.SetupChange{File: p, What: "adds or changes a .pth file, whose import lines Python runs at every start once it is installed"})
		case build[p]:
			out = append(out, lang.SetupChange{File: p, What: "changes code the build (setup.py or an in-tree build backend) imports while pip installs the project"})
		}
	}
	return out
}

// reqFiles are the files root requirements files include with -r or -c,
// transitively: they are requirement files whatever their name.
func reqFiles(s *sandbox.Snapshot) map[string]bool {
	out := map[string]bool{}
	if s == nil {
		return out
	}
	var queue []string
	for p := range s.Files {
		if reqFile.MatchString(path.Base(p)) {
			queue = append(queue, p)
		}
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		data, _ := lang.FileBytes(s, p)
		for _, line := range reqLines(data) {
			if m := reqRefRe.FindStringSubmatch(line); m != nil {
				ref := path.Clean(path.Join(path.Dir(p), m[1]))
				if !out[ref] {
					out[ref] = true
					queue = append(queue, ref)
				}
			}
		}
	}
	return out
}

// reqLines are a requirements file's logical lines: continuations joined,
// comments and blank lines dropped.
func reqLines(data []byte) []string {
	text := strings.ReplaceAll(strings.ReplaceAll(string(data), "\r\n", "\n"), "\\\n", " ")
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if i := strings.Index(l, " #"); i >= 0 {
			l = l[:i]
		}
		if strings.HasPrefix(strings.TrimSpace(l), "#") {
			continue
		}
		if l = strings.Join(strings.Fields(l), " "); l != "" {
			out = append(out, l)
		}
	}
	return out
}

// requirementChanges lists the lines of cur that change what pip
// fetches or runs compared with old; where prefixes each description.
func requirementChanges(p, where string, old, cur []byte) []lang.SetupChange {
	had, specs := map[string]bool{}, map[string]string{}
	for _, l := range reqLines(old) {
		had[l] = true
		if m := plainReqRe.FindStringSubmatch(l); m != nil {
			specs[normName(m[1])] = l
		}
	}
	var out []lang.SetupChange
	for _, l := range reqLines(cur) {
		if had[l] {
			continue
		}
		m := plainReqRe.FindStringSubmatch(l)
		switch {
		case m == nil:
			out = append(out, lang.SetupChange{File: p, What: where + "adds the line " + lang.QuoteSetup(l) + " (not a plain name and version: pip follows it to an index, a path, a URL or a VCS, and may run its build)"})
		case specs[normName(m[1])] != "":
			out = append(out, lang.SetupChange{File: p, What: where + fmt.Sprintf("changes %s to %s", lang.QuoteSetup(specs[normName(m[1])]), lang.QuoteSetup(l))})
		}
	}
	return out
}

// normName is a distribution name as pip compares it (PEP 503).
func normName(n string) string {
	return strings.ToLower(strings.NewReplacer("_", "-", ".", "-").Replace(n))
}

// pyprojectChanges compares pyproject.toml's tables other than those of
// linters and test runners. [project] dependencies only count when an
// entry is not plain or changes the spec of one already there: a new
// plain name is a new dependency ([Language.Deps], the allow-list).
func pyprojectChanges(p string, old, cur []byte) []lang.SetupChange {
	var o, n map[string]any
	if toml.Unmarshal(cur, &n) != nil {
		return []lang.SetupChange{{File: p, What: "does not parse as TOML, so fixpoint cannot tell what pip's build would run"}}
	}
	if toml.Unmarshal(old, &o) != nil {
		o = map[string]any{}
	}
	var out []lang.SetupChange
	add := func(what string) { out = append(out, lang.SetupChange{File: p, What: what}) }
	keys := map[string]bool{}
	for k := range n {
		keys[k] = true
	}
	for _, k := range sortedAny(keys) {
		switch k {
		case "tool":
			ot, _ := o[k].(map[string]any)
			nt, _ := n[k].(map[string]any)
			for _, tk := range sortedMapKeys(nt) {
				if !isToolSafe(tk) && !reflect.DeepEqual(ot[tk], nt[tk]) {
					add("changes [tool." + tk + "], which a build backend may read")
				}
			}
		case "project":
			op, _ := o[k].(map[string]any)
			np, _ := n[k].(map[string]any)
			for _, pk := range sortedMapKeys(np) {
				if reflect.DeepEqual(op[pk], np[pk]) {
					continue
				}
				switch pk {
				case "dependencies":
					out = append(out, requirementChanges(p, "[project] dependencies: ", tomlLines(op[pk]), tomlLines(np[pk]))...)
				case "optional-dependencies":
					oo, _ := op[pk].(map[string]any)
					no, _ := np[pk].(map[string]any)
					for _, e := range sortedMapKeys(no) {
						out = append(out, requirementChanges(p, "[project.optional-dependencies] "+e+": ", tomlLines(oo[e]), tomlLines(no[e]))...)
					}
				case "dynamic":
					add("changes [project] dynamic, which the build backend computes by running project code")
				}
			}
		default:
			if !reflect.DeepEqual(o[k], n[k]) {
				add("changes [" + k + "], which pip's build reads (the build backend and its requirements)")
			}
		}
	}
	return out
}

// tomlLines renders a TOML array of requirement strings as lines.
func tomlLines(v any) []byte {
	arr, _ := v.([]any)
	var b bytes.Buffer
	for _, e := range arr {
		fmt.Fprintf(&b, "%v\n", e)
	}
	return b.Bytes()
}

func isToolSafe(name string) bool {
	for _, s := range toolSafe {
		if name == s || strings.HasPrefix(name, s+".") {
			return true
		}
	}
	return false
}

// cfgSections splits setup.cfg text into sections, dropping those of
// linters and test runners.
func cfgSections(data []byte) map[string]string {
	out := map[string]string{}
	text := string(data)
	idx := cfgSection.FindAllStringSubmatchIndex(text, -1)
	pre := len(text)
	if len(idx) > 0 {
		pre = idx[0][0]
	}
	out[""] = normCfg(text[:pre])
	for i, m := range idx {
		name := strings.TrimSpace(text[m[2]:m[3]])
		end := len(text)
		if i+1 < len(idx) {
			end = idx[i+1][0]
		}
		if isToolSafe(name) || strings.HasPrefix(name, "coverage:") {
			continue
		}
		out[name] += normCfg(text[m[1]:end])
	}
	return out
}

// normCfg drops comments and blank lines.
func normCfg(s string) string {
	var b strings.Builder
	for _, l := range strings.Split(s, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "#") || strings.HasPrefix(t, ";") {
			continue
		}
		b.WriteString(t + "\n")
	}
	return b.String()
}

// changedSections names the sections that differ ("" when none).
func changedSections(o, n map[string]string) string {
	var names []string
	for k, v := range n {
		if o[k] != v {
			if k == "" {
				k = "the lines before the first section"
			} else {
				k = "[" + k + "]"
			}
			names = append(names, k)
		}
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// buildCode are workspace files a build runs: what setup.py files
// import or name (an exec(open("pkg/_version.py").read())), and the
// modules of an in-tree build backend (pyproject's backend-path).
func buildCode(s *sandbox.Snapshot) map[string]bool {
	out := map[string]bool{}
	if s == nil {
		return out
	}
	var queue []string
	for p := range s.Files {
		if path.Base(p) == "setup.py" || path.Base(p) == "hatch_build.py" {
			queue = append(queue, p)
		}
	}
	if data, ok := lang.FileBytes(s, "pyproject.toml"); ok {
		var pp struct {
			Build struct {
				BackendPath []string `toml:"backend-path"`
			} `toml:"build-system"`
		}
		if toml.Unmarshal(data, &pp) == nil {
			for _, dir := range pp.Build.BackendPath {
				dir = path.Clean(dir)
				for p := range s.Files {
					if strings.HasSuffix(p, ".py") && (dir == "." && !strings.Contains(p, "/") || strings.HasPrefix(p, dir+"/")) {
						out[p] = true
					}
				}
			}
		}
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		files, _ := Language{}.LocalImports(s, p)
		text, _ := s.Text(p)
		for _, m := range pyStrRe.FindAllStringSubmatch(text, -1) {
			files = append(files, path.Clean(path.Join(path.Dir(p), m[1])))
		}
		for _, f := range files {
			if _, ok := s.Files[f]; ok && !out[f] {
				out[f] = true
				queue = append(queue, f)
			}
		}
	}
	return out
}

func sortedMapKeys(m map[string]any) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortedAny(m map[string]bool) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

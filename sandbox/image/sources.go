package image

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// DefaultMirror is used when the machine's apt sources name no Debian mirror.
const DefaultMirror = "http://deb.debian.org/debian"

// Source is one apt source: a base URI and its suites.
type Source struct {
	URI    string
	Suites []string
}

// ParseSourcesList parses the one-line format of /etc/apt/sources.list
// ("deb [opts] URI suite comp..."). deb-src lines and comments are skipped.
func ParseSourcesList(data []byte) []Source {
	var out []Source
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "deb" {
			continue
		}
		f = f[1:]
		if strings.HasPrefix(f[0], "[") {
			// Options end at the first field ending in "]".
			for len(f) > 0 && !strings.HasSuffix(f[0], "]") {
				f = f[1:]
			}
			if len(f) > 0 {
				f = f[1:]
			}
		}
		if len(f) < 2 {
			continue
		}
		out = append(out, Source{URI: f[0], Suites: []string{f[1]}})
	}
	return out
}

// ParseDeb822 parses the deb822 format of /etc/apt/sources.list.d/*.sources:
// paragraphs of "Key: value" fields separated by blank lines. Paragraphs
// whose Types lack "deb" or that say "Enabled: no" are skipped.
func ParseDeb822(data []byte) []Source {
	var out []Source
	for _, para := range paragraphs(data) {
		types := strings.Fields(para["types"])
		if !containsStr(types, "deb") || strings.EqualFold(para["enabled"], "no") {
			continue
		}
		suites := strings.Fields(para["suites"])
		for _, uri := range strings.Fields(para["uris"]) {
			out = append(out, Source{URI: uri, Suites: suites})
		}
	}
	return out
}

// paragraphs splits deb822 text into maps of lower-cased field names.
// Continuation lines (starting with a space) extend the previous field.
func paragraphs(data []byte) []map[string]string {
	var out []map[string]string
	cur := map[string]string{}
	var last string
	flush := func() {
		if len(cur) > 0 {
			out = append(out, cur)
		}
		cur, last = map[string]string{}, ""
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.TrimSpace(line) == "":
			flush()
		case strings.HasPrefix(line, "#"):
		case line[0] == ' ' || line[0] == '\t':
			if last != "" {
				cur[last] += " " + strings.TrimSpace(line)
			}
		default:
			k, v, ok := strings.Cut(line, ":")
			if !ok {
				continue
			}
			last = strings.ToLower(strings.TrimSpace(k))
			cur[last] = strings.TrimSpace(v)
		}
	}
	flush()
	return out
}

// MachineMirror returns the Debian mirror configured in the apt sources
// under root ("/" on a real machine): the first source whose suites include
// a plain release (no "-security", "-updates" or "-backports"). It returns
// DefaultMirror when none is found.
func MachineMirror(root string) string {
	var srcs []Source
	if data, err := os.ReadFile(filepath.Join(root, "etc/apt/sources.list")); err == nil {
		srcs = append(srcs, ParseSourcesList(data)...)
	}
	files, _ := filepath.Glob(filepath.Join(root, "etc/apt/sources.list.d/*.sources"))
	sort.Strings(files)
	for _, f := range files {
		if data, err := os.ReadFile(f); err == nil {
			srcs = append(srcs, ParseDeb822(data)...)
		}
	}
	lists, _ := filepath.Glob(filepath.Join(root, "etc/apt/sources.list.d/*.list"))
	sort.Strings(lists)
	for _, f := range lists {
		if data, err := os.ReadFile(f); err == nil {
			srcs = append(srcs, ParseSourcesList(data)...)
		}
	}
	return pickMirror(srcs)
}

func pickMirror(srcs []Source) string {
	for _, s := range srcs {
		if !strings.HasPrefix(s.URI, "http://") && !strings.HasPrefix(s.URI, "https://") && !strings.HasPrefix(s.URI, "file:") {
			continue
		}
		for _, suite := range s.Suites {
			if !strings.Contains(suite, "-") && !strings.Contains(suite, "/") {
				return strings.TrimRight(s.URI, "/")
			}
		}
	}
	return DefaultMirror
}

func containsStr(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

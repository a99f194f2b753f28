// Package editorgen writes the registered languages into the editor
// recipes under editors/: the VS Code extension's language ids, project
// markers and activation events, Helix's and Zed's language tables,
// Emacs's major modes and Neovim's root markers. Each language says what
// the editors call it ([lang.Editors]); [Generate] renders every recipe
// from the languages it is given, so adding a language folder (and its
// line in lang/registry) reaches every editor with `go generate ./editors`
// and no hand edit. editors' TestRecipesAreGenerated fails when a
// committed recipe differs from what Generate makes of it.
//
// In files that allow comments the generated lines sit between a
// [Begin] and an [End] marker comment, and everything outside them is
// left as it is. The two JSON files (package.json, Zed's settings.json)
// cannot carry comments: Generate rewrites the one array or object it
// owns there (activationEvents' language and marker events, keeping the
// command events; Zed's "languages").
//
// Entries that are fixpoint's own, not a language's, are added here:
// ".git" as a Neovim root marker, ".fixpoint.toml" as a VS Code project
// marker.
package editorgen

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/fixpoint-dev/fixpoint/lang"
)

// Marker comments around generated lines, after the file's comment token.
const (
	Begin = "BEGIN generated from lang/*/ (lang.Editors) by `go generate ./editors`: do not edit"
	End   = "END generated"
)

// recipe is one generated file: its path under editors/ and how its
// text is rewritten from the languages' names.
type recipe struct {
	path   string
	render func(src []byte, ns []lang.EditorNames) ([]byte, error)
}

var recipes = []recipe{
	{"vscode/src/languages.ts", vscodeLanguages},
	{"vscode/package.json", vscodeActivation},
	{"helix/languages.toml", helix},
	{"zed/settings.json", zedSettings},
	{"zed/extension/extension.toml", zedExtension},
	{"emacs/fixpoint.el", emacs},
	{"nvim/lua/fixpoint/init.lua", nvim},
}

// Paths lists the recipes Generate writes, relative to editors/.
func Paths() []string {
	out := make([]string, len(recipes))
	for i, r := range recipes {
		out[i] = r.path
	}
	return out
}

// Generate renders every recipe from langs (in that order; lang/registry's
// All): read(path) gives a recipe's committed text (path relative to
// editors/), and the result maps each path to its generated text. Every
// language must implement [lang.Editors].
func Generate(langs []lang.Language, read func(path string) ([]byte, error)) (map[string][]byte, error) {
	var ns []lang.EditorNames
	for _, l := range langs {
		e, ok := l.(lang.Editors)
		if !ok {
			return nil, fmt.Errorf("language %s does not implement lang.Editors: add an EditorNames method in its folder", l.Name())
		}
		ns = append(ns, e.EditorNames())
	}
	out := map[string][]byte{}
	for _, r := range recipes {
		src, err := read(r.path)
		if err != nil {
			return nil, err
		}
		b, err := r.render(src, ns)
		if err != nil {
			return nil, fmt.Errorf("editors/%s: %w", r.path, err)
		}
		out[r.path] = b
	}
	return out, nil
}

func collect(ns []lang.EditorNames, f func(lang.EditorNames) []string) []string {
	var out []string
	for _, n := range ns {
		for _, s := range f(n) {
			if !contains(out, s) {
				out = append(out, s)
			}
		}
	}
	return out
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func vscodeMarkers(ns []lang.EditorNames) []string {
	m := collect(ns, func(n lang.EditorNames) []string {
		return append(append([]string(nil), n.RootMarkers...), n.ProjectFiles...)
	})
	return append(m, ".fixpoint.toml")
}

func quoteAll(list []string, q string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = q + s + q
	}
	return out
}

// replaceRegion replaces the lines between the marker comments (comment
// is the file's comment token) with body, which ends in a newline.
func replaceRegion(src []byte, comment, body string) ([]byte, error) {
	lines := strings.SplitAfter(string(src), "\n")
	b, e := -1, -1
	for i, l := range lines {
		t := strings.TrimSpace(l)
		switch {
		case t == comment+" "+Begin:
			if b >= 0 {
				return nil, fmt.Errorf("two %q lines", comment+" "+Begin)
			}
			b = i
		case t == comment+" "+End && b >= 0 && e < 0:
			e = i
		}
	}
	if b < 0 || e < 0 {
		return nil, fmt.Errorf("no %q ... %q lines around the language list; put them back", comment+" "+Begin, comment+" "+End)
	}
	var sb strings.Builder
	sb.WriteString(strings.Join(lines[:b+1], ""))
	sb.WriteString(body)
	sb.WriteString(strings.Join(lines[e:], ""))
	return []byte(sb.String()), nil
}

func vscodeLanguages(src []byte, ns []lang.EditorNames) ([]byte, error) {
	var sb strings.Builder
	sb.WriteString("/** VS Code language ids of the files the server is sent (file scheme only). */\n")
	fmt.Fprintf(&sb, "export const LANGUAGES = [%s] as const;\n\n", strings.Join(quoteAll(collect(ns, func(n lang.EditorNames) []string { return n.VSCode }), "'"), ", "))
	sb.WriteString("/** Files at a workspace folder's root that mark a project fixpoint can test. */\n")
	sb.WriteString("export const PROJECT_MARKERS = [\n")
	for _, m := range vscodeMarkers(ns) {
		fmt.Fprintf(&sb, "  '%s',\n", m)
	}
	sb.WriteString("] as const;\n")
	return replaceRegion(src, "//", sb.String())
}

func helix(src []byte, ns []lang.EditorNames) ([]byte, error) {
	var blocks []string
	for _, n := range ns {
		for _, name := range n.Helix {
			servers := `"fixpoint"`
			if n.HelixServer != "" {
				servers = fmt.Sprintf("%q, %s", n.HelixServer, servers)
			}
			blocks = append(blocks, fmt.Sprintf("[[language]]\nname = %q\nlanguage-servers = [%s]\n", name, servers))
		}
	}
	return replaceRegion(src, "#", strings.Join(blocks, "\n"))
}

func zedExtension(src []byte, ns []lang.EditorNames) ([]byte, error) {
	names := collect(ns, func(n lang.EditorNames) []string { return n.Zed })
	return replaceRegion(src, "#", fmt.Sprintf("languages = [%s]\n", strings.Join(quoteAll(names, `"`), ", ")))
}

func emacs(src []byte, ns []lang.EditorNames) ([]byte, error) {
	modes := collect(ns, func(n lang.EditorNames) []string { return n.Emacs })
	var sb strings.Builder
	line := "  '("
	for i, m := range modes {
		if i > 0 {
			if len(line)+1+len(m) > 72 {
				sb.WriteString(line + "\n")
				line = "    "
			} else {
				line += " "
			}
		}
		line += m
	}
	sb.WriteString(line + ")\n")
	return replaceRegion(src, ";;", sb.String())
}

func nvim(src []byte, ns []lang.EditorNames) ([]byte, error) {
	markers := append([]string{".git"}, collect(ns, func(n lang.EditorNames) []string { return n.RootMarkers })...)
	return replaceRegion(src, "--", fmt.Sprintf("local ROOT_MARKERS = { %s }\n", strings.Join(quoteAll(markers, `"`), ", ")))
}

// jsonSpan finds the lines of the array or object that the line starting
// (after its indentation) with key opens: open is that line's index,
// close the index of the line that closes it at the same indentation.
func jsonSpan(lines []string, key string) (open, close int, indent string, err error) {
	open = -1
	for i, l := range lines {
		if strings.HasPrefix(strings.TrimLeft(l, " "), key) {
			open = i
			indent = l[:len(l)-len(strings.TrimLeft(l, " "))]
			break
		}
	}
	if open < 0 {
		return 0, 0, "", fmt.Errorf("no line starting %s", key)
	}
	for i := open + 1; i < len(lines); i++ {
		t := strings.TrimRight(lines[i], "\n")
		if strings.HasPrefix(t, indent) && len(t) > len(indent) && (t[len(indent)] == ']' || t[len(indent)] == '}') {
			return open, i, indent, nil
		}
	}
	return 0, 0, "", fmt.Errorf("%s is not closed at its indentation", key)
}

// jsonItems joins items (each a JSON value's text) into lines at indent,
// with commas between.
func jsonItems(items []string, indent string) string {
	var sb strings.Builder
	for i, it := range items {
		sb.WriteString(indent + it)
		if i < len(items)-1 {
			sb.WriteString(",")
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

func spliceJSON(src []byte, key string, items func(inner []string, indent string) []string) ([]byte, error) {
	lines := strings.SplitAfter(string(src), "\n")
	open, close, indent, err := jsonSpan(lines, key)
	if err != nil {
		return nil, err
	}
	in := indent + "  "
	body := jsonItems(items(lines[open+1:close], in), in)
	var buf bytes.Buffer
	buf.WriteString(strings.Join(lines[:open+1], ""))
	buf.WriteString(body)
	buf.WriteString(strings.Join(lines[close:], ""))
	return buf.Bytes(), nil
}

// vscodeActivation rewrites package.json's activationEvents: one
// onLanguage event per language id, one workspaceContains event per
// project marker, then the events it does not own (onCommand), kept.
func vscodeActivation(src []byte, ns []lang.EditorNames) ([]byte, error) {
	return spliceJSON(src, `"activationEvents": [`, func(inner []string, _ string) []string {
		var items []string
		for _, id := range collect(ns, func(n lang.EditorNames) []string { return n.VSCode }) {
			items = append(items, fmt.Sprintf(`"onLanguage:%s"`, id))
		}
		for _, m := range vscodeMarkers(ns) {
			items = append(items, fmt.Sprintf(`"workspaceContains:%s"`, m))
		}
		for _, l := range inner {
			t := strings.TrimSuffix(strings.TrimSpace(l), ",")
			if t == "" || strings.HasPrefix(t, `"onLanguage:`) || strings.HasPrefix(t, `"workspaceContains:`) {
				continue
			}
			items = append(items, t)
		}
		return items
	})
}

// zedSettings rewrites settings.json's "languages" object: each language
// with its usual server first, then fixpoint.
func zedSettings(src []byte, ns []lang.EditorNames) ([]byte, error) {
	return spliceJSON(src, `"languages": {`, func(_ []string, indent string) []string {
		var items []string
		for _, n := range ns {
			for _, name := range n.Zed {
				servers := `"fixpoint"`
				if n.ZedServer != "" {
					servers = fmt.Sprintf("%q, %s", n.ZedServer, servers)
				}
				items = append(items, fmt.Sprintf("%q: {\n%s  \"language_servers\": [%s]\n%s}", name, indent, servers, indent))
			}
		}
		return items
	})
}

package sandbox

import (
	"strings"
	"testing"
)

func TestIgnoreMatch(t *testing.T) {
	type file struct{ dir, text string }
	tests := []struct {
		name  string
		files []file
		path  string
		dir   bool // path is a directory (Match) instead of a file under Ignored
		want  bool
	}{
		{name: "basename anywhere", files: []file{{"", "*.log\n"}}, path: "a/b/c.log", want: true},
		{name: "basename no match", files: []file{{"", "*.log\n"}}, path: "a/b/c.go", want: false},
		{name: "star not slash", files: []file{{"", "a/*.go\n"}}, path: "a/b/c.go", want: false},
		{name: "anchored slash middle", files: []file{{"", "doc/frotz\n"}}, path: "doc/frotz", want: true},
		{name: "anchored not deeper", files: []file{{"", "doc/frotz\n"}}, path: "a/doc/frotz", want: false},
		{name: "leading slash root only", files: []file{{"", "/root.txt\n"}}, path: "x/root.txt", want: false},
		{name: "leading slash at root", files: []file{{"", "/root.txt\n"}}, path: "root.txt", want: true},
		{name: "dir pattern ignores contents", files: []file{{"", "build/\n"}}, path: "build/out/x.o", want: true},
		{name: "dir pattern not a file", files: []file{{"", "build/\n"}}, path: "build", want: false},
		{name: "dir pattern nested", files: []file{{"", "build/\n"}}, path: "a/build/x", want: true},
		{name: "negation", files: []file{{"", "*.log\n!keep.log\n"}}, path: "keep.log", want: false},
		{name: "negation order matters", files: []file{{"", "!keep.log\n*.log\n"}}, path: "keep.log", want: true},
		{name: "no re-include under excluded dir", files: []file{{"", "logs/\n!logs/keep.log\n"}}, path: "logs/keep.log", want: true},
		{name: "re-include with dir contents pattern", files: []file{{"", "logs/*\n!logs/keep.log\n"}}, path: "logs/keep.log", want: false},
		{name: "leading double star", files: []file{{"", "**/foo\n"}}, path: "a/b/foo", want: true},
		{name: "leading double star top", files: []file{{"", "**/foo\n"}}, path: "foo", want: true},
		{name: "double star dir then name", files: []file{{"", "**/foo/bar\n"}}, path: "x/foo/bar", want: true},
		{name: "trailing double star", files: []file{{"", "abc/**\n"}}, path: "abc/d/e", want: true},
		{name: "trailing double star not itself", files: []file{{"", "abc/**\n"}}, path: "abc", dir: true, want: false},
		{name: "middle double star zero dirs", files: []file{{"", "a/**/b\n"}}, path: "a/b", want: true},
		{name: "middle double star many dirs", files: []file{{"", "a/**/b\n"}}, path: "a/x/y/b", want: true},
		{name: "middle double star anchored", files: []file{{"", "a/**/b\n"}}, path: "z/a/x/b", want: false},
		{name: "question mark", files: []file{{"", "?.txt\n"}}, path: "a.txt", want: true},
		{name: "question mark one char", files: []file{{"", "?.txt\n"}}, path: "ab.txt", want: false},
		{name: "class", files: []file{{"", "*.[oa]\n"}}, path: "x.a", want: true},
		{name: "negated class bang", files: []file{{"", "x[!0-9]\n"}}, path: "x5", want: false},
		{name: "negated class caret", files: []file{{"", "x[^0-9]\n"}}, path: "xa", want: true},
		{name: "range", files: []file{{"", "v[0-9].txt\n"}}, path: "v7.txt", want: true},
		{name: "escaped bang", files: []file{{"", "\\!important\n"}}, path: "!important", want: true},
		{name: "escaped hash", files: []file{{"", "\\#x\n"}}, path: "#x", want: true},
		{name: "comment", files: []file{{"", "#x\n"}}, path: "#x", want: false},
		{name: "trailing spaces trimmed", files: []file{{"", "a.txt   \n"}}, path: "a.txt", want: true},
		{name: "escaped trailing space kept", files: []file{{"", "a\\ \n"}}, path: "a ", want: true},
		{name: "crlf", files: []file{{"", "a.txt\r\n"}}, path: "a.txt", want: true},
		{name: "nested file scoped", files: []file{{"sub", "*.gen\n"}}, path: "other/x.gen", want: false},
		{name: "nested file applies below", files: []file{{"sub", "*.gen\n"}}, path: "sub/a/x.gen", want: true},
		{name: "nested anchored relative to its dir", files: []file{{"sub", "/only\n"}}, path: "sub/only", want: true},
		{name: "nested anchored not deeper", files: []file{{"sub", "/only\n"}}, path: "sub/a/only", want: false},
		{name: "deeper overrides", files: []file{{"", "*.gen\n"}, {"sub", "!keep.gen\n"}}, path: "sub/keep.gen", want: false},
		{name: "literal vs glob char in name", files: []file{{"", "a[b\n"}}, path: "a[b", want: true},
		{name: "empty file", files: []file{{"", "\n\n"}}, path: "x", want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ig := &Ignore{}
			for _, f := range tt.files {
				ig.AddPatterns(f.dir, f.text)
			}
			var got bool
			if tt.dir {
				got = ig.Match(tt.path, true)
			} else {
				got = ig.Ignored(tt.path)
			}
			if got != tt.want {
				t.Errorf("rules %q: ignored(%q) = %v, want %v", tt.files, tt.path, got, tt.want)
			}
		})
	}
}

func TestIgnorePrefix(t *testing.T) {
	// A workspace at sub/ws of its repository: rules are repository-relative.
	ig := &Ignore{prefix: "sub/ws"}
	ig.AddPatterns("", "/sub/ws/gen/\n")
	ig.AddPatterns("sub", "*.tmp\n")
	for path, want := range map[string]bool{"gen/x.go": true, "a.tmp": true, "main.go": false} {
		if got := ig.Ignored(path); got != want {
			t.Errorf("Ignored(%q) = %v, want %v", path, got, want)
		}
	}
}

func FuzzWildmatch(f *testing.F) {
	for _, s := range []string{"*.go", "a/**/b", "[!a-z]x", "\\", "[", "**", "a/**"} {
		f.Add(s, "a/b/c.go")
	}
	f.Fuzz(func(t *testing.T, pat, s string) {
		got := wildmatch(pat, s) // must not panic or loop
		if !strings.ContainsAny(pat, `*?[\`) && got != (pat == s) {
			t.Errorf("wildmatch(%q, %q) = %v, want %v (a pattern without wildcards matches only itself)", pat, s, got, pat == s)
		}
		ig := &Ignore{}
		ig.AddPatterns("", pat)
		ig.Ignored(s)
	})
}

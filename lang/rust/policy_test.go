package rust

import (
	"strings"
	"testing"
)

func TestCheck(t *testing.T) {
	tests := []struct {
		name string
		src  string
		want []string // "rule:line", in order
	}{
		{name: "clean", src: "pub fn add(a: i32, b: i32) -> i32 {\n    a + b\n}\n"},
		{name: "unsafe block", src: "fn f(p: *const u8) -> u8 {\n    unsafe { *p }\n}\n", want: []string{"rust.unsafe:2"}},
		{name: "unsafe fn and extern", src: "extern \"C\" {\n    fn getpid() -> i32;\n}\npub unsafe fn g() {}\n", want: []string{"rust.unsafe:1", "rust.unsafe:4"}},
		{name: "link attribute", src: "#[link(name = \"c\")]\nextern {}\n", want: []string{"rust.unsafe:1", "rust.unsafe:2"}},
		{name: "command", src: "use std::process::Command;\nfn f() {\n    Command::new(\"sh\").status().unwrap();\n}\n", want: []string{"rust.process:1"}},
		{name: "command in braces", src: "use std::process::{exit, Command};\n", want: []string{"rust.process:1"}},
		{name: "exit by path", src: "fn f() {\n    std::process::exit(0);\n}\n", want: []string{"rust.process:2"}},
		{name: "net", src: "use std::net::TcpStream;\nfn f() {\n    let _ = TcpStream::connect(\"10.0.0.1:80\");\n}\n", want: []string{"rust.net:1", "rust.net:3"}},
		{name: "net in a use list", src: "use std::{io, net};\n", want: []string{"rust.net:1"}},
		{name: "remove outside", src: "fn f() {\n    std::fs::remove_dir_all(\"/home\").ok();\n    std::fs::remove_dir_all(\"target/tmp\").ok();\n}\n", want: []string{"rust.remove-dir-all:2"}},
		{name: "include outside", src: "const S: &str = include_str!(\"/etc/passwd\");\nconst T: &str = include_str!(\"data.txt\");\n", want: []string{"rust.include-outside:1"}},
		{name: "assert shadowed", src: "macro_rules! assert_eq {\n    ($a:expr, $b:expr) => {};\n}\n", want: []string{"rust.assert-tamper:1"}},
		// Mentions in comments and strings are not code.
		{name: "comments and strings", src: "// std::process::Command\n/* unsafe { /* nested */ std::net } */\nconst S: &str = \"unsafe { TcpStream:: }\";\nconst R: &str = r#\"std::process::exit \"quoted\"\"#;\nfn f<'a>(x: &'a str) -> char { let _ = '\"'; 'x' }\n", want: nil},
		{name: "path in a string is not a call", src: "const S: &str = \"remove_dir_all(\\\"/home\\\")\";\n", want: nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var got []string
			for _, f := range Check([]byte(tc.src)) {
				got = append(got, f.Rule+":"+itoa(f.Line))
				if f.Message == "" {
					t.Errorf("finding %s has no message", f.Rule)
				}
			}
			if strings.Join(got, " ") != strings.Join(tc.want, " ") {
				t.Errorf("Check(%q) = %v, want %v", tc.src, got, tc.want)
			}
		})
	}
}

func itoa(n int) string {
	if n < 10 {
		return string(rune('0' + n))
	}
	return itoa(n/10) + string(rune('0'+n%10))
}

func TestRulesAreDistinct(t *testing.T) {
	seen := map[string]bool{}
	for _, r := range Rules() {
		if seen[r.Name] || !strings.HasPrefix(r.Name, "rust.") || r.Description == "" {
			t.Errorf("bad rule %+v", r)
		}
		seen[r.Name] = true
	}
	// Every rule Check can report is declared.
	src := "unsafe {}\nstd::process::exit(1);\nstd::net::x;\nremove_dir_all(\"/\");\ninclude!(\"/x\");\nmacro_rules! assert {}\n"
	for _, f := range Check([]byte(src)) {
		if !seen[f.Rule] {
			t.Errorf("Check reports undeclared rule %s", f.Rule)
		}
	}
}

package rust

import (
	"regexp"
	"sort"
	"strings"
)

// Rule is one policy rule for model-written Rust.
type Rule struct {
	Name        string
	Description string
	Block       bool // the default action: block, else warn
	NonTestOnly bool // does not apply to test files
}

// Rules are the policy rules for Rust, the analogues of the other
// languages' (os/exec and subprocess, net and socket, unsafe and ctypes,
// os.RemoveAll, assertion tampering). Reading the environment is not a
// rule: no other language flags it, and the sandbox's environment holds
// no secret.
func Rules() []Rule {
	return []Rule{
		{"rust.unsafe", "unsafe blocks, functions, impls and traits, and extern blocks (raw memory, foreign calls)", true, false},
		{"rust.process", "std::process::Command (starts processes), std::process::exit and abort (end the test binary)", true, false},
		{"rust.net", "std::net: TcpStream, TcpListener, UdpSocket (raw sockets)", true, false},
		{"rust.remove-dir-all", "std::fs::remove_dir_all or remove_file on an absolute path or one with ..", true, false},
		{"rust.include-outside", "include!, include_str! or include_bytes! of a file outside the workspace (read at build time)", true, false},
		{"rust.assert-tamper", "macro_rules! redefining assert, assert_eq, assert_ne, panic, debug_assert* in non-test code", true, true},
		{"rust.exit", "std::process or libc imported under another name, libc::exit/_exit/abort/kill, or code run before main or at exit (#[ctor], #[dtor], #[link_section], .init_array) in non-test code", true, true},
	}
}

// Finding is one match of a rule in a file.
type Finding struct {
	Rule    string
	Line    int // 1-based
	Message string
	// Always is set for matches that are never ordinary code (a path
	// outside the workspace): blocked whatever the rule's action, unless
	// the rule is off.
	Always bool
}

var (
	unsafeRe    = regexp.MustCompile(`\bunsafe\s*(?:\{|fn\b|impl\b|trait\b|extern\b)|\bextern\s+(?:"[^"]*"\s*)?\{|#\s*\[\s*link\s*\(`)
	processRe   = regexp.MustCompile(`\bprocess\s*::\s*(Command|exit|abort)\b|\buse\s+std\s*::\s*process\s*::\s*\{[^}]*\b(Command|exit|abort)\b`)
	netRe       = regexp.MustCompile(`\bstd\s*::\s*net\b|\b(TcpStream|TcpListener|UdpSocket)\s*::`)
	removeRe    = regexp.MustCompile(`\b(remove_dir_all|remove_file|remove_dir)\s*\(\s*(?:&\s*)?(?:Path::new\s*\(\s*)?"([^"]*)"`)
	includeRe   = regexp.MustCompile(`\b(include|include_str|include_bytes)\s*!\s*\(\s*"([^"]*)"`)
	macroDefRe  = regexp.MustCompile(`\bmacro_rules\s*!\s*(assert|assert_eq|assert_ne|debug_assert|debug_assert_eq|debug_assert_ne|panic|unreachable|todo|unimplemented)\b`)
	useStdNetRe = regexp.MustCompile(`\buse\s+std\s*::\s*\{[^}]*\bnet\b`)
	// std::process under another name (use std::process as p; p::exit(0)),
	// libc's exits, and code that runs outside the tests' control.
	exitRe = regexp.MustCompile(`\buse\s+(?:::)?std\s*::\s*(?:process\s+as\s+\w+|process\s*::\s*\{[^}]*\bself\s+as\b|\{[^}]*\bprocess\b)|\blibc\s*::\s*(?:_?exit|_Exit|abort|kill|raise)\b|#\s*\[\s*(?:ctor|dtor|link_section|used)\b|\.init_array|\.fini_array|\batexit\s*\(`)
)

// Check finds rule matches in one Rust source file. Comments are blanked
// first, and so are string contents except where a rule reads a path
// literal, so a comment or a string that mentions std::net never matches.
func Check(src []byte) []Finding {
	code, withStrings := blank(src)
	var out []Finding
	add := func(rule string, at int, msg string, always bool) {
		out = append(out, Finding{Rule: rule, Line: lineOf(code, at), Message: msg, Always: always})
	}
	for _, m := range unsafeRe.FindAllIndex(code, -1) {
		what := strings.Join(strings.Fields(string(code[m[0]:m[1]])), " ")
		switch {
		case strings.HasPrefix(what, "#"):
			what = "#[link] (links a native library)"
		case strings.HasPrefix(what, "extern"):
			what = "an extern block (foreign functions)"
		case what == "unsafe {":
			what = "an unsafe block"
		default:
			what = "unsafe " + strings.TrimSpace(strings.TrimPrefix(what, "unsafe"))
		}
		add("rust.unsafe", m[0], what, false)
	}
	for _, m := range processRe.FindAllSubmatchIndex(code, -1) {
		what := ""
		for g := 1; g <= 2; g++ {
			if m[2*g] >= 0 {
				what = string(code[m[2*g]:m[2*g+1]])
			}
		}
		add("rust.process", m[0], "std::process::"+what, false)
	}
	for _, m := range netRe.FindAllIndex(code, -1) {
		add("rust.net", m[0], "using "+strings.TrimRight(strings.Join(strings.Fields(string(code[m[0]:m[1]])), ""), ":"), false)
	}
	for _, m := range useStdNetRe.FindAllIndex(code, -1) {
		add("rust.net", m[0], "importing std::net", false)
	}
	for _, m := range removeRe.FindAllSubmatchIndex(withStrings, -1) {
		if p := string(withStrings[m[4]:m[5]]); outside(p) && code[m[0]] == withStrings[m[0]] {
			add("rust.remove-dir-all", m[0], string(withStrings[m[2]:m[3]])+"("+quote(p)+") outside the workspace", true)
		}
	}
	for _, m := range includeRe.FindAllSubmatchIndex(withStrings, -1) {
		if p := string(withStrings[m[4]:m[5]]); outside(p) && code[m[0]] == withStrings[m[0]] {
			add("rust.include-outside", m[0], string(withStrings[m[2]:m[3]])+"!("+quote(p)+") reads a file outside the workspace", true)
		}
	}
	for _, m := range exitRe.FindAllIndex(code, -1) {
		add("rust.exit", m[0], strings.Join(strings.Fields(string(code[m[0]:m[1]])), " "), false)
	}
	for _, m := range macroDefRe.FindAllSubmatchIndex(code, -1) {
		add("rust.assert-tamper", m[0], "redefining "+string(code[m[2]:m[3]])+"! from non-test code", false)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Line < out[j].Line })
	return out
}

func quote(s string) string { return `"` + s + `"` }

// outside reports whether a literal path leaves the workspace. A
// relative include! path is relative to the including file: a ".." may
// stay inside, but the rules cannot tell and flag it.
func outside(p string) bool {
	return strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~") || p == ".." ||
		strings.HasPrefix(p, "../") || strings.Contains(p, "/../") || strings.HasSuffix(p, "/..")
}

func lineOf(b []byte, at int) int { return strings.Count(string(b[:at]), "\n") + 1 }

// blank returns src with comments blanked (withStrings) and with comments
// and string and character literal contents blanked (code). Newlines are
// kept so that lines stay where they were. Block comments nest, as in
// Rust; raw strings (r"..", r#".."#, br"..") and lifetimes ('a) are
// understood.
func blank(src []byte) (code, withStrings []byte) {
	code = append([]byte(nil), src...)
	withStrings = append([]byte(nil), src...)
	blankBoth := func(i int) {
		if code[i] != '\n' {
			code[i], withStrings[i] = ' ', ' '
		}
	}
	blankCode := func(i int) {
		if code[i] != '\n' {
			code[i] = ' '
		}
	}
	n := len(src)
	for i := 0; i < n; {
		c := src[i]
		switch {
		case c == '/' && i+1 < n && src[i+1] == '/':
			for i < n && src[i] != '\n' {
				blankBoth(i)
				i++
			}
		case c == '/' && i+1 < n && src[i+1] == '*':
			depth := 0
			for i < n {
				if src[i] == '/' && i+1 < n && src[i+1] == '*' {
					depth++
					blankBoth(i)
					blankBoth(i + 1)
					i += 2
					continue
				}
				if src[i] == '*' && i+1 < n && src[i+1] == '/' {
					depth--
					blankBoth(i)
					blankBoth(i + 1)
					i += 2
					if depth == 0 {
						break
					}
					continue
				}
				blankBoth(i)
				i++
			}
		case (c == 'r' || (c == 'b' && i+1 < n && src[i+1] == 'r')) && (i == 0 || !isIdent(src[i-1])) && rawStart(src, i) > 0:
			j := rawStart(src, i) // index of the opening quote
			hashes := j - i - 1
			if c == 'b' {
				hashes--
			}
			end := strings.Index(string(src[j+1:]), `"`+strings.Repeat("#", hashes))
			stop := n
			if end >= 0 {
				stop = j + 1 + end
			}
			for k := j + 1; k < stop; k++ {
				blankCode(k)
			}
			i = stop + 1 + hashes
		case c == '"':
			j := i + 1
			for j < n && src[j] != '"' {
				if src[j] == '\\' {
					blankCode(j)
					j++
					if j >= n {
						break
					}
				}
				blankCode(j)
				j++
			}
			i = j + 1
		case c == '\'':
			// A char literal ('x', '\n', '\u{1F600}', 'é'), else a lifetime.
			if i+1 < n && src[i+1] == '\\' {
				j := i + 2
				for j < n && src[j] != '\'' && src[j] != '\n' {
					j++
				}
				for k := i + 1; k < j && k < n; k++ {
					blankCode(k)
				}
				i = j + 1
				continue
			}
			j := i + 1
			for j < n && j < i+5 && src[j]&0xC0 == 0x80 || (j == i+1 && j < n) {
				j++
			}
			if j < n && src[j] == '\'' {
				for k := i + 1; k < j; k++ {
					blankCode(k)
				}
				i = j + 1
				continue
			}
			i++
		default:
			i++
		}
	}
	return code, withStrings
}

// rawStart returns the index of the opening quote of a raw string
// starting at i (r"", r#""#, br""), or 0.
func rawStart(src []byte, i int) int {
	j := i + 1
	if src[i] == 'b' {
		j++
	}
	for j < len(src) && src[j] == '#' {
		j++
	}
	if j < len(src) && src[j] == '"' {
		return j
	}
	return 0
}

func isIdent(c byte) bool {
	return c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

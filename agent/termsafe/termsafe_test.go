package termsafe

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestStrip(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "ok\tfine\n", "ok\tfine\n"},
		{"utf8", "héllo → 世界", "héllo → 世界"},
		{"colour", "\x1b[31mred\x1b[0m", "red"},
		{"cursor up and erase", "shown\x1b[1A\x1b[2Khidden", "shownhidden"},
		{"private csi", "\x1b[?25lx", "x"},
		{"title BEL", "\x1b]0;pwned\x07after", "after"},
		{"title ST", "\x1b]2;pwned\x1b\\after", "after"},
		{"osc52 clipboard", "a\x1b]52;c;Y3VybCBldmlsfHNo\x07b", "ab"},
		{"osc8 link", "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\", "click"},
		{"osc C1 ST", "\x1b]0;t\u009cx", "x"},
		{"dcs", "\x1bPq#0;2;0;0;0\x1b\\x", "x"},
		{"apc pm sos", "\x1b_a\x1b\\\x1b^b\x1b\\\x1bXc\x1b\\x", "x"},
		{"unterminated osc keeps inert text", "\x1b]0;title", "0;title"},
		{"two-byte", "\x1b7x\x1b8\x1bc", "x"},
		{"charset", "\x1b(Bx", "x"},
		{"lone esc", "x\x1b", "x"},
		{"c0 and del", "a\x07b\x08c\x0cd\x7fe\x00f", "abcdef"},
		{"c1 runes", "a\u009b31mb\u009d0;t\u009cc\u0085", "a31mb0;tc"},
		{"raw 8-bit csi", "a\x9b31mb", "a\ufffd31mb"},
		{"crlf", "a\r\nb", "a\nb"},
		{"cr overwrite", "rm -rf /\rls", "rm -rf /\nls"},
		{"bidi override", "admin\u202e\u2066txt.exe\u2069", "admintxt.exe"},
		{"bidi all", "\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061cx", "x"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Strip(tt.in); got != tt.want {
				t.Errorf("Strip(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestMarkdown(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"plain", "fixpoint: verified (3 tests)", "fixpoint: verified (3 tests)"},
		{"link", "[left-pad](command:workbench.action.terminal.sendSequence)", `\[left-pad\]\(command:workbench.action.terminal.sendSequence)`},
		{"image", "![x](http://e/x.png)", `!\[x\]\(http://e/x.png)`},
		{"autolink and html", "<https://e> <img src=x>", `\<https://e\> \<img src=x\>`},
		{"backslash", `a\[b`, `a\\\[b`},
		{"controls too", "\x1b]0;t\x07[a](b)", `\[a\]\(b)`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Markdown(tt.in); got != tt.want {
				t.Errorf("Markdown(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestWriter(t *testing.T) {
	var out bytes.Buffer
	w := Writer{W: &out}
	for _, chunk := range []string{"setup: \x1b]52;c;", "eA==\x07ok\x1b", "[2J\n"} {
		if n, err := w.Write([]byte(chunk)); n != len(chunk) || err != nil {
			t.Fatalf("Write(%q) = %d, %v", chunk, n, err)
		}
	}
	if bytes.IndexByte(out.Bytes(), esc) >= 0 {
		t.Errorf("Writer passed an ESC: %q", out.String())
	}
}

// unsafe returns a description of the first thing in s a terminal would
// obey, or "".
func unsafe(s string) string {
	if !utf8.ValidString(s) {
		return "invalid UTF-8"
	}
	for i, r := range s {
		switch {
		case r == '\n' || r == '\t':
		case r < 0x20 || r == 0x7f:
			return fmt.Sprintf("C0/DEL at byte %d", i)
		case r >= 0x80 && r <= 0x9f:
			return "C1"
		case bidi(r):
			return "bidi"
		}
	}
	return ""
}

func FuzzStrip(f *testing.F) {
	for _, s := range []string{
		"", "plain", "\x1b[31mred", "\x1b]52;c;eA==\x07", "\x1b]8;;u\x1b\\t\x1b]8;;\x1b\\",
		"\x1bPq\x1b\\", "a\rb", "\u202eabc", "\u009b2J", "\x9b2J", "\x1b\x1b[[", "\x1b]\x1b]\x07",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Strip(s)
		if why := unsafe(got); why != "" {
			t.Fatalf("Strip(%q) = %q: %s", s, got, why)
		}
		if again := Strip(got); again != got {
			t.Fatalf("Strip is not idempotent: Strip(%q) = %q, Strip of that = %q", s, got, again)
		}
		if len(got) > len(s)*3 { // only U+FFFD (3 bytes) replaces a byte
			t.Fatalf("Strip(%q) grew to %d bytes", s, len(got))
		}
		if unsafe(s) == "" && !strings.Contains(s, "\r") && Strip(s) != s {
			t.Fatalf("Strip changed clean text %q to %q", s, got)
		}
		md := Markdown(s)
		if why := unsafe(md); why != "" {
			t.Fatalf("Markdown(%q) = %q: %s", s, md, why)
		}
		if strings.Contains(md, "](") {
			t.Fatalf("Markdown(%q) = %q keeps a link", s, md)
		}
	})
}

func TestJSONWriter(t *testing.T) {
	var out bytes.Buffer
	in := map[string]string{"m": "a\u009b2Jb\u202ec\x7fd\x1b[0m"}
	if err := json.NewEncoder(JSONWriter{W: &out}).Encode(in); err != nil {
		t.Fatal(err)
	}
	if why := unsafe(out.String()); why != "" {
		t.Errorf("JSONWriter output %q: %s", out.String(), why)
	}
	var back map[string]string
	if err := json.Unmarshal(out.Bytes(), &back); err != nil || back["m"] != in["m"] {
		t.Errorf("JSONWriter changed the value: %q (%v), want %q", back["m"], err, in["m"])
	}
}

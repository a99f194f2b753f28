// Package termsafe removes what a terminal or an editor would obey rather
// than show from text fixpoint did not write: a model's reply, a test's
// output, a file of the workspace. Strip is for terminals and every editor
// message; Markdown additionally escapes the link and HTML syntax of
// clients that render markdown in their messages.
//
// What Strip removes, and why each is dangerous on a terminal:
//   - ESC sequences: CSI (ESC [ … final: cursor moves that hide lines, colours,
//     erase), OSC (ESC ] … BEL or ST: window title, OSC 52 clipboard writes,
//     OSC 8 links), DCS, SOS, PM and APC strings (ESC P/X/^/_ … ST), and
//     two-byte sequences ESC x (with intermediates, e.g. ESC ( B);
//   - C0 controls other than \n and \t (BEL, backspace, form feed…) and DEL;
//   - C1 controls U+0080–U+009F (8-bit CSI U+009B and OSC U+009D among them),
//     and bytes that are not UTF-8 (a terminal in an 8-bit mode reads 0x9B as
//     CSI): each such byte becomes U+FFFD;
//   - a carriage return that would overwrite the line it ends: \r\n becomes
//     \n and a lone \r becomes \n, so the text it would hide stays visible;
//   - Unicode bidi embeddings, overrides and isolates (U+202A–U+202E,
//     U+2066–U+2069), which reorder what is shown and so hide text, and
//     the marks U+200E, U+200F and U+061C.
//
// Strip never fails, is idempotent, and returns its argument unchanged (no
// allocation) when there is nothing to remove. It keeps everything else,
// including the text of an unterminated string sequence: once its ESC is
// gone that text is inert.
package termsafe

import (
	"fmt"
	"io"
	"strings"
	"unicode/utf8"
)

const (
	esc = 0x1b
	bel = 0x07
	st  = '\u009c' // C1 string terminator
)

// Strip returns s without control sequences (see the package doc).
func Strip(s string) string {
	if clean(s) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); {
		c := s[i]
		switch {
		case c == esc:
			i = skipEscape(s, i)
			continue
		case c == '\r':
			b.WriteByte('\n')
			i++
			if i < len(s) && s[i] == '\n' {
				i++
			}
			continue
		case c == '\n' || c == '\t':
			b.WriteByte(c)
			i++
			continue
		case c < 0x20 || c == 0x7f:
			i++
			continue
		case c < utf8.RuneSelf:
			b.WriteByte(c)
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b.WriteRune(utf8.RuneError)
		case r >= 0x80 && r <= 0x9f, bidi(r):
			// dropped
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return b.String()
}

// clean reports whether s has nothing Strip would change.
func clean(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || (r >= 0x80 && r <= 0x9f) || bidi(r) {
			return false
		}
		i += n
	}
	return true
}

// bidi reports the explicit directional formatting characters: the
// embeddings, overrides and isolates that reorder text (Trojan Source,
// CVE-2021-42574), and the marks LRM, RLM and ALM.
func bidi(r rune) bool {
	return (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c
}

// skipEscape returns the index after the escape sequence that starts at
// s[i] (an ESC).
func skipEscape(s string, i int) int {
	i++ // ESC
	if i >= len(s) {
		return i
	}
	switch s[i] {
	case '[': // CSI: parameters 0x30–0x3F, intermediates 0x20–0x2F, a final 0x40–0x7E
		i++
		for i < len(s) && s[i] >= 0x20 && s[i] <= 0x3f {
			i++
		}
		if i < len(s) && s[i] >= 0x40 && s[i] <= 0x7e {
			i++
		}
		return i
	case ']', 'P', 'X', '^', '_': // OSC, DCS, SOS, PM, APC: a string up to BEL or ST
		return skipString(s, i+1)
	}
	// ESC x, with optional intermediates: ESC ( B, ESC 7, ESC c…
	for i < len(s) && s[i] >= 0x20 && s[i] <= 0x2f {
		i++
	}
	if i < len(s) && s[i] >= 0x30 && s[i] <= 0x7e {
		i++
	}
	return i
}

// skipString returns the index after the terminator (BEL, ESC \ or the C1
// ST) of a string sequence whose body starts at s[i]. An unterminated
// string keeps its body: only its introducer is removed, and the body,
// which Strip goes on to clean, is inert without it.
func skipString(s string, i int) int {
	for j := i; j < len(s); {
		switch {
		case s[j] == bel:
			return j + 1
		case s[j] == esc && j+1 < len(s) && s[j+1] == '\\':
			return j + 2
		case s[j] == esc:
			return i // another sequence starts: this one never ended
		case s[j] < utf8.RuneSelf:
			j++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[j:])
		if r == st {
			return j + n
		}
		j += n
	}
	return i
}

// Markdown returns Strip(s) with the syntax of links, images, autolinks
// and HTML escaped, for clients that render markdown in messages (VS Code
// turns [text](target) in a notification into a link, command: links
// included). A backslash before [ ] < > and \, and before a ( that follows
// a ], leaves no "](" pair for a link pattern to find, in CommonMark or in
// VS Code's own link parser; fixpoint's own parentheses stay as they are.
func Markdown(s string) string {
	s = Strip(s)
	if !strings.ContainsAny(s, `\[]<>`) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\\' || c == '[' || c == ']' || c == '<' || c == '>':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c == '(' && i > 0 && s[i-1] == ']':
			b.WriteString(`\(`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// Writer strips each Write before passing it on, for streams of untrusted
// text (a setup step's output, warnings quoting it). A sequence split
// between two writes loses its ESC in the first and shows the rest as
// text; no control byte ever reaches w.
type Writer struct{ W io.Writer }

// Write writes Strip(p) to w.W and reports len(p) on success.
func (w Writer) Write(p []byte) (int, error) {
	if _, err := io.WriteString(w.W, Strip(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// JSONWriter passes JSON documents on with the characters a terminal may
// obey that encoding/json leaves as they are (DEL, C1 controls, bidi
// embeddings, overrides and isolates) written as \u escapes: the document
// decodes to the same values, and `fixpoint … --json` on a terminal shows
// them inert. Those characters only occur inside JSON strings, where the
// escape is valid. Each Write must hold whole UTF-8 sequences (a
// json.Encoder writes one document per call).
type JSONWriter struct{ W io.Writer }

// Write writes p with those characters escaped and reports len(p).
func (w JSONWriter) Write(p []byte) (int, error) {
	s := string(p)
	if !needsJSONEscape(s) {
		if _, err := w.W.Write(p); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	var b strings.Builder
	b.Grow(len(s) + 16)
	for _, r := range s {
		if r == 0x7f || (r >= 0x80 && r <= 0x9f) || bidi(r) {
			fmt.Fprintf(&b, `\u%04x`, r)
			continue
		}
		b.WriteRune(r)
	}
	if _, err := io.WriteString(w.W, b.String()); err != nil {
		return 0, err
	}
	return len(p), nil
}

func needsJSONEscape(s string) bool {
	for _, r := range s {
		if r == 0x7f || (r >= 0x80 && r <= 0x9f) || bidi(r) {
			return true
		}
	}
	return false
}

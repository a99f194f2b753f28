package redact

import (
	"net/url"
	"strings"
	"testing"
)

// Tests written against the survivors of a mutation audit (issue 20,
// Deliver 9): each fails when the bug it is named after is introduced;
// internal/mutation/mutants.txtar keeps checking that.

// TestMaskerURLEncoded: a secret value with characters URL encoding
// changes is masked in its encoded forms: form and query encoding (space
// as +), encodeURIComponent and Python's quote (space as %20), and
// lower-case hex digits; short values whole, long random ones by fragment.
func TestMaskerURLEncoded(t *testing.T) {
	const (
		short      = "s3cr3t/p@ss+w0rd=x!"                       // masked whole
		passphrase = "correct horse battery staple 42"           // spaces
		long       = "Zx9/Qw+7Rt=Yu8/Io+6Pa=Sd5/Fg+4Hj=Kl3/Mn+2" // masked by windows
	)
	m := NewMasker([]string{short, passphrase, long})
	pct20 := func(v string) string { return strings.ReplaceAll(url.QueryEscape(v), "+", "%20") }
	lowerHex := func(s string) string {
		b := []byte(s)
		for i := 0; i+2 < len(b); i++ {
			if b[i] == '%' {
				b[i+1], b[i+2] = strings.ToLower(string(b[i+1]))[0], strings.ToLower(string(b[i+2]))[0]
			}
		}
		return string(b)
	}
	tests := []struct{ name, encoded string }{
		{"query", url.QueryEscape(short)},
		{"query, lower-case hex", lowerHex(url.QueryEscape(short))},
		{"passphrase, +", url.QueryEscape(passphrase)},
		{"passphrase, %20", pct20(passphrase)},
		{"long value", url.QueryEscape(long)},
		{"long value, lower-case hex", lowerHex(url.QueryEscape(long))},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if strings.Contains(tt.encoded, short) || strings.Contains(tt.encoded, passphrase) || strings.Contains(tt.encoded, long) {
				t.Fatalf("the case is not encoded: %q", tt.encoded)
			}
			for _, text := range []string{
				"GET /login?u=bob&p=" + tt.encoded + "&next=%2F HTTP/1.1",
				"body: u=bob&p=" + tt.encoded,
			} {
				got := m.String(text)
				if !strings.Contains(got, Mask) || strings.Contains(got, tt.encoded) || strings.Contains(got, tt.encoded[:12]) {
					t.Errorf("String(%q) = %q, want the encoded value masked", text, got)
				}
			}
		})
	}
}

// TestMaskerValueAtTheEnd: a value that ends the text, or is the whole
// text, is masked like one in the middle: the scan reaches the last byte,
// for values masked whole and for fragments of long ones.
func TestMaskerValueAtTheEnd(t *testing.T) {
	const (
		eight = "Qz7#kP2!"                                             // exactly MinValueLen
		long  = "MIIEowIBAAKCAQEA7VJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1GB4t" // windows
	)
	m := NewMasker([]string{envCanary, eight, long})
	tests := []struct{ text, want string }{
		{envCanary, Mask},
		{"failed: " + envCanary, "failed: " + Mask},
		{"failed:\n" + envCanary, "failed:\n" + Mask},
		{eight, Mask},
		{"pin " + eight, "pin " + Mask},
		{long, Mask},
		{"tail " + long, "tail " + Mask},
		{"tail " + long[:40], "tail " + Mask},
		{"tail " + reverse(long), "tail " + Mask},
	}
	for _, tt := range tests {
		if got := m.String(tt.text); got != tt.want {
			t.Errorf("String(%q) = %q, want %q", tt.text, got, tt.want)
		}
	}
}

// TestStringTokenAtTheEnd: the generic patterns mask a token on the last
// line of a text without a newline.
func TestStringTokenAtTheEnd(t *testing.T) {
	for _, text := range []string{ghToken, "x\n" + ghToken, "Authorization: token " + ghToken} {
		if got := String(text); strings.Contains(got, ghToken[4:]) || !strings.HasSuffix(got, Mask) {
			t.Errorf("String(%q) = %q, want the token masked", text, got)
		}
	}
}

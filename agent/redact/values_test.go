package redact

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

const (
	envCanary = "envcanaryAPIKEY7f3a9Q"
	pemBody   = "MIIEowIBAAKCAQEA7VJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6d\nVMvDuictGeurT8jNbvJZHtCSuYEvuNMoSfm76oqFvAp8Gy0iz5sxjZmSnXyCdPEo\n"
)

func TestValues(t *testing.T) {
	tests := []struct {
		name, rel, data string
		want            []string // must be among the values
		not             []string // must not be
	}{
		{name: "dotenv", rel: ".env",
			data: "# comment\nexport API_KEY=" + envCanary + "\nDEBUG=true\nNODE_ENV=development\nPORT=8080\nDB_PASSWORD='hunter2!x'\nHOST=localhost\nAPI_URL=http://localhost:8080/api\nDATABASE_URL=postgres://app:Pa55word9@db/app # local\n",
			want: []string{envCanary, "hunter2!x", "postgres://app:Pa55word9@db/app", "Pa55word9"},
			not:  []string{"true", "development", "8080", "localhost", "http://localhost:8080/api"}},
		{name: "npmrc token", rel: ".npmrc", data: "//registry.npmjs.org/:_authToken=npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789\nregistry=https://registry.npmjs.org/\n",
			want: []string{"npm_AbCdEfGhIjKlMnOpQrStUvWxYz0123456789"}, not: []string{"https://registry.npmjs.org/"}},
		{name: "pypirc", rel: ".pypirc", data: "[pypi]\nusername = __token__\npassword = pypi-AgEIcHlwaS5vcmcCJGQ0\n",
			want: []string{"pypi-AgEIcHlwaS5vcmcCJGQ0"}},
		{name: "netrc", rel: ".netrc", data: "machine api.example.com login bob password correcthorsebattery\n",
			want: []string{"correcthorsebattery"}},
		{name: "pgpass", rel: ".pgpass", data: "db.example.com:5432:app:bob:staplebatteryhorse\n", want: []string{"staplebatteryhorse"}},
		{name: "json credentials", rel: "credentials.json", data: `{"installed":{"client_id":"1234-abc.apps.example.com","client_secret":"GOCSPX-q8Fz3LmN0pR7sT2v"}}`,
			want: []string{"GOCSPX-q8Fz3LmN0pR7sT2v"}},
		{name: "token file", rel: ".vault-token", data: "hvs.CAESIJx8nq0w3Tj\n", want: []string{"hvs.CAESIJx8nq0w3Tj"}},
		{name: "pem key", rel: "id_rsa", data: "-----BEGIN RSA PRIVATE KEY-----\n" + pemBody + "-----END RSA PRIVATE KEY-----\n",
			want: []string{"MIIEowIBAAKCAQEA7VJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6d"}},
		{name: "binary", rel: "keystore.p12", data: "\x30\x82\x01\x00secretbytes\x00\x01", want: []string{"\x30\x82\x01\x00secretbytes\x00\x01"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Values(tt.rel, []byte(tt.data))
			for _, w := range tt.want {
				if !slices.Contains(got, w) {
					t.Errorf("Values(%s) = %q, want it to contain %q", tt.rel, got, w)
				}
			}
			for _, n := range tt.not {
				if slices.Contains(got, n) {
					t.Errorf("Values(%s) = %q, want no trivial value %q", tt.rel, got, n)
				}
			}
		})
	}
}

func reversed(s string) string { return reverse(s) }

func TestMaskerEncodings(t *testing.T) {
	key := "-----BEGIN RSA PRIVATE KEY-----\n" + pemBody + "-----END RSA PRIVATE KEY-----"
	m := NewMasker(append(Values(".env", []byte("API_KEY="+envCanary+"\n")), Values("id_rsa", []byte(key+"\n"))...))
	b64 := base64.StdEncoding.EncodeToString
	wrap := func(s string) string { // like base64(1): 76 columns
		var b strings.Builder
		for len(s) > 76 {
			b.WriteString(s[:76] + "\n")
			s = s[76:]
		}
		return b.String() + s
	}
	tests := []struct {
		name, text, canary string
	}{
		{"plain", "Exception: " + envCanary, envCanary},
		{"reversed", "boom " + reversed(envCanary) + " end", reversed(envCanary)},
		{"hex", "0x" + hex.EncodeToString([]byte(envCanary)), hex.EncodeToString([]byte(envCanary))},
		{"HEX", strings.ToUpper(hex.EncodeToString([]byte(envCanary))), strings.ToUpper(hex.EncodeToString([]byte(envCanary)))},
		{"base64 alone", "ValueError: " + b64([]byte(envCanary)), b64([]byte(envCanary))[:24]},
		{"base64 offset 1", b64([]byte("x" + envCanary + "yz")), b64([]byte("x" + envCanary + "yz"))[4:24]},
		{"base64 offset 2", b64([]byte("KEY=" + envCanary)), b64([]byte("KEY=" + envCanary))[8:28]},
		{"base64url", base64.URLEncoding.EncodeToString([]byte("??" + envCanary)), base64.URLEncoding.EncodeToString([]byte("??" + envCanary))[4:24]},
		{"url encoded", "q=" + strings.ReplaceAll(envCanary, "K", "K") + "%21", envCanary},
		{"pem plain", "RuntimeError: " + key, "MIIEowIBAAKCAQEA7VJTUt9Us8c"},
		{"pem reversed", reversed(key), reversed("MIIEowIBAAKCAQEA7VJTUt9Us8c")},
		{"pem base64 one line", b64([]byte(key + "\n")), b64([]byte(key + "\n"))[60:140]},
		{"pem base64 wrapped", wrap(b64([]byte(key + "\n"))), b64([]byte(key + "\n"))[80:150]},
		{"pem fragment", "…" + pemBody[20:60] + "…", pemBody[20:60]},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := m.String(tt.text)
			if strings.Contains(strings.ReplaceAll(got, "\n", ""), tt.canary) || !strings.Contains(got, Mask) {
				t.Errorf("String(%q) = %q, want %q masked", tt.text, got, tt.canary)
			}
		})
	}
}

func TestMaskerKeepsOrdinaryText(t *testing.T) {
	m := NewMasker(Values(".env", []byte("API_KEY="+envCanary+"\nNODE_ENV=development\nHOST=localhost\n")))
	for _, s := range []string{
		"def f(x):\n    return x + 1\n",
		"running in development mode on localhost:8080",
		"envcanary is a word; APIKEY too",
	} {
		if got := m.String(s); got != s {
			t.Errorf("String(%q) = %q, want it unchanged", s, got)
		}
	}
	var nilM *Masker
	if got := nilM.String("token: " + ghToken); strings.Contains(got, ghToken) {
		t.Errorf("nil Masker String = %q, want the generic patterns applied", got)
	}
}

// TestMaskerBeforeNormalisation pins the order the agent relies on: a
// value is only recognisable before digits are rewritten.
func TestMaskerBeforeNormalisation(t *testing.T) {
	m := NewMasker([]string{envCanary})
	normalise := func(s string) string {
		return strings.Map(func(r rune) rune {
			if r >= '0' && r <= '9' {
				return 'N'
			}
			return r
		}, s)
	}
	msg := "AssertionError: got " + envCanary
	if got := normalise(m.String(msg)); strings.Contains(got, "envcanaryAPIKEY") {
		t.Errorf("mask then normalise = %q, want the value masked", got)
	}
	if got := m.String(normalise(msg)); !strings.Contains(got, "envcanaryAPIKEYNfNaNQ") {
		t.Errorf("normalise then mask = %q: expected the normalised value to be unrecognisable (this test documents why order matters)", got)
	}
}

func BenchmarkMasker(b *testing.B) {
	key := "-----BEGIN RSA PRIVATE KEY-----\n" + strings.Repeat(pemBody, 20) + "-----END RSA PRIVATE KEY-----"
	m := NewMasker(append(Values(".env", []byte("A="+envCanary+"\nB=hunter2hunter2\n")), Values("id_rsa", []byte(key))...))
	text := strings.Repeat("func f(x int) int { return x * 2 } // some ordinary code\n", 2000)
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		m.String(text)
	}
}

// TestMaskerManyValues: a workspace with many secret values masks each of
// them, in one scan of the text.
func TestMaskerManyValues(t *testing.T) {
	var env strings.Builder
	var vals []string
	for i := range 500 {
		v := fmt.Sprintf("val%03dQz%05dX", i, i*7919)
		vals = append(vals, v)
		fmt.Fprintf(&env, "KEY_%d=%s\n", i, v)
	}
	m := NewMasker(Values(".env", []byte(env.String())))
	if m.Len() != 500 {
		t.Fatalf("Len = %d, want 500", m.Len())
	}
	text := "a " + vals[0] + " b " + vals[499] + " c " + hex.EncodeToString([]byte(vals[250])) + " d " + reversed(vals[7])
	if got, want := m.String(text), "a [REDACTED] b [REDACTED] c [REDACTED] d [REDACTED]"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
}

// TestMaskerEscapedAndTrailing: a value is masked in its URL-encoded and
// quoted forms, and when it ends the text: short values (exact match) and
// long random ones (windows) alike, the last possible start included.
func TestMaskerEscapedAndTrailing(t *testing.T) {
	const special = `p@ss/w0rd+K"q9\z!& x` // needs escaping in URLs, JSON and Go strings
	const short = "Zq9!xK2p"               // exactly MinValueLen
	const long = "Tz8Kp2Lq9Xw3Nv7Tb4Mc6Hd1Jf5Gs0Ra2Ye"
	if len(short) != MinValueLen || len(long) < 2*windowLen {
		t.Fatal("fixture lengths changed")
	}
	m := NewMasker([]string{special, short, long})
	js, _ := json.Marshal(special)
	tests := []struct{ name, text, want string }{
		{"query escaped", "GET /login?pw=" + url.QueryEscape(special) + "&x=1", "GET /login?pw=[REDACTED]&x=1"},
		{"path escaped", "GET /u/" + url.PathEscape(special) + "/x", "GET /u/[REDACTED]/x"},
		{"json string", `{"pw":` + string(js) + `}`, `{"pw":"[REDACTED]"}`},
		{"go quoted", "got " + strconv.Quote(special), `got "[REDACTED]"`},
		{"lower-case percent escapes", "pw=" + regexp.MustCompile("%[0-9A-F]{2}").ReplaceAllStringFunc(url.QueryEscape(special), strings.ToLower), "pw=[REDACTED]"},
		{"html escaped", "<td>" + html.EscapeString(special) + "</td>", "<td>[REDACTED]</td>"},
		{"query escaped at the end", "pw=" + url.QueryEscape(special), "pw=[REDACTED]"},
		{"plain at the end", "value: " + special, "value: [REDACTED]"},
		{"short value at the end", "value: " + short, "value: [REDACTED]"},
		{"short value is the text", short, "[REDACTED]"},
		{"long value at the end", "value: " + long, "value: [REDACTED]"},
		{"last window of a long value at the end", "tail " + long[len(long)-windowLen:], "tail [REDACTED]"},
		{"hex at the end", "hex " + hex.EncodeToString([]byte(short)), "hex [REDACTED]"},
	}
	for _, tt := range tests {
		if got := m.String(tt.text); got != tt.want {
			t.Errorf("%s: String(%q) = %q, want %q", tt.name, tt.text, got, tt.want)
		}
	}
	// base64 at the end: every character whose bits all come from the
	// value is masked (the last one or two share bits with the padding)
	enc := base64.StdEncoding.EncodeToString([]byte(long))
	if got := m.String("b64 " + enc); !strings.HasPrefix(got, "b64 [REDACTED]") || len(got) > len("b64 [REDACTED]")+2 {
		t.Errorf("String(base64 at the end) = %q, want it masked", got)
	}
}

func TestEnvValues(t *testing.T) {
	env := []string{
		"FIXPOINT_API_KEY=fxk-Q7w2Er9Ty4Ui1Op8",
		"GITHUB_TOKEN=" + ghToken,
		"HTTPS_PROXY=http://alice:pr0xyPassw0rd@proxy.corp:3128",
		"PWD=/home/alice/project",
		"HOME=/home/alice",
		"TOKENIZERS_PARALLELISM=false",
		"LANG=en_US.UTF-8",
		"NO_PROXY=localhost,127.0.0.1",
	}
	got := EnvValues(env)
	for _, w := range []string{"fxk-Q7w2Er9Ty4Ui1Op8", ghToken, "pr0xyPassw0rd"} {
		if !slices.Contains(got, w) {
			t.Errorf("EnvValues = %q, want %q among them", got, w)
		}
	}
	for _, n := range []string{"/home/alice/project", "false", "en_US.UTF-8", "localhost,127.0.0.1"} {
		if slices.Contains(got, n) {
			t.Errorf("EnvValues = %q, want no %q", got, n)
		}
	}
	m := NewMasker(got)
	if s := m.String("proxy said: 407 for " + base64.StdEncoding.EncodeToString([]byte("alice:pr0xyPassw0rd"))); strings.Contains(s, "cHIweHlQ") {
		t.Errorf("the proxy password's base64 survived: %q", s)
	}
}

// FuzzMasker: whatever surrounds a value, it does not survive masking
// plain, URL-encoded or base64-encoded, and masking is idempotent.
func FuzzMasker(f *testing.F) {
	f.Add("prefix ", " suffix", "Zq9!xK2p/+&=")
	f.Add("", "", "Tz8Kp2Lq9Xw3Nv7Tb4Mc6Hd1Jf5Gs0Ra2Ye")
	f.Add("a\n", "\x00", "p@ss w0rd%")
	f.Fuzz(func(t *testing.T, before, after, value string) {
		if len(value) < MinValueLen || len(value) > 200 || strings.Contains(value, Mask) || strings.ContainsAny(value, "[]") {
			return
		}
		m := NewMasker([]string{value})
		for _, form := range []string{value, url.QueryEscape(value), hex.EncodeToString([]byte(value))} {
			got := m.String(before + form + after)
			if strings.Contains(got, form) && !strings.Contains(before+after, form) {
				t.Fatalf("String(%q) = %q keeps %q", before+form+after, got, form)
			}
			if again := m.String(got); again != got {
				t.Fatalf("not idempotent: %q → %q", got, again)
			}
		}
	})
}

package redact

import (
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/url"
	"path"
	"sort"
	"strings"
	"unicode/utf8"
)

// MinValueLen is the shortest secret-file value a [Masker] masks: shorter
// values ("true", "8080", "dev") would mask ordinary text everywhere.
const MinValueLen = 8

// windowLen is the fragment length a Masker recognises of long random
// values: any run of windowLen characters of such a value, or of one of its
// encodings, is masked, which catches a value cut by output trimming, a
// base64 blob wrapped at 76 columns or a value embedded in a longer one.
const windowLen = 16

// Limits that keep a Masker small when a secret file is large (a keystore).
const (
	maxWindowValue = 8 << 10 // longer values are masked whole only
	maxWindows     = 1 << 18
)

// Values returns the secret values of one secret file (a path that
// [IsSecretPath] names): the values of KEY=VALUE, key: value and JSON
// lines, passwords in URLs, .netrc and .pgpass entries, random-looking
// tokens anywhere in the file, the whole content of a one-line file, and
// every line of a PEM key. A binary file (a .p12, a keystore) is one value.
// Trivial values (shorter than MinValueLen, placeholders, plain words,
// short numbers, URLs without credentials) are left out unless a
// secret-like name (password, api_key, …) is assigned them.
func Values(rel string, data []byte) []string {
	set := map[string]bool{}
	add := func(key, v string) {
		v = strings.TrimSpace(v)
		if !trivialValue(key, v) {
			set[v] = true
		}
	}
	if !utf8.Valid(data) || strings.ContainsRune(string(data), 0) {
		if len(data) >= MinValueLen {
			set[string(data)] = true
		}
		return sortedValues(set)
	}
	text := strings.TrimSpace(string(data))
	if text != "" && !strings.Contains(text, "\n") {
		add("", text) // a token file: .vault-token, a one-line credential
	}
	if strings.Contains(text, "-----BEGIN ") {
		set[text] = true
		for _, l := range strings.Split(text, "\n") {
			if l = strings.TrimSpace(l); len(l) >= windowLen && !strings.HasPrefix(l, "-----") {
				set[l] = true
			}
		}
	}
	if strings.HasSuffix(strings.ToLower(rel), ".json") {
		var v any
		if json.Unmarshal(data, &v) == nil {
			jsonValues(v, "", add)
		}
	}
	base := strings.ToLower(path.Base(rel))
	for _, line := range strings.Split(text, "\n") {
		lineValues(base, strings.TrimSpace(line), add)
	}
	return sortedValues(set)
}

func sortedValues(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for v := range set {
		out = append(out, v)
	}
	sort.Strings(out)
	return out
}

func jsonValues(v any, key string, add func(key, v string)) {
	switch x := v.(type) {
	case string:
		add(key, x)
	case map[string]any:
		for k, e := range x {
			jsonValues(e, k, add)
		}
	case []any:
		for _, e := range x {
			jsonValues(e, key, add)
		}
	}
}

// lineValues adds the values of one line of a text secret file.
func lineValues(base, line string, add func(key, v string)) {
	if line == "" || line[0] == '#' || line[0] == ';' || strings.HasPrefix(line, "//") && !strings.Contains(line, "=") {
		return
	}
	line = strings.TrimPrefix(line, "export ")
	key, val, ok := strings.Cut(line, "=")
	if !ok {
		key, val, ok = strings.Cut(line, ":")
	}
	if ok {
		add(strings.TrimSpace(key), cleanValue(val))
	}
	if i := strings.Index(line, "://"); i > 0 {
		j := i
		for j > 0 && isSchemeByte(line[j-1]) {
			j--
		}
		if u, err := url.Parse(strings.Fields(line[j:])[0]); err == nil && u.User != nil {
			if pw, set := u.User.Password(); set {
				add("password", pw)
			}
		}
	}
	fields := strings.FieldsFunc(line, func(r rune) bool { return strings.ContainsRune(" \t=,;\"'`", r) })
	for i, f := range fields {
		if i > 0 && (fields[i-1] == "password" || fields[i-1] == "passwd") {
			add("password", f) // .netrc: machine m login l password p
		}
		if looksRandom(f, 12) {
			add("", f)
		}
	}
	if base == ".pgpass" {
		if i := strings.LastIndexByte(line, ':'); i >= 0 {
			add("password", line[i+1:]) // host:port:db:user:password
		}
	}
}

func isSchemeByte(c byte) bool {
	return c == '+' || c == '.' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// cleanValue unquotes a KEY=VALUE value and drops a trailing comment.
func cleanValue(v string) string {
	v = strings.TrimSpace(v)
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'' || v[0] == '`') {
		if j := strings.IndexByte(v[1:], v[0]); j >= 0 {
			return v[1 : 1+j]
		}
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), ","))
}

// trivialValue reports values not worth masking: a secret-like name makes
// any value of MinValueLen or more count.
func trivialValue(key, v string) bool {
	if len(v) < MinValueLen || isPlaceholder(v) || strings.Contains(v, Mask) {
		return true
	}
	lk := asciiLower(key)
	if strongNameRE.MatchString(lk) || keywordRE.MatchString(lk) {
		return false
	}
	if strings.Contains(v, "://") && !strings.Contains(v, "@") {
		return true // a URL without credentials
	}
	var digits, lower, upper, other int
	for _, r := range v {
		switch {
		case r >= '0' && r <= '9':
			digits++
		case r >= 'a' && r <= 'z':
			lower++
		case r >= 'A' && r <= 'Z':
			upper++
		case r == '_' || r == '-' || r == '.':
		default:
			other++
		}
	}
	switch {
	case digits == len(v):
		return len(v) < 10 // ports, counts; long digit strings may be account numbers or PINs
	case digits == 0 && other == 0 && (lower == 0 || upper == 0):
		return true // a plain word: development, localhost, INFO
	}
	return false
}

// Masker masks a fixed set of secret values in text: each value plain,
// reversed, in hex (lower and upper case), in URL encoding (a space as +
// or %20, hex digits in either case) and in base64
// (standard and URL alphabets, at the three byte alignments a value can
// have inside a longer encoded blob), and, for long random values, any
// fragment of windowLen characters of these forms. [Masker.String] then
// applies [String]. A nil *Masker applies [String] only. A Masker is
// immutable and safe for concurrent use.
type Masker struct {
	// exact holds the variants of values without windows, by their first
	// MinValueLen bytes, longest first: one scan of a text finds them all,
	// however many values a workspace has.
	exact   map[string][]string
	windows map[string]struct{} // windowLen-byte fragments of long values' variants
	first   *[1 << 16 / 8]byte  // bitmap of the first two bytes of every variant and window
	n       int                 // values
}

func (m *Masker) mark(w string) {
	k := uint16(w[0])<<8 | uint16(w[1])
	m.first[k/8] |= 1 << (k % 8)
}

func (m *Masker) marked(s string, i int) bool {
	k := uint16(s[i])<<8 | uint16(s[i+1])
	return m.first[k/8]&(1<<(k%8)) != 0
}

// NewMasker returns a Masker for values; values shorter than MinValueLen
// are ignored.
func NewMasker(values []string) *Masker {
	m := &Masker{exact: map[string][]string{}, windows: map[string]struct{}{}, first: new([1 << 16 / 8]byte)}
	exact := map[string]bool{}
	for _, v := range values {
		if len(v) < MinValueLen {
			continue
		}
		m.n++
		vars := variants(v)
		if len(v) >= 2*windowLen && len(v) <= maxWindowValue && (looksRandom(v, 2*windowLen) || strings.Contains(v, "\n")) && len(m.windows) < maxWindows {
			for _, x := range vars {
				for i := 0; i+windowLen <= len(x); i++ {
					w := x[i : i+windowLen]
					m.windows[w] = struct{}{}
					m.mark(w)
				}
			}
			continue
		}
		for _, x := range vars {
			exact[x] = true
		}
	}
	for x := range exact {
		k := x[:MinValueLen]
		m.exact[k] = append(m.exact[k], x)
		m.mark(x)
	}
	for _, xs := range m.exact {
		sort.Slice(xs, func(i, j int) bool { return len(xs[i]) > len(xs[j]) || len(xs[i]) == len(xs[j]) && xs[i] < xs[j] })
	}
	return m
}

// Len is the number of values the Masker masks.
func (m *Masker) Len() int {
	if m == nil {
		return 0
	}
	return m.n
}

// variants are the forms of v a Masker looks for, each at least
// MinValueLen long.
func variants(v string) []string {
	b := []byte(v)
	out := []string{v, reverse(v), hex.EncodeToString(b), strings.ToUpper(hex.EncodeToString(b))}
	if q := url.QueryEscape(v); q != v {
		// Form and query encoding write a space as +; encodeURIComponent
		// and Python's quote as %20; some encoders use lower-case hex.
		p := strings.ReplaceAll(q, "+", "%20")
		out = append(out, q, lowerEscapes(q))
		if p != q {
			out = append(out, p, lowerEscapes(p))
		}
	}
	for _, enc := range []*base64.Encoding{base64.RawStdEncoding, base64.RawURLEncoding} {
		for k := 0; k < 3; k++ {
			// Encode v after k bytes of padding, then keep only the
			// characters whose bits all come from v: they appear in the
			// encoding of any text that has v at an offset ≡ k (mod 3).
			e := enc.EncodeToString(append(make([]byte, k), b...))
			lo, hi := (8*k+5)/6, 8*(k+len(b))/6
			if hi-lo >= MinValueLen {
				out = append(out, e[lo:hi])
			}
		}
	}
	return out
}

// lowerEscapes writes the hex digits of s's %XX escapes in lower case.
func lowerEscapes(s string) string {
	b := []byte(s)
	for i := 0; i+2 < len(b); i++ {
		if b[i] == '%' {
			b[i+1], b[i+2] = lowerASCII(b[i+1]), lowerASCII(b[i+2])
			i += 2
		}
	}
	return string(b)
}

func lowerASCII(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

func reverse(s string) string {
	b := []byte(s)
	for i, j := 0, len(b)-1; i < j; i, j = i+1, j-1 {
		b[i], b[j] = b[j], b[i]
	}
	return string(b)
}

// String masks the Masker's values in s, then what [String] masks.
func (m *Masker) String(s string) string {
	if m != nil && m.n > 0 && len(s) >= MinValueLen {
		s = m.maskValues(s)
	}
	return String(s)
}

func (m *Masker) maskValues(s string) string {
	var spans [][2]int
	for i := 0; i+MinValueLen <= len(s); i++ {
		if !m.marked(s, i) {
			continue
		}
		for _, x := range m.exact[s[i:i+MinValueLen]] {
			if strings.HasPrefix(s[i:], x) {
				spans = append(spans, [2]int{i, i + len(x)})
				break
			}
		}
		if i+windowLen <= len(s) {
			if _, ok := m.windows[s[i:i+windowLen]]; ok {
				spans = append(spans, [2]int{i, i + windowLen})
			}
		}
	}
	if len(spans) == 0 {
		return s
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i][0] < spans[j][0] })
	var b strings.Builder
	b.Grow(len(s))
	last := 0
	for i := 0; i < len(spans); {
		start, end := spans[i][0], spans[i][1]
		for i++; i < len(spans) && spans[i][0] <= end; i++ {
			end = max(end, spans[i][1])
		}
		b.WriteString(s[last:start])
		b.WriteString(Mask)
		last = end
	}
	b.WriteString(s[last:])
	return b.String()
}

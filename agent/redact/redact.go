// Package redact keeps secrets out of prompts, run logs, memory records and
// LSP log messages.
//
// [Rules] is the one table of credential shapes (after gitleaks' rules).
// [String] masks values that look like API keys, tokens and private keys
// with [Mask]; [Detect] and its streaming form [Scanner] find credentials
// in a file's contents, with the stricter checks that decide a file is a
// secret file; [IsSecretPath] names files that are secret by name. A
// [Masker] masks known values ([Values] of secret files, [EnvValues] of
// the environment) in every encoding it knows, then applies String. All
// err on the side of masking for well-known token shapes and of keeping
// ordinary code intact: git SHAs, UUIDs and hashes in code are not keys
// unless they are assigned to a key-like name.
package redact

import (
	"math"
	"path"
	"regexp"
	"strings"
)

// Mask replaces each secret.
const Mask = "[REDACTED]"

// bearerRE matches an Authorization header value.
var bearerRE = regexp.MustCompile(`(?i)\b(bearer|token|basic)(\s+)([A-Za-z0-9._~+/-]{16,}=*)`)

// urlCredRE matches a password in a URL: scheme://user:password@host.
var urlCredRE = regexp.MustCompile(`\b([a-z][a-z0-9+.-]*://[^\s:/@]+:)([^\s@/]{3,})(@)`)

// strongNameRE: names whose values are secrets whatever they look like.
var strongNameRE = regexp.MustCompile(`(?i)(api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|client[_-]?secret|auth[_-]?token|access[_-]?token|refresh[_-]?token|password|passwd)$`)

func containsAny(s string, subs ...string) bool {
	for _, t := range subs {
		if strings.Contains(s, t) {
			return true
		}
	}
	return false
}

// Cheap literal checks decide which (slow) patterns run on a line.
func hasTokenPrefix(lower string) bool { return maskKeywords.any(lower) }

func hasKeyword(lower string) bool {
	return containsAny(lower, "key", "token", "secret", "passw", "pwd", "credential")
}

func hasTrigger(line, lower string) bool {
	return hasTokenPrefix(lower) || hasKeyword(lower) || strings.Contains(line, "://") || containsAny(lower, "bearer ", "basic ")
}

// String returns s with secrets replaced by [Mask]. Only lines containing
// a trigger word run through the patterns, which keeps large prompts fast.
func String(s string) string {
	if s == "" {
		return s
	}
	if strings.Contains(s, "PRIVATE KEY") {
		s = privateKey.Regex.ReplaceAllString(s, Mask)
	}
	lower := asciiLower(s)
	if !hasTrigger(s, lower) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for start := 0; start < len(s); {
		end := strings.IndexByte(s[start:], '\n')
		if end < 0 {
			end = len(s)
		} else {
			end += start + 1
		}
		line := s[start:end]
		if ll := lower[start:end]; hasTrigger(line, ll) {
			line = redactLine(line, ll)
		}
		b.WriteString(line)
		start = end
	}
	return b.String()
}

// asciiLower lower-cases ASCII letters only, so byte offsets stay valid.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func redactLine(s, lower string) string {
	s = maskTokens(s, lower)
	if strings.Contains(s, "://") && strings.Contains(s, "@") {
		s = urlCredRE.ReplaceAllString(s, "${1}"+Mask+"${3}")
	}
	if containsAny(lower, "bearer ", "token ", "basic ") {
		s = bearerRE.ReplaceAllStringFunc(s, func(m string) string {
			sub := bearerRE.FindStringSubmatch(m)
			if !looksRandom(sub[3], 16) {
				return m
			}
			return sub[1] + sub[2] + Mask
		})
	}
	if !hasKeyword(asciiLower(s)) || !strings.ContainsAny(s, ":=") {
		return s
	}
	return redactAssignments(s)
}

// maskTokens masks the secrets of the rules whose keywords the line
// holds: the first group of a match when the rule has one, else all of it.
func maskTokens(s, lower string) string {
	for _, r := range Rules {
		if !maskedRule(r) || !hasAny(lower, r.Keywords) {
			continue
		}
		s = r.Regex.ReplaceAllStringFunc(s, func(m string) string {
			sub := r.Regex.FindStringSubmatchIndex(m)
			if len(sub) < 4 || sub[2] < 0 {
				return Mask
			}
			return m[:sub[2]] + Mask + m[sub[3]:]
		})
		lower = asciiLower(s)
	}
	return s
}

// keywords end the names whose assigned values may be secrets.
var keywordRE = regexp.MustCompile(`credentials?|password|passwd|pwd|secret|token|key`)

// keyNameRE: names ending in "key" that hold secrets (not cache_key).
var keyNameRE = regexp.MustCompile(`(api|access|secret|private)[_-]?key$`)

// redactAssignments masks the values assigned to key-like names: in code,
// JSON, YAML, .env files, query strings and command lines (name = value,
// name: value, "name": "value", name := value, name => value, --name=value).
// It is a hand-written scanner: a regular expression for this was 20 times
// slower on large prompts.
func redactAssignments(s string) string {
	lower := asciiLower(s)
	var b strings.Builder
	last := 0
	for _, loc := range keywordRE.FindAllStringIndex(lower, -1) {
		kEnd := loc[1]
		if kEnd <= last {
			continue
		}
		start := loc[0]
		for start > 0 && isNameByte(s[start-1]) {
			start--
		}
		name := s[start:kEnd]
		if strings.HasSuffix(lower[:kEnd], "key") && !keyNameRE.MatchString(lower[start:kEnd]) {
			continue
		}
		vStart, vEnd, quote, ok := valueAfter(s, kEnd)
		if !ok {
			continue
		}
		inner := s[vStart:vEnd]
		if quote == "" && isIdent(inner) && !strings.ContainsAny(inner, "0123456789") {
			continue // a bare word is code (apiKey: string, password=password)
		}
		if !secretValue(name, inner) {
			continue
		}
		b.WriteString(s[last:vStart])
		b.WriteString(Mask)
		last = vEnd
	}
	if last == 0 {
		return s
	}
	b.WriteString(s[last:])
	return b.String()
}

func isNameByte(c byte) bool {
	return c == '_' || c == '-' || c == '.' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9'
}

// valueAfter parses `["']? \s* (:=|=>|:|=) \s* value` at i and returns the
// value's bounds (inside its quotes) and its quote character.
func valueAfter(s string, i int) (start, end int, quote string, ok bool) {
	if i < len(s) && (s[i] == '"' || s[i] == '\'') {
		i++
	}
	i = skipSpace(s, i)
	switch {
	case strings.HasPrefix(s[i:], ":="), strings.HasPrefix(s[i:], "=>"):
		i += 2
	case i < len(s) && (s[i] == ':' || s[i] == '='):
		i++
	default:
		return 0, 0, "", false
	}
	i = skipSpace(s, i)
	if i >= len(s) {
		return 0, 0, "", false
	}
	if q := s[i]; q == '"' || q == '\'' {
		j := strings.IndexAny(s[i+1:], string(q)+"\n")
		if j < 0 || s[i+1+j] != q {
			return 0, 0, "", false
		}
		return i + 1, i + 1 + j, string(q), true
	}
	j := i
	for j < len(s) && !strings.ContainsRune(" \t\r\n\"',;&)}]", rune(s[j])) {
		j++
	}
	return i, j, "", j > i
}

func skipSpace(s string, i int) int {
	for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
		i++
	}
	return i
}

// secretValue decides whether the value assigned to name is a secret.
// Strong names (api_key, password, ...) mask any literal that is not
// empty, already masked, a placeholder or code; weak names (token, secret)
// mask only random-looking values.
func secretValue(name, v string) bool {
	if v == "" || strings.Contains(v, Mask) || isPlaceholder(v) || strings.ContainsAny(v, " \t") {
		return false
	}
	if strongNameRE.MatchString(name) {
		return len(v) >= 6 && !looksLikeCode(v)
	}
	return looksRandom(v, 16)
}

// isPlaceholder reports values that stand for a secret without being one.
func isPlaceholder(v string) bool {
	l := strings.ToLower(v)
	switch {
	case strings.HasPrefix(v, "$"), strings.HasPrefix(v, "%"), strings.HasPrefix(v, "<") && strings.HasSuffix(v, ">"),
		strings.HasPrefix(v, "{{"), strings.Trim(l, "x*.-_") == "", strings.Contains(v, "..."), strings.Contains(v, "…"),
		strings.Contains(l, "your") && (strings.Contains(l, "key") || strings.Contains(l, "token")),
		l == "changeme", l == "password", l == "secret", l == "none", l == "null", l == "true", l == "false", l == "redacted":
		return true
	}
	return false
}

// looksLikeCode reports bare values that are expressions, not literals:
// os.environ["X"], getenv(...), self.password, cfg.APIKey.
func looksLikeCode(v string) bool {
	if strings.ContainsAny(v, "()[]") {
		return true
	}
	// dotted identifiers: a.b.c
	if strings.Contains(v, ".") {
		ident := true
		for _, part := range strings.Split(v, ".") {
			if !isIdent(part) {
				ident = false
				break
			}
		}
		if ident {
			return true
		}
	}
	return false
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

// looksRandom reports strings of at least minLen characters with the
// entropy and character mix of generated tokens. Plain identifiers
// (snake_case, camelCase words) and short hex are not random.
func looksRandom(v string, minLen int) bool {
	if len(v) < minLen {
		return false
	}
	var lower, upper, digit, other int
	for _, r := range v {
		switch {
		case r >= 'a' && r <= 'z':
			lower++
		case r >= 'A' && r <= 'Z':
			upper++
		case r >= '0' && r <= '9':
			digit++
		default:
			other++
		}
	}
	classes := 0
	for _, n := range []int{lower, upper, digit} {
		if n > 0 {
			classes++
		}
	}
	if classes < 2 || digit == 0 && other == 0 && isIdent(v) && !mixedCaseRun(v) {
		return false
	}
	return entropy(v) >= 3.0
}

// mixedCaseRun reports case changes inside runs, as in "aZ9kQ", rather than
// camelCase word starts.
func mixedCaseRun(v string) bool {
	changes := 0
	for i := 1; i < len(v); i++ {
		a, b := v[i-1], v[i]
		if (a >= 'a' && a <= 'z') && (b >= 'A' && b <= 'Z') {
			changes++
		}
	}
	return changes*4 > len(v)
}

// entropy is the Shannon entropy of s in bits per byte.
func entropy(s string) float64 {
	var counts [256]int
	for i := 0; i < len(s); i++ {
		counts[s[i]]++
	}
	var h float64
	n := float64(len(s))
	for _, c := range counts {
		if c > 0 {
			p := float64(c) / n
			h -= p * math.Log2(p)
		}
	}
	return h
}

// IsSecretPath reports whether a workspace-relative, slash-separated path
// names a file that must never be put into a prompt: .env files, keys and
// certificates with private parts, SSH keys, and credential files of common
// tools. An id_* file counts when it has no extension (id_rsa,
// id_ed25519), so source files such as id_generator.go stay visible.
// Public keys and certificates (id_rsa.pub, key.pub.pem, public.pem,
// cert.pem, *.crt) are ordinary files; a .pem or .key file with another
// name is judged by its contents when a snapshot is taken
// (agent.SnapshotOptions lets one holding only certificates in).
func IsSecretPath(rel string) bool {
	rel = strings.TrimPrefix(path.Clean("/"+strings.ReplaceAll(rel, "\\", "/")), "/")
	base := path.Base(rel)
	lower := strings.ToLower(base)
	ext := path.Ext(lower)
	for _, dir := range strings.Split(path.Dir(rel), "/") {
		switch dir {
		case ".ssh", ".gnupg", ".aws", ".azure", ".kube", ".password-store":
			return true
		}
	}
	switch {
	case lower == ".env" || strings.HasPrefix(lower, ".env.") || ext == ".env":
		return true
	case strings.HasPrefix(lower, "id_") && ext == "":
		return true // id_rsa, id_ed25519; not id_rsa.pub
	case publicKeyName(lower):
		return false
	}
	switch ext {
	case ".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".ppk", ".kdbx", ".tfvars", ".age":
		return true
	}
	switch lower {
	case ".netrc", "_netrc", ".npmrc", ".pypirc", ".git-credentials", ".pgpass", ".htpasswd", ".dockercfg",
		"credentials", "credentials.json", "credentials.yml", "credentials.yaml", "credentials.xml",
		"secrets.json", "secrets.yml", "secrets.yaml", "secrets.toml", "service-account.json",
		"application_default_credentials.json", "terraform.tfstate", ".vault-token", "auth.json":
		return true
	}
	if strings.Contains(lower, "secret") || strings.Contains(lower, "credential") {
		switch ext {
		case ".json", ".yml", ".yaml", ".toml", ".ini", ".txt", ".xml", ".cfg", ".conf", ".properties", "":
			return true // client_secret_….json, secrets.prod.yaml; not secret_handler.go
		}
	}
	return strings.HasSuffix(rel, ".docker/config.json")
}

// publicKeyName reports file names that say they hold public keys or
// certificates.
func publicKeyName(lower string) bool {
	switch ext := path.Ext(lower); {
	case ext == ".pub", ext == ".crt", ext == ".cer", ext == ".csr":
		return true
	case ext != ".pem":
		return false
	}
	stem := strings.TrimSuffix(lower, ".pem")
	for _, w := range []string{".pub", "_pub", "-pub", "public", "cert", "chain", "bundle"} {
		if strings.HasSuffix(stem, w) || strings.Contains(stem, w) && w != ".pub" && w != "_pub" && w != "-pub" {
			return true
		}
	}
	return stem == "ca" || strings.HasPrefix(stem, "ca-") || strings.HasPrefix(stem, "ca_")
}

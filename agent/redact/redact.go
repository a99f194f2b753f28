// Package redact keeps secrets out of prompts, run logs, memory records and
// LSP log messages.
//
// [String] masks values that look like API keys, tokens and private keys
// with [Mask]; [IsSecretPath] names files that are never put into prompts.
// Both err on the side of masking for well-known token shapes and of
// keeping ordinary code intact: git SHAs, UUIDs and hashes in code are not
// keys unless they are assigned to a key-like name.
package redact

import (
	"math"
	"path"
	"regexp"
	"strings"
)

// Mask replaces each secret.
const Mask = "[REDACTED]"

// tokenRE matches self-identifying tokens: the prefix says what they are.
var tokenRE = regexp.MustCompile(strings.Join([]string{
	`\bsk-(?:proj-|ant-(?:api\d\d-)?|or-v1-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`, // OpenAI, Anthropic, OpenRouter
	`\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}`,                                 // Stripe
	`\bgh[pousr]_[A-Za-z0-9]{30,}`,                                               // GitHub
	`\bgithub_pat_[A-Za-z0-9_]{22,}`,                                             // GitHub fine-grained
	`\bglpat-[A-Za-z0-9_-]{20,}`,                                                 // GitLab
	`\bxox[abposr]-[A-Za-z0-9-]{10,}`,                                            // Slack
	`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`,                                              // AWS access key id
	`\bAIza[0-9A-Za-z_-]{35}`,                                                    // Google API key
	`\bhf_[A-Za-z0-9]{30,}`,                                                      // Hugging Face
	`\bnpm_[A-Za-z0-9]{36}`,                                                      // npm
	`\bpypi-[A-Za-z0-9_-]{50,}`,                                                  // PyPI
	`\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`,         // JWT
}, "|"))

// bearerRE matches an Authorization header value.
var bearerRE = regexp.MustCompile(`(?i)\b(bearer|token|basic)(\s+)([A-Za-z0-9._~+/-]{16,}=*)`)

// pemRE matches a private key block, or its start when it is cut off.
var pemRE = regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----(?:[\s\S]*?-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----|[\s\S]*$)`)

// urlCredRE matches a password in a URL: scheme://user:password@host.
var urlCredRE = regexp.MustCompile(`\b([a-z][a-z0-9+.-]*://[^\s:/@]+:)([^\s@/]{3,})(@)`)

// assignRE matches key-like names assigned a value, in code, JSON, YAML,
// .env files, query strings and command lines. Group 1 is the name, group 3
// the value (quoted or bare).
var assignRE = regexp.MustCompile(`(?i)((?:[a-z0-9_.-]*?)(?:api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|client[_-]?secret|auth[_-]?token|access[_-]?token|refresh[_-]?token|secret|token|password|passwd|pwd|credentials?))(["']?\s*(?::=|=>|[:=])\s*)("[^"\n]*"|'[^'\n]*'|[^\s"',;&)}\]]+)`)

// strongNameRE: names whose values are secrets whatever they look like.
var strongNameRE = regexp.MustCompile(`(?i)(api[_-]?key|apikey|access[_-]?key|secret[_-]?key|private[_-]?key|client[_-]?secret|auth[_-]?token|access[_-]?token|refresh[_-]?token|password|passwd)$`)

// String returns s with secrets replaced by [Mask].
func String(s string) string {
	if s == "" {
		return s
	}
	s = pemRE.ReplaceAllString(s, Mask)
	s = tokenRE.ReplaceAllString(s, Mask)
	s = urlCredRE.ReplaceAllString(s, "${1}"+Mask+"${3}")
	s = bearerRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := bearerRE.FindStringSubmatch(m)
		if !looksRandom(sub[3], 16) {
			return m
		}
		return sub[1] + sub[2] + Mask
	})
	s = assignRE.ReplaceAllStringFunc(s, func(m string) string {
		sub := assignRE.FindStringSubmatch(m)
		name, sep, val := sub[1], sub[2], sub[3]
		inner, quote := unquote(val)
		if quote == "" && isIdent(inner) && !strings.ContainsAny(inner, "0123456789") {
			return m // a bare word is code (apiKey: string, password=password)
		}
		if !secretValue(name, inner) {
			return m
		}
		return name + sep + quote + Mask + quote
	})
	return s
}

func unquote(v string) (string, string) {
	if len(v) >= 2 && (v[0] == '"' || v[0] == '\'') && v[len(v)-1] == v[0] {
		return v[1 : len(v)-1], v[:1]
	}
	return v, ""
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
// tools. An id_* file counts when it has no extension or ".pub" (id_rsa,
// id_ed25519), so source files such as id_generator.go stay visible.
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
	case strings.HasPrefix(lower, "id_") && (ext == "" || ext == ".pub"):
		return true
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

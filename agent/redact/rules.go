package redact

import (
	"bytes"
	"regexp"
	"strings"
)

// Rule is one kind of credential, recognised by its content. [Rules] is
// the table; [String] masks every match of every rule, and [Detect] (what
// decides that a workspace file is a secret file) reports a match only when
// the secret passes the rule's Entropy and Validate checks and is not an
// allowed example value (see allowedValue).
//
// The rules follow gitleaks' default rule set (github.com/gitleaks/gitleaks,
// config/gitleaks.toml: the same rule ids, prefixes and, where it has them,
// entropy thresholds), cut down to the credentials a developer's workspace
// commonly holds. To add one, add a row: an id in gitleaks' spelling where
// gitleaks has the rule, the literals that must occur for the regular
// expression to run, and a test row (positive and near miss) in
// rules_test.go.
type Rule struct {
	ID          string // gitleaks-style rule id, shown to the user ("aws-access-token")
	Description string // what it finds, in words
	// Keywords are lower-case literals; a text is matched against Regex only
	// when its lower-cased form contains one of them.
	Keywords []string
	// Regex matches the credential. Its first group, when it has one, is
	// the secret (the rest is context such as the name it is assigned to);
	// otherwise the whole match is.
	Regex *regexp.Regexp
	// MultiLine rules match across lines and run on whole texts; the
	// others run line by line.
	MultiLine bool
	// Entropy is the least Shannon entropy (bits per byte) a secret needs
	// for Detect; 0 = none.
	Entropy float64
	// Validate, when set, is a further check Detect makes on the secret.
	Validate func(secret string) bool
}

// genericNames are the names a generic credential is assigned to
// (gitleaks' generic-api-key keywords).
const genericNames = `(?:password|passwd|pwd|secret|token|api[_.-]?key|apikey|access[_.-]?key|auth[_.-]?key|credentials?)`

// Rules is the rule table, most specific first: a text matching several
// rules is reported under the first. Its keywords are indexed when the
// package is initialised: extend the table here, never at run time.
var Rules = []*Rule{
	privateKey,
	{ID: "aws-access-token", Description: "AWS access key id", Keywords: []string{"akia", "asia", "abia", "acca", "a3t"}, Entropy: 3,
		Regex: regexp.MustCompile(`\b((?:A3T[A-Z0-9]|AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16})\b`)},
	{ID: "aws-secret-access-key", Description: "AWS secret access key", Keywords: []string{"aws", "amazon"}, Entropy: 3.5,
		Regex: regexp.MustCompile(`(?i)(?:aws|amazon)[\w.-]{0,20}secret[\w.-]{0,20}["'\x60]?\s*(?::=|=>|[:=])\s*["'\x60]?([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)`)},
	{ID: "github-fine-grained-pat", Description: "GitHub fine-grained token", Keywords: []string{"github_pat_"}, Entropy: 3,
		Regex: regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{22,}`)},
	{ID: "github-token", Description: "GitHub token (ghp_, gho_, ghu_, ghs_, ghr_)", Keywords: []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_"}, Entropy: 3,
		Regex: regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}`)},
	{ID: "gitlab-pat", Description: "GitLab personal access token", Keywords: []string{"glpat-"}, Entropy: 3,
		Regex: regexp.MustCompile(`\bglpat-[A-Za-z0-9_-]{20,}`)},
	{ID: "slack-webhook-url", Description: "Slack webhook URL", Keywords: []string{"hooks.slack.com"},
		Regex: regexp.MustCompile(`hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9+/]{43,56})`)},
	{ID: "slack-token", Description: "Slack token", Keywords: []string{"xox"}, Entropy: 2,
		Regex: regexp.MustCompile(`\bxox[abposre]-[A-Za-z0-9-]{10,}`)},
	{ID: "stripe-access-token", Description: "Stripe key", Keywords: []string{"sk_live_", "sk_test_", "sk_prod_", "rk_live_", "rk_test_", "rk_prod_"}, Entropy: 2,
		Regex: regexp.MustCompile(`\b(?:sk|rk)_(?:live|test|prod)_[A-Za-z0-9]{16,}`)},
	{ID: "gcp-api-key", Description: "Google API key", Keywords: []string{"aiza"}, Entropy: 3,
		Regex: regexp.MustCompile(`\bAIza[0-9A-Za-z_-]{35}`)},
	{ID: "anthropic-api-key", Description: "Anthropic API key", Keywords: []string{"sk-ant-"}, Entropy: 3,
		Regex: regexp.MustCompile(`\bsk-ant-(?:api\d\d-|admin\d\d-)?[A-Za-z0-9_-]{20,}`)},
	{ID: "openai-api-key", Description: "OpenAI-style API key (sk-…)", Keywords: []string{"sk-"}, Entropy: 3,
		Regex: regexp.MustCompile(`\bsk-(?:proj-|or-v1-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}`), Validate: mixedClasses},
	{ID: "huggingface-access-token", Description: "Hugging Face token", Keywords: []string{"hf_"}, Entropy: 3,
		Regex: regexp.MustCompile(`\bhf_[A-Za-z0-9]{30,}`), Validate: mixedClasses},
	{ID: "npm-access-token", Description: "npm token", Keywords: []string{"npm_"}, Entropy: 3,
		Regex: regexp.MustCompile(`\bnpm_[A-Za-z0-9]{36}`)},
	{ID: "pypi-upload-token", Description: "PyPI upload token", Keywords: []string{"pypi-"}, Entropy: 3,
		Regex: regexp.MustCompile(`\bpypi-[A-Za-z0-9_-]{50,}`)},
	{ID: "jwt", Description: "signed JSON web token", Keywords: []string{"eyj"}, Entropy: 3,
		Regex: regexp.MustCompile(`\beyJ[A-Za-z0-9_-]{10,}\.eyJ[A-Za-z0-9_-]{10,}\.[A-Za-z0-9_-]{10,}`)},
	// Detect only: String masks assignments with its own, broader scanner
	// (redactAssignments), which also knows weak names and code values.
	{ID: "generic-api-key", Description: "high-entropy value assigned to a password, secret, token or key name",
		Keywords: []string{"passw", "pwd", "secret", "token", "key", "credential"}, Entropy: 3.5,
		Regex:    regexp.MustCompile(`(?i)` + genericNames + `[\w.-]{0,20}["'\x60]?\s*(?::=|=>|==?|:)\s*["'\x60]?([A-Za-z0-9_./+=~@!#%^-]{12,150})(?:["'\x60\s;,)}\]]|$)`),
		Validate: genericValue},
}

// privateKey matches a PEM private key block, or its start when the text
// is cut off; String masks it across lines.
var privateKey = &Rule{ID: "private-key", Description: "private key", Keywords: []string{"private key"}, MultiLine: true,
	Regex:    regexp.MustCompile(`-----BEGIN[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----(?:[\s\S]*?-----END[ A-Z0-9_-]{0,100}PRIVATE KEY(?: BLOCK)?-----|[\s\S]*$)`),
	Validate: pemHasBody}

// maskedRule reports the rules String masks on each line with their regex.
func maskedRule(r *Rule) bool { return !r.MultiLine && r.ID != "generic-api-key" }

// Finding is one credential Detect found.
type Finding struct {
	Rule   *Rule
	Secret string // the value; never show it to anyone
}

// Detect returns the credentials in text that pass their rule's checks,
// at most limit of them (limit <= 0: all). It finds every rule's keywords
// in one pass over the text, then runs a rule's expression only on the
// lines (or, for a multi-line rule, the text) holding one of them.
func Detect(text string, limit int) []Finding {
	var out []Finding
	lower := asciiLower(text)
	hits := keywordHits(lower)
	for ri, r := range Rules {
		if len(hits[ri]) == 0 {
			continue
		}
		if r.MultiLine {
			for _, m := range r.Regex.FindAllStringSubmatch(text, -1) {
				if out = appendFinding(out, r, m); limit > 0 && len(out) >= limit {
					return out
				}
			}
			continue
		}
		lineEnd := -1
		for _, i := range hits[ri] {
			if i < lineEnd {
				continue // this line was matched already
			}
			start := strings.LastIndexByte(text[:i], '\n') + 1
			lineEnd = strings.IndexByte(text[i:], '\n')
			if lineEnd < 0 {
				lineEnd = len(text)
			} else {
				lineEnd += i
			}
			for _, m := range r.Regex.FindAllStringSubmatch(text[start:lineEnd], -1) {
				if out = appendFinding(out, r, m); limit > 0 && len(out) >= limit {
					return out
				}
			}
		}
	}
	return out
}

// keywordRef is one keyword of one rule.
type keywordRef struct {
	rule int
	word string
}

// keywordIndex finds the rules' keywords in one pass: by the keywords'
// first two bytes, with a bitmap of those pairs for the common case of
// no keyword at a position.
type keywordIndex struct {
	first [1 << 16 / 8]byte
	refs  map[uint16][]keywordRef
}

// keywords indexes every rule's keywords (Detect); maskKeywords those of
// the rules String masks line by line.
var keywords, maskKeywords = newKeywordIndex(Rules, nil), newKeywordIndex(Rules, maskedRule)

// newKeywordIndex indexes the keywords of the rules keep accepts (nil:
// all).
func newKeywordIndex(rules []*Rule, keep func(*Rule) bool) *keywordIndex {
	x := &keywordIndex{refs: map[uint16][]keywordRef{}}
	for ri, r := range rules {
		if keep != nil && !keep(r) {
			continue
		}
		for _, k := range r.Keywords {
			if len(k) < 2 {
				panic("redact: rule " + r.ID + ": keyword " + k + " is shorter than two bytes")
			}
			pair := uint16(k[0])<<8 | uint16(k[1])
			x.first[pair/8] |= 1 << (pair % 8)
			x.refs[pair] = append(x.refs[pair], keywordRef{ri, k})
		}
	}
	return x
}

// any reports whether one of x's keywords occurs in lower.
func (x *keywordIndex) any(lower string) bool {
	for i := 0; i+1 < len(lower); i++ {
		pair := uint16(lower[i])<<8 | uint16(lower[i+1])
		if x.first[pair/8]&(1<<(pair%8)) == 0 {
			continue
		}
		for _, ref := range x.refs[pair] {
			if strings.HasPrefix(lower[i:], ref.word) {
				return true
			}
		}
	}
	return false
}

// keywordHits returns, for each rule, the positions in lower where one of
// its keywords starts, in increasing order.
func keywordHits(lower string) [][]int {
	hits := make([][]int, len(Rules))
	for i := 0; i+1 < len(lower); i++ {
		pair := uint16(lower[i])<<8 | uint16(lower[i+1])
		if keywords.first[pair/8]&(1<<(pair%8)) == 0 {
			continue
		}
		for _, ref := range keywords.refs[pair] {
			if strings.HasPrefix(lower[i:], ref.word) {
				hits[ref.rule] = append(hits[ref.rule], i)
			}
		}
	}
	return hits
}

func appendFinding(out []Finding, r *Rule, m []string) []Finding {
	secret := m[0]
	if len(m) > 1 && m[1] != "" {
		secret = m[1]
	}
	if r.Entropy > 0 && entropy(secret) < r.Entropy || r.Validate != nil && !r.Validate(secret) || allowedValue(r, secret) {
		return out
	}
	return append(out, Finding{Rule: r, Secret: secret})
}

func hasAny(lower string, keywords []string) bool {
	for _, k := range keywords {
		if strings.Contains(lower, k) {
			return true
		}
	}
	return false
}

// stopwords mark values that stand for a credential in documentation and
// tests: AWS's documented example key pair (AKIAIOSFODNN7EXAMPLE,
// wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY) and gitleaks-style fakes.
var stopwords = []string{"example", "dummy", "fake", "sample", "placeholder", "changeme", "redacted", "xxxx", "your",
	"insecure", "notreal", "not-a-real", "not_a_real", "0000", "1234", "abcdef"}

// genericStopwords mark a generic value that names itself rather than
// being generated ("MyTestSecret-a1b2c3", "export-token-…",
// "generatedpassword1"): generated tokens hold no English words.
var genericStopwords = []string{"test", "secret", "password", "passwd", "token", "key", "mock", "demo"}

// allowedValue reports an example value: a secret that, with the rule's
// fixed prefix taken off, holds a stopword, or one character in more than
// half its places (ghp_aaaaaaaa…).
func allowedValue(r *Rule, secret string) bool {
	body := asciiLower(secret)
	for _, k := range r.Keywords {
		if strings.HasPrefix(body, k) && r.ID != "generic-api-key" {
			body = body[len(k):]
			break
		}
	}
	if hasAny(body, stopwords) || strings.Contains(secret, Mask) || r.ID == "generic-api-key" && hasAny(body, genericStopwords) {
		return true
	}
	var counts [256]int
	for i := 0; i < len(body); i++ {
		if counts[body[i]]++; counts[body[i]]*2 > len(body) && len(body) > 0 {
			return true
		}
	}
	return false
}

// pemHasBody: a key has at least 64 characters of base64 on the lines
// right after its header (Proc-Type and DEK-Info headers and blank lines
// aside), so that code or prose naming the header ("-----BEGIN RSA
// PRIVATE KEY-----" in a parser, or in a document about keys) is not a
// key.
func pemHasBody(block string) bool {
	// a key inside a JSON or code string has its newlines escaped
	// ("private_key": "-----BEGIN PRIVATE KEY-----\nMIIE…")
	block = strings.NewReplacer(`\r\n`, "\n", `\n`, "\n", "\r\n", "\n").Replace(block)
	i := strings.Index(block, "-----\n")
	if i < 0 {
		return false
	}
	n := 0
	for _, l := range strings.Split(block[i+6:], "\n") {
		l = strings.TrimSpace(l)
		switch {
		case l == "" || strings.Contains(l, ":"): // Proc-Type, DEK-Info headers
			continue
		case strings.HasPrefix(l, "-----END"), !isBase64(l):
			return n >= 64
		}
		n += len(l)
	}
	return n >= 64
}

func isBase64(s string) bool {
	for _, c := range []byte(s) {
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' || c == '=') {
			return false
		}
	}
	return true
}

// mixedClasses: tokens with a short prefix (sk-, hf_) are only random
// strings when they mix letters and digits, which words ("sk-learn-…")
// do not.
func mixedClasses(s string) bool {
	var letter, digit bool
	for _, c := range []byte(s[3:]) {
		letter = letter || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		digit = digit || c >= '0' && c <= '9'
	}
	return letter && digit
}

// uuidRE matches a UUID: an id (request, client token, resource), far more
// often than a credential.
var uuidRE = regexp.MustCompile(`^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$`)

// genericValue: what a generic assignment holds is a credential when it
// looks generated, not when it is code, a path, a word or a template.
func genericValue(v string) bool {
	switch {
	case isPlaceholder(v), looksLikeCode(v), uuidRE.MatchString(v), strings.Contains(v, "${"), strings.Contains(v, "{{"),
		strings.HasPrefix(v, "eyJ") && !strings.Contains(v, "."), // base64 JSON: a pagination token, not a JWT
		strings.HasPrefix(v, "/"), strings.HasPrefix(v, "./"), strings.Count(v, ".") > 2 && !strings.ContainsAny(v, "0123456789"):
		return false
	}
	if isHex(v) && len(v) < 32 {
		return false // a short hash or id; hex credentials are 32 characters or more
	}
	return looksRandom(v, 12)
}

func isHex(s string) bool {
	for _, c := range []byte(s) {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F') {
			return false
		}
	}
	return true
}

// Scanner detects a credential in a stream (a file being hashed): write
// the contents to it, then ask [Scanner.Finding]. It looks at windows of
// scanWindow bytes that overlap by scanOverlap, so a credential cut by a
// window boundary is still seen, and stops looking at binary contents (a
// NUL byte in the first window). The zero value is ready to use; a Scanner
// is not safe for concurrent use.
type Scanner struct {
	buf    []byte
	found  *Finding
	binary bool
	first  bool // the first window has been looked at
}

const (
	scanWindow  = 256 << 10
	scanOverlap = 8 << 10
)

// Write implements io.Writer; it never fails.
func (s *Scanner) Write(p []byte) (int, error) {
	n := len(p)
	if s.found != nil || s.binary {
		return n, nil
	}
	for len(p) > 0 {
		k := min(len(p), scanWindow-len(s.buf))
		s.buf = append(s.buf, p[:k]...)
		p = p[k:]
		if len(s.buf) == scanWindow {
			s.scan()
			if s.found != nil || s.binary {
				return n, nil
			}
			s.buf = append(s.buf[:0], s.buf[scanWindow-scanOverlap:]...)
		}
	}
	return n, nil
}

func (s *Scanner) scan() {
	if !s.first {
		s.first = true
		if bytes.IndexByte(s.buf[:min(len(s.buf), 8<<10)], 0) >= 0 {
			s.binary = true
			return
		}
	}
	if f := Detect(string(s.buf), 1); len(f) > 0 {
		s.found = &f[0]
	}
}

// Finding returns the first credential found in what was written, or nil.
func (s *Scanner) Finding() *Finding {
	if s.found == nil && !s.binary && len(s.buf) > 0 {
		s.scan()
		s.buf = s.buf[:0]
	}
	return s.found
}

package redact

import (
	"strings"
	"testing"
)

// Canaries in the shapes of real credentials; none is valid. Each rule has
// a positive case and a near miss that must not be detected.
const (
	detAWSID     = "AKIAQ3EGT7WZRJ5NXK2M"
	detAWSSecret = "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"
	detGHP       = "ghp_R7kq2Xw9Lm4Nv8Tz3Yb6Hc1Jd5Fs0Ga2Ku7E"
	detStripe    = "sk_live_4eC39HqLyjWDarjtT1zdp7dc"
	detOpenAI    = "sk-proj-Q7w2Er9Ty4Ui1Op8As3Df6Gh0Jk5Lz"
	detPEMBody   = "MIIEowIBAAKCAQEA7VJTUt9Us8cKjMzEfYyjiWA4R4/M2bS1GB4t7NXp98C3SC6d\nVMvDuictGeurT8jNbvJZHtCSuYEvuNMoSfm76oqFvAp8Gy0iz5sxjZmSnXyCdPEo\n"
)

func TestDetectRules(t *testing.T) {
	tests := []struct {
		name, text string
		rule       string // "" = nothing may be detected
		secret     string // when set, the finding's secret
	}{
		{"aws id", "key id " + detAWSID + " in notes", "aws-access-token", detAWSID},
		{"aws id: lower case is not one", "key id " + strings.ToLower(detAWSID), "", ""},
		{"aws id: too short", "AKIAQ3EGT7WZRJ5NXK2", "", ""},
		{"aws documented example id", "aws_access_key_id = AKIAIOSFODNN7EXAMPLE", "", ""},
		{"aws secret key", "aws_secret_access_key = " + detAWSSecret, "aws-secret-access-key", detAWSSecret},
		{"aws secret key quoted", `AWS_SECRET_ACCESS_KEY: "` + detAWSSecret + `"`, "aws-secret-access-key", detAWSSecret},
		{"aws documented example secret", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "", ""},
		{"aws secret: 39 characters is generic", "aws_secret_access_key = " + detAWSSecret[:39], "generic-api-key", ""},
		{"aws secret: from the environment", "aws_secret_access_key = ${AWS_SECRET_ACCESS_KEY}", "", ""},
		{"github classic", "token " + detGHP, "github-token", detGHP},
		{"github oauth", "gho_16C7e42F292c6912E7710c838347Ae178B4a", "github-token", ""},
		{"github: short", "ghp_R7kq2Xw9Lm4Nv8Tz3", "", ""},
		{"github: all x", "ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "", ""},
		{"github fine-grained", "github_pat_11QWERTZU0R7kq2Xw9Lm4_Nv8Tz3Yb6Hc1Jd5Fs0Ga2Ku7E", "github-fine-grained-pat", ""},
		{"github fine-grained: short", "github_pat_11ABCDEFG", "", ""},
		{"gitlab", "glpat-Xq7R2kP9wL4mN8vT3zYb", "gitlab-pat", ""},
		{"gitlab: short", "glpat-Xq7R2kP9wL4", "", ""},
		{"slack bot token", "xoxb-583920174635-7203918465027-Qw7Er2Ty9Ui4Op1As8Df3Gh6", "slack-token", ""},
		{"slack: word", "xoxb-", "", ""},
		{"slack webhook", "https://hooks.slack.com/services/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", "slack-webhook-url", "T0AAAAAAA/B0BBBBBBB/Q7w2Er9Ty4Ui1Op8As3Df6Gh"},
		{"slack webhook: docs page", "https://api.slack.com/messaging/webhooks", "", ""},
		{"stripe live", "Stripe.api_key = '" + detStripe + "'", "stripe-access-token", detStripe},
		{"stripe test mode is a key too", "sk_test_4eC39HqLyjWDarjtT1zdp7dc", "stripe-access-token", ""},
		{"stripe: placeholder", "sk_test_your_key_here_xxxxxxxxxxxx", "", ""},
		{"google api key", "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW", "gcp-api-key", ""},
		{"google: short", "AIzaSyA1b2C3d4", "", ""},
		{"openai project key", "OPENAI_API_KEY=" + detOpenAI, "openai-api-key", detOpenAI},
		{"openai: words", "sk-learn-is-a-library-for-machine-learning", "", ""},
		{"anthropic", "sk-ant-api03-Q7w2Er9Ty4Ui1Op8As3Df6Gh0Jk5Lz", "anthropic-api-key", ""},
		{"anthropic: short", "sk-ant-api03-Q7w2", "", ""},
		{"private key", "-----BEGIN RSA PRIVATE KEY-----\n" + detPEMBody + "-----END RSA PRIVATE KEY-----\n", "private-key", ""},
		{"openssh private key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQAAAAAAAAABAAAAMwAAAAtzc2gtZW\nQyNTUxOQAAACDk1xq\n-----END OPENSSH PRIVATE KEY-----", "private-key", ""},
		{"private key in a JSON string (a GCP service account)", `{"type": "service_account", "private_key": "-----BEGIN PRIVATE KEY-----\n` +
			strings.ReplaceAll(detPEMBody, "\n", `\n`) + `-----END PRIVATE KEY-----\n", "client_email": "x@y.iam.gserviceaccount.com"}`, "private-key", ""},
		{"private key: a parser names the header", `if strings.HasPrefix(s, "-----BEGIN RSA PRIVATE KEY-----") {` + "\n\treturn parse(s)\n}", "", ""},
		{"private key: a document about keys", "# Keys\n\nA key file starts with\n\n-----BEGIN RSA PRIVATE KEY-----\n\nand is followed by its base64 body and the matching end line, which we do not show here.\n", "", ""},
		{"private key: encrypted, with headers", "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,3F17F5316E2BAC89\n\n" + detPEMBody + "-----END RSA PRIVATE KEY-----\n", "private-key", ""},
		{"public key is not secret", "-----BEGIN PUBLIC KEY-----\n" + detPEMBody + "-----END PUBLIC KEY-----\n", "", ""},
		{"certificate is not secret", "-----BEGIN CERTIFICATE-----\n" + detPEMBody + "-----END CERTIFICATE-----\n", "", ""},
		{"jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk", "jwt", ""},
		{"jwt without signature", "eyJhbGciOiJub25lIn0.eyJzdWIiOiIxMjM0NTY3ODkwIn0.", "", ""},
		{"npm", "//registry.npmjs.org/:_authToken=npm_Q7w2Er9Ty4Ui1Op8As3Df6Gh0Jk5LzXc3VbNm", "npm-access-token", ""},
		{"npm: short", "npm_Q7w2Er9Ty4Ui", "", ""},
		{"pypi", "password = pypi-AgEIcHlwaS5vcmcCJDQ3ZTc2Q7w2Er9Ty4Ui1Op8As3Df6Gh0Jk5LzXc3VbNm", "pypi-upload-token", ""},
		{"pypi: short", "pypi-AgEIcHlwaS5vcmc", "", ""},
		{"generic password", `db_password = "Xq7#R2kP9wL4mN8v"`, "generic-api-key", "Xq7#R2kP9wL4mN8v"},
		{"generic token in yaml", "  auth_token: Zr8Kp2Lq9Xw3Nv7Tb4Mc", "generic-api-key", "Zr8Kp2Lq9Xw3Nv7Tb4Mc"},
		{"generic: environment lookup", `password = os.environ["DB_PASSWORD"]`, "", ""},
		{"generic: low entropy", `password = "aaaaaaaabbbbbbbb"`, "", ""},
		{"generic: test fixture word", `api_key = "test-api-key-12345"`, "", ""},
		{"generic: identifier", `token = "access_token_refresh_handler"`, "", ""},
		{"generic: template", `secret: "${VAULT_SECRET_VALUE_1}"`, "", ""},
		{"generic: names itself", `SecretId: "MyTestSecret-a1b2c3"`, "", ""},
		{"generic: short hex id", `"AWS::IAM::AccessKey": "62d91b17309e76c8"`, "", ""},
		{"generic: long hex secret", `client_secret = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b"`, "generic-api-key", ""},
		{"generic: pagination token", `"NextToken": "eyJOZXh0VG9rZW4iOiBudWxsLCAiYm90b190cnVuY2F0ZV9hbW91bnQiOiAyfQ=="`, "", ""},
		{"generic: uuid", `"ClientToken": "9f4d9f69-275a-41fe-b58e-2b837bd9ba48"`, "", ""},
		{"generic: expression", "tokens = 2*maxCompilerConcurrency", "", ""},
		{"generic: no keyword name", `digest = "Xq7R2kP9wL4mN8vTz3Yb"`, "", ""},
		{"generic: django insecure key", `SECRET_KEY = 'django-insecure-q7w2#er9ty4ui1op8as3df6'`, "", ""},
		{"git sha", "commit 3f786850e387550fdab836ed7e6dc881de23001b", "", ""},
		{"uuid", `id = "123e4567-e89b-12d3-a456-426614174000"`, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Detect(tt.text, 0)
			if tt.rule == "" {
				if len(got) != 0 {
					t.Fatalf("Detect(%q) = %s %q, want nothing", tt.text, got[0].Rule.ID, got[0].Secret)
				}
				return
			}
			if len(got) == 0 {
				t.Fatalf("Detect(%q) = nothing, want %s", tt.text, tt.rule)
			}
			if got[0].Rule.ID != tt.rule {
				t.Errorf("Detect(%q) rule = %s, want %s", tt.text, got[0].Rule.ID, tt.rule)
			}
			if tt.secret != "" && got[0].Secret != tt.secret {
				t.Errorf("Detect(%q) secret = %q, want %q", tt.text, got[0].Secret, tt.secret)
			}
			if masked := String(tt.text); strings.Contains(masked, got[0].Secret) && tt.rule != "generic-api-key" {
				t.Errorf("String(%q) = %q keeps the secret", tt.text, masked)
			}
		})
	}
}

// TestRulesTable: every rule has an id, keywords in lower case that its
// regular expression needs, and a row in TestDetectRules.
func TestRulesTable(t *testing.T) {
	ids := map[string]bool{}
	for _, r := range Rules {
		if r.ID == "" || r.Description == "" || r.Regex == nil || len(r.Keywords) == 0 {
			t.Errorf("rule %+v is incomplete", r)
		}
		if ids[r.ID] {
			t.Errorf("rule id %s twice", r.ID)
		}
		ids[r.ID] = true
		for _, k := range r.Keywords {
			if k != strings.ToLower(k) {
				t.Errorf("rule %s: keyword %q is not lower case", r.ID, k)
			}
		}
	}
}

func TestScannerAcrossWindows(t *testing.T) {
	filler := strings.Repeat("x = 1\n", scanWindow/6)
	tests := []struct {
		name string
		data string
		want string
	}{
		{"at the start", detAWSID + "\n" + filler, "aws-access-token"},
		{"cut by the first window", filler[:scanWindow-10] + " " + detAWSID + "\n" + filler, "aws-access-token"},
		{"at the very end", filler + filler + detGHP, "github-token"},
		{"none", filler + filler, ""},
		{"binary", "\x00\x01" + detAWSID, ""},
	}
	for _, tt := range tests {
		for _, chunk := range []int{1 << 10, 64 << 10, len(tt.data)} {
			var s Scanner
			for p := tt.data; len(p) > 0; {
				k := min(chunk, len(p))
				s.Write([]byte(p[:k]))
				p = p[k:]
			}
			got := ""
			if f := s.Finding(); f != nil {
				got = f.Rule.ID
			}
			if got != tt.want {
				t.Errorf("%s, chunks of %d: Finding = %q, want %q", tt.name, chunk, got, tt.want)
			}
		}
	}
}

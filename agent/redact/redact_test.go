package redact

import (
	"strings"
	"testing"
)

// Canaries: fake secrets in the shapes real ones have. None is valid.
const (
	openaiKey  = "sk-abcDEF1234567890ghijKLMNOP"
	projKey    = "sk-proj-Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z_-Q7"
	antKey     = "sk-ant-api03-AbCdEf0123456789GhIjKlMnOpQrStUv"
	ghToken    = "ghp_0123456789abcdefABCDEF0123456789abcd"
	ghoToken   = "gho_16C7e42F292c6912E7710c838347Ae178B4a"
	ghPAT      = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyzABCDEFG"
	slackToken = "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"
	awsKey     = "AKIAIOSFODNN7EXAMPLE"
	awsTempKey = "ASIAY34FZKBOKMUTVV7A" // an STS temporary access key id
	awsSecret  = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
	jwt        = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dBjftJeZ4CVPmB92K27uhbUJU1p1r_wW1gFWFOEjXk"
	googleKey  = "AIzaSyA1234567890abcdefghijklmnopqrstuv"
	randomTok  = "q8Fz3LmN0pR7sT2vW9xY4bC6dE1gH5jK"
)

func TestStringMasksSecrets(t *testing.T) {
	tests := []struct {
		name, in, canary, want string // want: a substring that must remain
	}{
		{"openai key in prose", "my key is " + openaiKey + " ok", openaiKey, "my key is [REDACTED] ok"},
		{"project key", "OPENAI_API_KEY=" + projKey, projKey, "OPENAI_API_KEY="},
		{"anthropic key", `client = Anthropic(api_key="` + antKey + `")`, antKey, "client = Anthropic("},
		{"github token", "git clone https://" + ghToken + "@github.com/x/y", ghToken, "github.com/x/y"},
		{"github oauth", "token: " + ghoToken, ghoToken, "token: "},
		{"github pat", ghPAT, ghPAT, ""},
		{"slack", "SLACK=" + slackToken, slackToken, "SLACK="},
		{"aws access key", "aws_access_key_id = " + awsKey, awsKey, "aws_access_key_id"},
		{"aws temporary key in prose", "session started with " + awsTempKey + " until noon", awsTempKey, "session started with [REDACTED] until noon"},
		{"aws temporary key id", "aws_access_key_id = " + awsTempKey, awsTempKey, "aws_access_key_id"},
		{"aws secret", "aws_secret_access_key = " + awsSecret, awsSecret, "aws_secret_access_key = [REDACTED]"},
		{"jwt", "cookie: session=" + jwt, jwt, "cookie: session="},
		{"google", "key=" + googleKey, googleKey, ""},
		{"bearer header", "Authorization: Bearer " + randomTok, randomTok, "Authorization: Bearer [REDACTED]"},
		{"json api_key", `{"api_key": "a1b2c3d4e5", "model": "gpt-4o"}`, "a1b2c3d4e5", `"model": "gpt-4o"`},
		{"yaml password", "db:\n  password: hunter2hunter\n  user: app", "hunter2hunter", "user: app"},
		{"python password", `PASSWORD = 'Tr0ub4dor&3'`, "Tr0ub4dor&3", "PASSWORD = '[REDACTED]'"},
		{"go const", `const apiKey = "live_8f7d6c5b4a39281706"`, "live_8f7d6c5b4a39281706", "const apiKey = \"[REDACTED]\""},
		{"env token", "GITHUB_TOKEN=" + randomTok, randomTok, "GITHUB_TOKEN="},
		{"env password", "DB_PASSWORD=hunter22", "hunter22", "DB_PASSWORD=[REDACTED]"},
		{"query string", "https://api.example.com/v1?token=" + randomTok + "&page=2", randomTok, "&page=2"},
		{"secret flag", "deploy --secret=" + randomTok, randomTok, "deploy --secret="},
		{"url password", "postgres://app:s3cr3tP4ss@db:5432/app", "s3cr3tP4ss", "postgres://app:[REDACTED]@db:5432/app"},
		{"pem", "x\n-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7V\nabc\n-----END RSA PRIVATE KEY-----\ny", "MIIEowIBAAKCAQEA7V", "x\n[REDACTED]\ny"},
		{"pem cut off", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA", "b3BlbnNzaC1rZXktdjEAAAAA", ""},
		{"two keys", openaiKey + " and " + ghToken, ghToken, " and "},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := String(tt.in)
			if strings.Contains(got, tt.canary) {
				t.Errorf("String(%q) = %q still contains the canary", tt.in, got)
			}
			if !strings.Contains(got, Mask) {
				t.Errorf("String(%q) = %q has no mask", tt.in, got)
			}
			if !strings.Contains(got, tt.want) {
				t.Errorf("String(%q) = %q, want it to keep %q", tt.in, got, tt.want)
			}
			if again := String(got); again != got {
				t.Errorf("String is not idempotent: %q then %q", got, again)
			}
		})
	}
}

func TestStringKeepsOrdinaryText(t *testing.T) {
	keep := []string{
		"commit 3f786850e387550fdab836ed7e6dc881de23001b",
		"git checkout 9fceb02d0ae598e95dc970b74767f19372d61af8",
		`id = "123e4567-e89b-12d3-a456-426614174000"`,
		`user_id: 550e8400-e29b-41d4-a716-446655440000`,
		"sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
		`password = os.environ["DB_PASSWORD"]`,
		`api_key = os.getenv("OPENAI_API_KEY")`,
		`apiKey := cfg.Model.APIKey`,
		`token = request.headers.get("X-Token")`,
		`password: ${DB_PASSWORD}`,
		`OPENAI_API_KEY=<your-api-key>`,
		`api_key = "sk-..."`,
		`token_type = "bearer"`,
		`if password == "":`,
		`def check_password(password):`,
		`max_tokens=1024`,
		"the tokenizer splits text into tokens",
		"func (t *Token) String() string { return t.text }",
		`secret = "shh"`,
		`token = "access_token_refresh_handler"`,
		"Authorization: Bearer $TOKEN",
		"ask-me-anything-about-this-component-please",
		"https://example.com/path?page=2&sort=desc",
		"sk-learn is a library",
		"interface Config { apiKey: string; token: string }",
		"def login(username: str, password: str) -> bool:",
		"client = Client(api_key=api_key, token=token)",
		"api_key: Optional[str] = None",
		`APIKey string ` + "`json:\"api_key\" toml:\"api_key\"`",
	}
	for _, s := range keep {
		if got := String(s); got != s {
			t.Errorf("String(%q) = %q, want it unchanged", s, got)
		}
	}
}

func TestIsSecretPath(t *testing.T) {
	tests := []struct {
		path string
		want bool
	}{
		{".env", true},
		{".env.local", true},
		{"config/.env.production", true},
		{"prod.env", true},
		{"certs/server.pem", true},
		{"tls/server.key", true},
		{"keys/client.p12", true},
		{"id_rsa", true},
		{"deploy/id_ed25519", true},
		{"id_ecdsa.pub", false},
		{"tests/fixtures/signing.pub.pem", false},
		{"keys/server_pub.pem", false},
		{"keys/public.pem", false},
		{"tls/cert.pem", false},
		{"tls/fullchain.pem", false},
		{"tls/ca.pem", false},
		{"tls/server.crt", false},
		{"tls/server.cer", false},
		{"tls/privkey.pem", true},
		{"keys/signing.pem", true},
		{"keys/pubsub.key", true},
		{"home/.ssh/config", true},
		{".aws/credentials", true},
		{"credentials", true},
		{".netrc", true},
		{".npmrc", true},
		{".pypirc", true},
		{".git-credentials", true},
		{".docker/config.json", true},
		{"infra/prod.tfvars", true},
		{"client_secret_1234.apps.googleusercontent.com.json", true},
		{"deploy/secrets.prod.yaml", true},
		{"gcp-credentials.json", true},
		{"main.go", false},
		{"auth/secret_handler.go", false},
		{"tests/test_credentials.py", false},
		{"src/id_generator.go", false},
		{"id_test.py", false},
		{"envelope.go", false},
		{"environment.py", false},
		{"keyboard.ts", false},
		{"docs/keys.md", false},
		{"src/token.go", false},
		{"package.json", false},
		{"config.json", false},
	}
	for _, tt := range tests {
		if got := IsSecretPath(tt.path); got != tt.want {
			t.Errorf("IsSecretPath(%q) = %v, want %v", tt.path, got, tt.want)
		}
	}
}

func FuzzString(f *testing.F) {
	f.Add("Authorization: Bearer " + randomTok)
	f.Add(`{"api_key": "a1b2c3d4e5"}`)
	f.Add("-----BEGIN PRIVATE KEY-----\nabc")
	f.Fuzz(func(t *testing.T, s string) {
		got := String(s)
		if again := String(got); again != got {
			t.Fatalf("not idempotent: %q → %q → %q", s, got, again)
		}
		for _, canary := range []string{openaiKey, ghToken, awsKey} {
			if strings.Contains(s, " "+canary+" ") && strings.Contains(got, canary) {
				t.Fatalf("canary %q survived in %q", canary, got)
			}
		}
	})
}

package policy

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/config"
)

// TestRuleActionsExact: a rule's action is block, warn or off, exactly.
// Any other spelling ("Block", "BLOCK", "block ") is refused, by the
// configuration loader and by New, naming the rule; and what loads as
// block blocks.
func TestRuleActionsExact(t *testing.T) {
	src := []byte("import subprocess\n")
	load := func(action string) (*config.Config, error) {
		user := filepath.Join(t.TempDir(), "config.toml")
		text := "[policy.rules]\n\"python.subprocess\" = \"" + action + "\"\n"
		if err := os.WriteFile(user, []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
		return config.Load(config.LoadOptions{UserFile: user, Getenv: func(string) string { return "" }})
	}
	for _, a := range []string{"Block", "BLOCK", "block ", " block", "Warn", "OFF", "deny", ""} {
		if _, err := load(a); !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), "policy.rules.python.subprocess") {
			t.Errorf("Load(action %q) = %v, want ErrInvalid naming policy.rules.python.subprocess", a, err)
		}
		if _, err := New(config.Policy{Rules: map[string]string{"python.subprocess": a}}, nil); !errors.Is(err, config.ErrInvalid) || !strings.Contains(err.Error(), "python.subprocess") {
			t.Errorf("New(action %q) = %v, want ErrInvalid naming the rule", a, err)
		}
	}
	for _, tt := range []struct {
		action  string
		blocked int
		all     int
	}{{"block", 1, 1}, {"warn", 0, 1}, {"off", 0, 0}} {
		cfg, err := load(tt.action)
		if err != nil {
			t.Fatalf("Load(action %q) = %v", tt.action, err)
		}
		c, err := New(cfg.Policy, nil)
		if err != nil {
			t.Fatalf("New(action %q) = %v", tt.action, err)
		}
		fs, err := c.Check(t.Context(), "x.py", src)
		if err != nil {
			t.Fatal(err)
		}
		if len(fs) != tt.all || len(fs.Blocked()) != tt.blocked {
			t.Errorf("action %q: findings %v; want %d, %d blocked", tt.action, fs, tt.all, tt.blocked)
		}
	}
}

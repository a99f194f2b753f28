package golang

import (
	"strings"
	"testing"

	"github.com/fixpoint-dev/fixpoint/lang"
)

// os imported under another name is still os (held-out mutation audit).
func TestPolicyRenamedOS(t *testing.T) {
	src := "package p\n\nimport xos \"os\"\n\nfunc init() {\n\txos.Exit(0)\n}\n\nfunc Clean() { xos.RemoveAll(\"/\") }\n"
	fs, err := Language{}.CheckPolicy(t.Context(), "p/p.go", []byte(src), lang.PolicyOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var rules []string
	for _, f := range fs {
		rules = append(rules, f.Rule)
	}
	got := strings.Join(rules, " ")
	if !strings.Contains(got, "go.init-exit") {
		t.Errorf("findings %q: want go.init-exit for xos.Exit in init", got)
	}
}

